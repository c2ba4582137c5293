// Builds dist/: the helper and the shared contract (@waymark/protocol) bundled together, so
// the published package depends only on the MCP SDK, never on the workspace package.
// dist/snapshot.js is the snapshot library on its own (benchmarks load it directly). Code is
// split where the CLI imports a command's modules lazily (dist/chunks/), so that a command
// loads only what it runs: a hook or a snapshot never waits for the MCP SDK to load.
//
// A build may run while the helper runs (`npm pack` runs `prepare`; tests run dist/ side by side):
// a file whose bytes did not change is not rewritten, and a changed one is written beside and
// renamed over, so no reader ever loads a half-written module.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
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
  write: false,
});

const written = new Set();
for (const file of result.outputFiles) {
  const path = resolve(file.path);
  written.add(path);
  if (existsSync(path) && readFileSync(path).equals(file.contents)) continue;
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, file.contents);
  renameSync(partial, path);
}

// Chunk names carry a content hash: stale ones from an earlier build must not ship. A build running
// beside this one may be writing a file about to be renamed: those are left for a minute.
for (const name of existsSync(here("dist/chunks")) ? readdirSync(here("dist/chunks")) : []) {
  const file = here(`dist/chunks/${name}`);
  if (written.has(resolve(file))) continue;
  if (name.endsWith(".partial") && Date.now() - statSync(file).mtimeMs < 60_000) continue;
  rmSync(file, { force: true });
}

// npx and npm link run dist/bin.js directly: a rebuilt file must stay executable. Its time says
// when dist/ was last built from the sources (the tests' global setup compares them).
chmodSync(here("dist/bin.js"), 0o755);
const now = new Date();
utimesSync(here("dist/bin.js"), now, now);
