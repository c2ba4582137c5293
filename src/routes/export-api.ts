/**
 * @module routes/export-api
 * What auditors and CI read, besides the signing keys (./signing-keys):
 *   GET /schemas/export-v1.json         the JSON export's JSON Schema (2020-12), public and cacheable
 *   GET /schemas/policy-v1.json         the JSON Schema of a repository's `.waymark/policy.yml` (what `waymark ci` enforces)
 *   GET /api/workflows/:id/export.json  the signed JSON export; bearer token or session (read)
 *   GET /api/workflows/:id/export.md    the Markdown export; bearer token or session (read)
 *   GET /api/workflows/:id/export.agent-trace.json  one Agent Trace record per task that committed work
 *                                       (what `waymark trace` reads); bearer token or session (read)
 * The exports are the owner's documents (the same reads and renderers as /w/:id/export.*),
 * charged to EXPORT_LIMITER per account: a script reads the whole workflow each time.
 */

import { POLICY_SCHEMA_PATH } from "@waymark/protocol/policy";
import { type Context, Hono } from "hono";
import exportSchema from "../../docs/schemas/export-v1.json";
import policySchema from "../../docs/schemas/policy-v1.json";
import { apiError, RETRY_HEADERS } from "../http/api-errors";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { isWorkflowId } from "../ids";
import { agentTraceExport } from "../pages/export-agent-trace";
import { EXPORT_SCHEMA_PATH, exportSigning, jsonExport } from "../pages/export-json";
import { markdownExport, signingNote } from "../pages/markdown";
import { textStream } from "../pages/text-stream";
import { workflowStub } from "../stubs";

export const exportApiRoutes = new Hono<AppEnv>();

for (const [path, schema] of [
  [EXPORT_SCHEMA_PATH, exportSchema],
  [POLICY_SCHEMA_PATH, policySchema],
] as const) {
  exportApiRoutes.get(path, (c) => {
    c.header("Cache-Control", "public, max-age=3600");
    c.header("Content-Type", "application/schema+json");
    return c.body(JSON.stringify(schema, null, 2));
  });
}

const reader = requireAccount({ bearer: true, session: true, otherwise: "json", action: "workflow.read" });

const TRACE_PATH = "/api/workflows/:id/export.agent-trace.json";

for (const path of ["/api/workflows/:id/export.json", "/api/workflows/:id/export.md", TRACE_PATH])
  exportApiRoutes.use(path, noStore, dataHeaders, reader);

/** The export's start: within the account's export budget, the head of a workflow it owns; or the answer to give instead. */
async function ownedHead(c: Context<AppEnv>) {
  const id = c.req.param("id") ?? "";
  const account = c.var.account;
  const budget = await c.env.EXPORT_LIMITER?.limit({ key: `account:${account}` });
  if (budget && !budget.success) {
    return { response: apiError(c, "RATE_LIMITED", "too many exports by this account; wait a minute and retry", RETRY_HEADERS) };
  }
  const missing = () => apiError(c, "NOT_FOUND", `workflow_id: no workflow ${id} in this account`);
  if (!isWorkflowId(id)) return { response: missing() };
  const stub = workflowStub(c.env, id);
  const head = await stub.readHead(account, true);
  if (!head.ok) return { response: head.code === "NOT_FOUND" ? missing() : apiError(c, head.code, head.message) };
  return { stub, head: head.value, origin: new URL(c.req.url).origin };
}

exportApiRoutes.get("/api/workflows/:id/export.json", async (c) => {
  const owned = await ownedHead(c);
  if ("response" in owned) return owned.response;
  const body = jsonExport(owned.stub, c.var.account, owned.head, exportSigning(c.env, owned.origin));
  return c.body(textStream(body), 200, { "Content-Type": "application/json; charset=utf-8" });
});

exportApiRoutes.get("/api/workflows/:id/export.md", async (c) => {
  const owned = await ownedHead(c);
  if ("response" in owned) return owned.response;
  const body = markdownExport(owned.stub, c.var.account, owned.head, await signingNote(c.env, owned.origin));
  return c.body(textStream(body), 200, { "Content-Type": "text/markdown; charset=utf-8" });
});

/** Each record's `related` link is the task on the owner's page. */
exportApiRoutes.get(TRACE_PATH, async (c) => {
  const owned = await ownedHead(c);
  if ("response" in owned) return owned.response;
  const body = agentTraceExport(owned.stub, c.var.account, owned.head, `${owned.origin}/w/${owned.head.workflow.id}`);
  return c.body(textStream(body), 200, { "Content-Type": "application/json; charset=utf-8" });
});
