/**
 * @module tree-key
 * The key of what the helper keeps per working tree in its cache (the hooks' journal of open
 * tasks and the last workflow, the working tree's task marks, the last workflow `waymark summary`
 * prints): the directory's path and the identity on disk of the directory itself and of the
 * repository that holds it (its `.git`: device, inode and creation time), never the path alone.
 * A repository deleted and created again at the same path, or another one cloned there, is a new
 * key: it never inherits the old one's open tasks or workflow. Read with a few lstat calls (no
 * git process), so a hook can afford it on every run.
 */
import { lstatSync } from "node:fs";
import { dirname, join } from "node:path";
import { nameHash } from "./name-hash.js";

function stamp(path: string): string | null {
  const info = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  return info ? `${info.dev}:${info.ino}:${info.birthtimeNs}` : null;
}

/** The nearest `.git` at or above `dir`: the repository a git working tree belongs to. */
function enclosingGit(dir: string): string | null {
  for (let current = dir; ; current = dirname(current)) {
    const found = stamp(join(current, ".git"));
    if (found !== null) return `${current}\0${found}`;
    if (dirname(current) === current) return null;
  }
}

/**
 * A hex key for `dir` (an absolute, real path) and the repository in it: its identities read each
 * time (a few lstat calls), their hash kept by its text (a completion asks about a dozen times).
 */
export function treeKey(dir: string): string {
  return nameHash(`waymark-tree-v1\0${dir}\0${stamp(dir) ?? "missing"}\0${enclosingGit(dir) ?? "no-git"}`);
}
