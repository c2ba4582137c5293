/**
 * @module git/plain-top
 * The top level of an ordinary checkout, found as git finds it but without starting git: a hook
 * runs while the agent waits, and a git process (its start, its exit) was the largest part of a
 * session start's own work after Node's. Only the plain case is answered: the nearest directory
 * upward whose `.git` is a directory holding a repository (HEAD, objects, refs), on the same
 * filesystem as the start (git stops discovery at a filesystem boundary), owned by this user (git's
 * safe.directory check), with no `core.worktree`, `core.bare` or include in its config. Everything
 * else (a `.git` file of a linked worktree or submodule, a symlink, a bare repository, a directory
 * inside `.git`, another owner) is null: the caller asks git.
 */
import { lstatSync, readFileSync, realpathSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * Config that moves or removes the work tree (any `worktree`, a `bare` that is not false), and
 * includes that could set it: git decides then. (Every `git init` writes `bare = false`.)
 */
const CONFIG_NEEDS_GIT = /^\s*worktree\s*=|^\s*\[\s*include|^\s*bare\s*(?:$|=(?!\s*(?:false|no|off|0)\s*$))/im;

function stat(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** A directory git would take as a repository: HEAD, objects and refs in it. */
function holdsRepository(dir: string): boolean {
  return (
    stat(join(dir, "HEAD"))?.isFile() === true &&
    stat(join(dir, "objects"))?.isDirectory() === true &&
    stat(join(dir, "refs"))?.isDirectory() === true
  );
}

/** The checkout's top level (a real path), or null where git must answer. */
export function plainTop(dir: string): string | null {
  let current: string;
  try {
    current = realpathSync(dir);
  } catch {
    return null;
  }
  const start = stat(current);
  if (!start?.isDirectory()) return null;
  const uid = process.getuid?.();
  for (;;) {
    const here = stat(current);
    if (!here || here.dev !== start.dev) return null;
    // Inside a repository's own directory (or a bare one): no work tree there.
    if (basename(current) === ".git" || holdsRepository(current)) return null;
    const dotGit = stat(join(current, ".git"));
    if (dotGit) {
      if (!dotGit.isDirectory() || !holdsRepository(join(current, ".git"))) return null;
      if (uid === undefined || here.uid !== uid || dotGit.uid !== uid) return null;
      let config = "";
      try {
        config = readFileSync(join(current, ".git", "config"), "utf8");
      } catch {
        // No config: nothing in it moves the work tree.
      }
      return CONFIG_NEEDS_GIT.test(config) ? null : current;
    }
    const parent = dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}
