// `npm run schemas`: writes docs/schemas/export-v1.json, the JSON export's JSON Schema (2020-12),
// generated from its zod schema (packages/protocol/src/views/export.ts) with zod's own
// z.toJSONSchema, so the published schema is the read model and never a second copy of it.
// `npm run schemas -- --check` (CI) writes nothing and fails when the committed file is not what
// the schemas generate, like `wrangler types --check`. The TypeScript is bundled with esbuild
// into one module first, as the benches load the domain (bench/lib/domain.ts).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";

const { values } = parseArgs({ options: { check: { type: "boolean" } } });
const root = new URL("..", import.meta.url).pathname;
const SCHEMAS = [{ entry: "packages/protocol/src/views/export.ts", generate: "exportJsonSchema", file: "docs/schemas/export-v1.json" }];

let stale = 0;
for (const { entry, generate, file } of SCHEMAS) {
  const bundle = await build({
    entryPoints: [join(root, entry)],
    absWorkingDir: root,
    bundle: true,
    format: "esm",
    platform: "node",
    write: false,
    logLevel: "error",
  });
  const module = await import(`data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].text).toString("base64")}`);
  const text = `${JSON.stringify(module[generate](), null, 2)}\n`;
  const path = join(root, file);
  let current = null;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    // Not generated yet.
  }
  if (current === text) continue;
  if (values.check) {
    stale++;
    console.error(`${file}: not what ${entry} generates; run \`npm run schemas\` and commit it`);
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${file}`);
  }
}
if (stale > 0) process.exit(1);
