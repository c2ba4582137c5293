/**
 * The Worker imports what the build makes: build/page-script-*.txt (the pages' scripts, from
 * src/pages/client/) and build/helper-tarball.bin (the helper tarball it serves), which `npm
 * start`, `npm test` and `npm run deploy` build first. Vitest's global setup and every dev server
 * the tests, benches and screenshot script start build them here (a fresh checkout running `npx
 * vitest` or `npm run bench`), so no entry point depends on a pre-step. The page scripts are
 * rebuilt every time (esbuild, milliseconds; unchanged bytes are not rewritten), so a test never
 * runs an old script; the tarball only when missing.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

export function ensureWorkerBuild(root = REPO_ROOT): void {
  execFileSync(process.execPath, [join(root, "scripts", "page-scripts.mjs")], { cwd: root, stdio: "inherit" });
  if (existsSync(join(root, "build", "helper-tarball.bin"))) return;
  execFileSync(process.execPath, [join(root, "scripts", "helper-tarball.mjs")], { cwd: root, stdio: "inherit" });
}

export default function setup(): void {
  ensureWorkerBuild();
}
