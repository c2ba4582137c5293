/**
 * The Worker imports what the build makes: build/page-script-*.txt (the pages' scripts, from
 * src/pages/client/) and build/helper-tarball.bin (the helper tarball it serves), which `npm
 * start`, `npm test` and `npm run deploy` build first. Vitest's global setup and every dev server
 * the tests, benches and screenshot script start build them here (a fresh checkout running `npx
 * vitest` or `npm run bench`), so no entry point depends on a pre-step. The page scripts are
 * rebuilt every time (esbuild, milliseconds; unchanged bytes are not rewritten), so a test never
 * runs an old script; the tarball when missing or older than the helper's sources.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

export function ensureWorkerBuild(root = REPO_ROOT): void {
  execFileSync(process.execPath, [join(root, "scripts", "page-scripts.mjs")], { cwd: root, stdio: "inherit" });
  ensureCurrentHelperTarball(root);
}

/** The newest modification time of a file under `path`. */
function newest(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/**
 * Builds the helper tarball when it is missing or a source it is built from changed since: what an
 * agent installs through `npx --package=<endpoint>/helper/…` (the README's setup) is then the helper
 * under test.
 */
export function ensureCurrentHelperTarball(root = REPO_ROOT): void {
  const tarball = statSync(join(root, "build", "helper-tarball.bin"), { throwIfNoEntry: false });
  const sources = ["client-helper/src", "client-helper/package.json", "client-helper/build.mjs", "packages/protocol/src"];
  if (tarball && Math.max(...sources.map((source) => newest(join(root, source)))) <= tarball.mtimeMs) return;
  execFileSync(process.execPath, [join(root, "scripts", "helper-tarball.mjs")], { cwd: root, stdio: "inherit" });
}

export default function setup(): void {
  ensureWorkerBuild();
}
