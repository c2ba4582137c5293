// Builds dist/: the helper and the shared contract (@waymark/protocol) bundled together, so
// the published package depends only on the MCP SDK, never on the workspace package.
// dist/snapshot.js is the snapshot library on its own (benchmarks load it directly). Code is
// split where the CLI imports a command's modules lazily (dist/chunks/), so that a command
// loads only what it runs: a hook or a snapshot never waits for the MCP SDK to load.
import { chmodSync, existsSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { build } from "esbuild";

const here = (path) => new URL(path, import.meta.url).pathname;

const result = await build({
  entryPoints: [here("src/bin.ts"), here("src/snapshot.ts")],
  outdir: here("dist"),
  bundle: true,
  splitting: true,
  chunkNames: "chunks/[name]-[hash]",
  platform: "node",
  format: "esm",
  target: "node20",
  external: ["@modelcontextprotocol/*"],
  // The yaml library's Node build is CommonJS that requires "process", which an ESM bundle cannot
  // do; its ES module build is the same parser without that require.
  alias: { yaml: resolve(dirname(createRequire(import.meta.url).resolve("yaml/package.json")), "browser/index.js") },
  logLevel: "warning",
  metafile: true,
});

// Chunk names carry a content hash: stale ones from an earlier build must not ship.
const written = new Set(Object.keys(result.metafile.outputs).map((file) => resolve(file)));
for (const name of existsSync(here("dist/chunks")) ? readdirSync(here("dist/chunks")) : []) {
  const file = here(`dist/chunks/${name}`);
  if (!written.has(resolve(file))) rmSync(file);
}

// npx and npm link run dist/bin.js directly: a rebuilt file must stay executable.
chmodSync(here("dist/bin.js"), 0o755);
