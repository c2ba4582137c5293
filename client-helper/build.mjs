// Builds dist/: the helper and the shared contract (@waymark/protocol) bundled together, so
// the published package depends only on the MCP SDK and zod, never on the workspace package.
// dist/snapshot.js is the snapshot library on its own (benchmarks load it directly).
import { chmodSync } from "node:fs";
import { build } from "esbuild";

const here = (path) => new URL(path, import.meta.url).pathname;

await build({
  entryPoints: [here("src/bin.ts"), here("src/snapshot.ts")],
  outdir: here("dist"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["@modelcontextprotocol/*", "zod"],
  logLevel: "warning",
});

// npx and npm link run dist/bin.js directly: a rebuilt file must stay executable.
chmodSync(here("dist/bin.js"), 0o755);
