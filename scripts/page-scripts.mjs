// Builds the pages' browser scripts (src/pages/client/*.ts, typed and linted like the rest) with
// esbuild into build/page-script-<name>.txt, which the Worker imports as text (wrangler's rule for
// *.txt) and inlines with each response's CSP nonce (src/pages/scripts.ts). Run by `npm start`,
// `npm test`, `npm run deploy`, CI and every dev server the tests and benches start; a file is
// rewritten only when its bytes change, so a running `wrangler dev` reloads only then.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const ENTRIES = { live: "src/pages/client/live.ts", owner: "src/pages/client/owner.ts" };

mkdirSync(join(root, "build"), { recursive: true });
for (const [name, entry] of Object.entries(ENTRIES)) {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    format: "iife",
    target: "es2022",
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "error",
  });
  const code = result.outputFiles[0].text;
  // Inlined in a <script> element: a closing tag in a string would end it early.
  if (/<\/script/i.test(code)) throw new Error(`${entry}: the bundle contains "</script"`);
  const out = join(root, "build", `page-script-${name}.txt`);
  let current = null;
  try {
    current = readFileSync(out, "utf8");
  } catch {
    // Not built yet.
  }
  if (current !== code) writeFileSync(out, code);
}
