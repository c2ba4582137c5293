/**
 * @module git/head-files
 * What the helper reads from a repository's git directory itself instead of starting git: HEAD
 * of a plain `.git` directory, and where a linked worktree's main git directory is.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const SHA = /^[0-9a-f]{40}$/;

/**
 * HEAD read straight from the files of a plain `.git` directory (no process spawn).
 * Undefined whenever the layout is not the simple one (linked worktree, reftable,
 * unborn branch, symbolic ref chains): the caller then asks git. Callers must check
 * the value against another source (status's branch.oid) since refs may move at any time.
 */
export async function headFromFiles(root: string): Promise<string | undefined> {
  try {
    const gitDir = join(root, ".git");
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    if (SHA.test(head)) return head;
    const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    try {
      const loose = readFileSync(join(gitDir, ref), "utf8").trim();
      return SHA.test(loose) ? loose : undefined;
    } catch {
      const packed = readFileSync(join(gitDir, "packed-refs"), "utf8");
      for (const line of packed.split("\n")) {
        const [sha, name] = line.split(" ");
        if (name === ref && sha && SHA.test(sha)) return sha;
      }
      return undefined;
    }
  } catch {
    return undefined;
  }
}

/** The main repository's git directory of a linked worktree's (its `commondir` file); null for a main repository. */
export function commonGitDir(gitDir: string): string | null {
  try {
    const named = readFileSync(join(gitDir, "commondir"), "utf8").replace(/\r?\n$/, "");
    return named === "" ? null : resolve(gitDir, named);
  } catch {
    return null;
  }
}
