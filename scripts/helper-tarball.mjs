// Builds the helper tarball this endpoint serves at /helper/waymark-helper-<version>.tgz
// (`npm pack` of client-helper, which builds dist/ first) into build/helper-tarball.bin, which
// the Worker imports as bytes (src/routes/helper-download.ts; wrangler imports *.bin as data).
// Run by `npm start` and `npm run deploy` before they start, and by the tests' global setup when it is
// missing or older than the helper's sources (test/support/worker-build-setup.ts); never committed.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const { name, version } = JSON.parse(readFileSync(join(root, "client-helper", "package.json"), "utf8"));
const file = `${name}-${version}.tgz`;
const packed = mkdtempSync(join(tmpdir(), "waymark-helper-pack-"));
try {
  execFileSync("npm", ["pack", "--silent", "-w", "client-helper", "--pack-destination", packed], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  mkdirSync(join(root, "build"), { recursive: true });
  writeFileSync(join(root, "build", "helper-tarball.bin"), readFileSync(join(packed, file)));
} finally {
  rmSync(packed, { recursive: true, force: true });
}
console.log(`helper tarball: build/helper-tarball.bin (GET /helper/${file}, /helper/latest redirects to it)`);
