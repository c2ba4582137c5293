// Builds the helper tarball this endpoint serves: public/helper/waymark-helper-<version>.tgz
// (`npm pack` of client-helper, which builds dist/ first) and public/_redirects, which sends
// GET /helper/latest to it. Run by `npm start`, `npm run deploy` and `npm test` before they
// start; the generated files are never committed (public/.gitignore).
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const out = join(root, "public", "helper");
const { name, version } = JSON.parse(readFileSync(join(root, "client-helper", "package.json"), "utf8"));
const file = `${name}-${version}.tgz`;

mkdirSync(out, { recursive: true });
// One version per endpoint: an older tarball left in place would be served next to the current one.
for (const old of readdirSync(out)) if (old.endsWith(".tgz")) rmSync(join(out, old));
execFileSync("npm", ["pack", "--silent", "-w", "client-helper", "--pack-destination", out], {
  cwd: root,
  stdio: ["ignore", "ignore", "inherit"],
});
if (!readdirSync(out).includes(file)) throw new Error(`npm pack did not produce ${join(out, file)}`);
writeFileSync(join(root, "public", "_redirects"), `/helper/latest /helper/${file} 302\n`);
console.log(`helper tarball: public/helper/${file} (GET /helper/${file}, /helper/latest redirects to it)`);
