/**
 * Which way imports may point (AGENTS.md, "Dependencies point one way"), checked by
 * `npm run deps` in `npm run check` and CI. Read `A ← B` as "B may import A":
 *
 *   packages/protocol ← src/domain ← src/storage, src/account ← src/workflow ← src/mcp, src/pages ← src/index.ts
 *
 * The Worker side (src/index.ts, src/routes, src/http, src/mcp, src/pages, src/oauth, src/signing.ts)
 * sits above the two Durable Objects (src/workflow, src/account), which sit above the pure rules
 * (src/domain) and the shared base (src/crypto.ts, errors.ts, ids.ts, iso-time.ts, limits.ts,
 * stubs.ts). An object reaches the other only through its RPC binding: the workflow object may
 * import the account object's types, never its code, and so may the Worker side; the account
 * object imports nothing of the workflow object's.
 */

/** The Worker's own code: HTTP routes, middleware, the MCP endpoint, pages, OAuth. */
const WORKER_SIDE = "^src/(index\\.ts|signing\\.ts|routes/|http/|mcp/|pages/|oauth/)";
/** The files every layer may import. */
const BASE = "^src/(crypto|errors|ids|iso-time|limits|meter|stubs)\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A cycle ties modules into one: split out what both sides need.",
      from: { path: "^(src|packages|client-helper/src)/" },
      to: { circular: true },
    },
    {
      name: "src-not-to-test",
      severity: "error",
      comment: "Tests and benches may import the code they check; the code never imports them.",
      from: { path: "^(src|packages/protocol/src|client-helper/src)/" },
      to: { path: "^(test|bench|client-helper/test)/" },
    },
    {
      name: "support-not-to-bench",
      severity: "error",
      comment: "Benches import the test harness (test/support), never the reverse.",
      from: { path: "^test/" },
      to: { path: "^bench/" },
    },
    {
      name: "protocol-stands-alone",
      severity: "error",
      comment: "packages/protocol is the contract both sides import: it imports neither of them.",
      from: { path: "^packages/protocol/" },
      to: { path: "^(src|client-helper|test|bench)/" },
    },
    {
      name: "protocol-runs-everywhere",
      severity: "error",
      comment: "packages/protocol runs in the Worker and in the helper: no Cloudflare modules, no Node module but node:crypto.",
      from: { path: "^packages/protocol/" },
      to: { dependencyTypes: ["core"], pathNot: "^(node:)?crypto$" },
    },
    {
      name: "protocol-without-cloudflare",
      severity: "error",
      comment: "packages/protocol runs in the Worker and in the helper: no Cloudflare runtime modules.",
      from: { path: "^packages/protocol/" },
      to: { path: "^cloudflare:" },
    },
    {
      name: "views-are-types-at-run-time",
      severity: "error",
      comment:
        "The read model's zod schemas (packages/protocol/src/views) are for what parses (tests, scripts/schemas.mjs): the Worker, the helper and the rest of the protocol import their types only, so the Worker builds views without loading their schemas and the helper bundles no zod. Run-time values go in zod-free modules (export-members.ts, cost.ts).",
      from: { path: "^(src|client-helper/src|packages/protocol/src)/", pathNot: "^packages/protocol/src/views/" },
      to: { path: "^packages/protocol/src/views/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "helper-imports-only-protocol",
      severity: "error",
      comment: "The helper ships alone (npm pack): of this repository it bundles only packages/protocol.",
      from: { path: "^client-helper/src/" },
      to: { path: "^(src|test|bench)/" },
    },
    {
      name: "base-imports-only-base",
      severity: "error",
      comment: "The base (crypto, errors, ids, iso-time, limits, meter, stubs) is imported by every layer, so it imports no other layer.",
      from: { path: BASE },
      to: { path: "^src/", pathNot: BASE },
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "src/domain is pure rules: it imports the protocol and the base, no storage, object or Worker code.",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: [BASE, "^src/domain/"] },
    },
    {
      name: "domain-without-cloudflare",
      severity: "error",
      comment: "src/domain runs anywhere (tests, benches): no Cloudflare runtime modules.",
      from: { path: "^src/domain/" },
      to: { path: "^cloudflare:" },
    },
    {
      name: "storage-below-objects",
      severity: "error",
      comment: "src/storage is the SQL plumbing both objects share.",
      from: { path: "^src/storage/" },
      to: { path: "^src/", pathNot: [BASE, "^src/(domain|storage)/"] },
    },
    {
      name: "account-object-stands-alone",
      severity: "error",
      comment:
        "The account object's code imports no Worker code and nothing of the workflow object: it reaches workflow objects through their RPC binding only.",
      from: { path: "^src/account/" },
      to: { path: "^src/", pathNot: [BASE, "^src/(domain|storage|account)/"] },
    },
    {
      name: "workflow-object-below-worker",
      severity: "error",
      comment: "The workflow object's code imports no Worker code (routes, middleware, MCP, pages, OAuth).",
      from: { path: "^src/workflow/" },
      to: { path: WORKER_SIDE },
    },
    {
      name: "workflow-reaches-account-by-rpc",
      severity: "error",
      comment: "The workflow object talks to the account object through its RPC binding: it may import its types, not its code.",
      from: { path: "^src/workflow/" },
      to: { path: "^src/account/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "worker-reaches-account-by-rpc",
      severity: "error",
      comment:
        "The Worker (routes, middleware, OAuth, MCP, pages) talks to the account object through its RPC binding: it may import its types, not its code; what both parse (credentials, the managed token format) lives in src/domain. src/index.ts exports the object's class, and only that.",
      from: { path: WORKER_SIDE },
      to: { path: "^src/account/", pathNot: "^src/account/account-object\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "only-the-app-exports-the-account-object",
      severity: "error",
      comment: "src/index.ts exports the AccountObject class to the runtime; the rest of the Worker imports its types only.",
      from: { path: WORKER_SIDE, pathNot: "^src/index\\.ts$" },
      to: { path: "^src/account/account-object\\.ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "middleware-below-routes",
      severity: "error",
      comment: "src/http is the middleware every route uses: it imports no route, page, tool or OAuth module.",
      from: { path: "^src/http/" },
      to: { path: "^src/(index\\.ts|routes/|mcp/|pages/|oauth/)" },
    },
    {
      name: "pages-render-only",
      severity: "error",
      comment: "src/pages renders; the routes that serve it (src/routes) and the MCP endpoint are above it.",
      from: { path: "^src/pages/" },
      to: { path: "^src/(index\\.ts|routes/|mcp/|oauth/)" },
    },
    {
      name: "mcp-beside-pages",
      severity: "error",
      comment:
        "The MCP endpoint and the pages are siblings under src/index.ts: neither imports the other. The review app (mcp/app.ts) is the one exception: it renders the page's own blocks inside the chat client, through the pages' renderers, so its HTML is the page's.",
      from: { path: "^src/mcp/", pathNot: "^src/mcp/app\\.ts$" },
      to: { path: "^src/(index\\.ts|routes/|pages/)" },
    },
    {
      name: "nothing-imports-the-app",
      severity: "error",
      comment: "src/index.ts assembles the Worker; nothing in src imports it.",
      from: { path: "^src/" },
      to: { path: "^src/index\\.ts$" },
    },
  ],
  options: {
    parser: "swc",
    exclude: { path: "^(src/worker-configuration\\.d\\.ts|client-helper/dist/|build/)" },
    doNotFollow: { path: "node_modules" },
    // @waymark/protocol/* resolves through the workspace link to packages/protocol/src/*.ts.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".d.ts", ".js", ".mjs", ".cjs", ".json"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
