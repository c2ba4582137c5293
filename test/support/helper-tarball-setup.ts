/**
 * The Worker imports build/helper-tarball.bin (the helper tarball it serves), which `npm start`,
 * `npm test` and `npm run deploy` build first. Vitest's global setup and every dev server the
 * tests, benches and screenshot script start build it here when it is missing (a fresh checkout
 * running `npx vitest` or `npm run bench`), so no entry point depends on a pre-step.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO_ROOT = resolve(import.meta.dirname, "../..");

export function ensureHelperTarball(root = REPO_ROOT): void {
  if (existsSync(join(root, "build", "helper-tarball.bin"))) return;
  execFileSync(process.execPath, [join(root, "scripts", "helper-tarball.mjs")], { cwd: root, stdio: "inherit" });
}

export default function setup(): void {
  ensureHelperTarball();
}
