/**
 * @module verbatim-blobs
 * When git stores a working-tree file exactly as its bytes are, the file's blob id is the SHA-1
 * of those bytes, and the helper computes it itself instead of starting `git hash-object`.
 * git changes a file on its way in (end-of-line conversion, clean filters, ident,
 * working-tree-encoding) only through attributes or core.autocrlf, so that holds when
 * core.autocrlf is off and no attributes can apply to the file: no core.attributesFile, no
 * global, system or info/attributes file, no .gitattributes in any directory from the top level
 * down to the file, and none tracked but missing from the disk (git would read it from the
 * index). Anything else, and any file larger than VERBATIM_MAX_BYTES, is hashed by git.
 */
import { lstatSync } from "node:fs";
import { homedir } from "node:os";
import { join, sep } from "node:path";
import { decodeWirePath } from "@waymark/protocol/paths";
import { commonGitDir } from "./git/head-files.js";
import type { GitContext } from "./git/process.js";

/** Larger files are streamed by git rather than read whole into the helper's memory. */
export const VERBATIM_MAX_BYTES = 8 * 1024 * 1024;

/** Where git builds look for the system-wide attributes file (distribution, /usr/local, Homebrew, Xcode). */
const SYSTEM_ATTRIBUTES = [
  "/etc/gitattributes",
  "/usr/local/etc/gitattributes",
  "/opt/homebrew/etc/gitattributes",
  "/Library/Developer/CommandLineTools/usr/share/git-core/gitattributes",
  "/Applications/Xcode.app/Contents/Developer/usr/share/git-core/gitattributes",
];

const ATTRIBUTES = ".gitattributes";

function present(path: string | Buffer): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
}

/** True when nothing outside the working tree can make git convert a file of this repository on its way in. */
export function repositoryStoresVerbatim(context: GitContext, gitDir: string, inherited: NodeJS.ProcessEnv = process.env): boolean {
  if (context.storesVerbatim !== true) return false;
  const home = inherited.HOME || homedir();
  const xdg = inherited.XDG_CONFIG_HOME || join(home, ".config");
  const common = commonGitDir(gitDir);
  const files = [join(gitDir, "info", "attributes"), join(xdg, "git", "attributes"), ...SYSTEM_ATTRIBUTES];
  if (common !== null) files.push(join(common, "info", "attributes"));
  return !files.some(present);
}

/** True for a path git reads attributes from (a .gitattributes file at any depth). */
export function isAttributesPath(path: string): boolean {
  return path === ATTRIBUTES || path.endsWith(`/${ATTRIBUTES}`);
}

/**
 * Answers, per repository path, whether a .gitattributes exists in one of its directories (on
 * disk, from the top level `root` down); each directory is looked at once.
 */
export function attributesOnDisk(root: string): (path: string) => boolean {
  const known = new Map<string, boolean>();
  const has = (directory: Buffer): boolean => {
    const key = directory.toString("latin1");
    let found = known.get(key);
    if (found === undefined) {
      found = present(Buffer.concat([Buffer.from(`${root}${sep}`), directory, Buffer.from(ATTRIBUTES)]));
      known.set(key, found);
    }
    return found;
  };
  return (path) => {
    const bytes = decodeWirePath(path);
    if (bytes === null) return true;
    if (has(Buffer.alloc(0))) return true;
    for (let at = bytes.indexOf(0x2f); at >= 0; at = bytes.indexOf(0x2f, at + 1)) {
      if (has(Buffer.from(bytes.subarray(0, at + 1)))) return true;
    }
    return false;
  };
}
