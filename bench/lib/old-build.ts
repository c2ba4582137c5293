/**
 * Another build of Waymark for A/B benches: the tree of a git ref written to a temporary
 * directory with `git archive` (the repository's worktrees, index and refs stay untouched),
 * with a node_modules made of symlinks into this checkout's node_modules, except the
 * workspace packages, which point at the old tree's own copies; with the page scripts and helper
 * tarball its Worker bundles built as its own `npm start` would.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");
/** Workspace packages linked by npm: name → folder inside the checkout. */
const WORKSPACES: Record<string, string> = { "@waymark/protocol": "packages/protocol", "waymark-helper": "client-helper" };

export interface OldBuild {
  ref: string;
  commit: string;
  dir: string;
  remove(): void;
}

export function checkOutOldBuild(ref: string): OldBuild {
  const commit = execFileSync("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: ROOT })
    .toString()
    .trim();
  const dir = mkdtempSync(join(tmpdir(), "waymark-old-build-"));
  try {
    const archive = execFileSync("git", ["archive", "--format=tar", commit], { cwd: ROOT, maxBuffer: 1 << 30 });
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
    const modules = join(dir, "node_modules");
    mkdirSync(modules);
    for (const entry of readdirSync(join(ROOT, "node_modules"))) {
      if (entry === "@waymark" || entry === "waymark-helper") continue;
      symlinkSync(join(ROOT, "node_modules", entry), join(modules, entry));
    }
    for (const [name, folder] of Object.entries(WORKSPACES)) {
      if (!existsSync(join(dir, folder))) continue;
      if (name.includes("/")) mkdirSync(join(modules, name.split("/")[0] as string), { recursive: true });
      symlinkSync(join(dir, folder), join(modules, name));
    }
    // What the old build's Worker bundles and its own `npm start` builds first (builds that have them).
    for (const script of ["page-scripts.mjs", "helper-tarball.mjs"]) {
      if (existsSync(join(dir, "scripts", script)))
        execFileSync(process.execPath, [join(dir, "scripts", script)], { cwd: dir, stdio: "ignore" });
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { ref, commit, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
