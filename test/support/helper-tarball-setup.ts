/**
 * Vitest global setup: the Worker imports build/helper-tarball.bin (the helper tarball it serves),
 * which `npm test` builds first (pretest). A direct `npx vitest` on a fresh checkout builds it here.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export default function setup(): void {
  const root = resolve(import.meta.dirname, "../..");
  if (existsSync(join(root, "build", "helper-tarball.bin"))) return;
  execFileSync(process.execPath, [join(root, "scripts", "helper-tarball.mjs")], { cwd: root, stdio: "inherit" });
}
