import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Transition } from "@waymark/protocol/wire";

// Every query here is read-only and runs with --no-optional-locks (and
// GIT_OPTIONAL_LOCKS=0): an agent may be running `git add`/`git commit` in the same
// repository at the same moment, and `git status` would otherwise take index.lock to
// write back its refreshed stat cache.

export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
export const NULL_SHA = "0000000000000000000000000000000000000000";
const NULL_MODE = "000000";

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = "GitError";
  }
}

function runGit(cwd: string, args: string[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["--no-optional-locks", ...args], {
      cwd,
      env: {
        ...process.env,
        GIT_OPTIONAL_LOCKS: "0",
        GIT_TERMINAL_PROMPT: "0",
        LC_ALL: "C",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) return resolve(Buffer.concat(out));
      const stderr = Buffer.concat(err).toString("utf8").trim();
      reject(new GitError(`git ${args[0]} failed (exit ${code}): ${stderr}`, code, stderr));
    });
  });
}

/** The repository's top-level directory, or null when `dir` is not inside a git work tree. */
export async function gitToplevel(dir: string): Promise<string | null> {
  try {
    const out = await runGit(dir, ["rev-parse", "--show-toplevel"]);
    return out.toString("utf8").replace(/\n$/, "");
  } catch (error) {
    // No git at all, or not a repository: both mean "use checksums". Anything else
    // (dubious ownership, corrupt repository) must surface rather than silently
    // degrade to a different snapshot type.
    if (error instanceof GitError && /not a git repository/i.test(error.stderr)) return null;
    if (isErrno(error) && error.code === "ENOENT") return null;
    throw error;
  }
}

export type TrackedRecord = {
  kind: "tracked";
  xy: string;
  sub: string;
  mH: string;
  mI: string;
  mW: string;
  hH: string;
  hI: string;
  path: string;
};
export type UnmergedRecord = {
  kind: "unmerged";
  xy: string;
  sub: string;
  /** Stage 2 ("ours") is the HEAD side of the conflicted operation. */
  m2: string;
  h2: string;
  mW: string;
  path: string;
};
export type UntrackedRecord = { kind: "untracked"; path: string };
export type StatusRecord = TrackedRecord | UnmergedRecord | UntrackedRecord;
export type StatusResult = {
  head: string | null;
  branch: string | null;
  records: StatusRecord[];
};

/**
 * `git status --porcelain=v2 -z -uall --no-renames --branch`: the HEAD commit, the
 * branch, and every path that differs from HEAD in the index or the working tree, or
 * is untracked (ignored files excluded). `--branch` saves a separate rev-parse.
 */
export async function gitStatus(root: string): Promise<StatusResult> {
  const out = await runGit(root, ["status", "--porcelain=v2", "-z", "-uall", "--no-renames", "--branch", "--ignore-submodules=none"]);
  return parseStatus(out.toString("utf8"));
}

/** Splits off `count` space-separated fields; the rest of the record is the path (which may hold spaces). */
function fields(record: string, count: number): { parts: string[]; path: string } {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const space = record.indexOf(" ", start);
    if (space < 0) throw new Error(`unexpected git status record: ${JSON.stringify(record)}`);
    parts.push(record.slice(start, space));
    start = space + 1;
  }
  return { parts, path: record.slice(start) };
}

export function parseStatus(text: string): StatusResult {
  let head: string | null = null;
  let branch: string | null = null;
  const records: StatusRecord[] = [];
  for (const record of text.split("\0")) {
    if (record === "") continue;
    switch (record[0]) {
      case "#": {
        const { parts, path: value } = fields(record, 2);
        if (parts[1] === "branch.oid") head = value === "(initial)" ? null : value;
        else if (parts[1] === "branch.head") branch = value === "(detached)" ? null : value;
        break;
      }
      case "1": {
        const { parts: f, path } = fields(record, 8);
        records.push({
          kind: "tracked",
          xy: f[1] ?? "",
          sub: f[2] ?? "",
          mH: f[3] ?? "",
          mI: f[4] ?? "",
          mW: f[5] ?? "",
          hH: f[6] ?? "",
          hI: f[7] ?? "",
          path,
        });
        break;
      }
      case "u": {
        // u XY sub m1 m2 m3 mW h1 h2 h3 path
        const { parts: f, path } = fields(record, 10);
        records.push({
          kind: "unmerged",
          xy: f[1] ?? "",
          sub: f[2] ?? "",
          m2: f[4] ?? "",
          mW: f[6] ?? "",
          h2: f[8] ?? "",
          path,
        });
        break;
      }
      case "?":
        records.push({ kind: "untracked", path: record.slice(2) });
        break;
      default:
        // "2" (renames) cannot appear with --no-renames and "!" not without --ignored;
        // anything else is a format this parser does not know, and guessing would be wrong.
        throw new Error(`unexpected git status record: ${JSON.stringify(record)}`);
    }
  }
  return { head, branch, records };
}

/**
 * `git diff --raw -z --no-abbrev --no-renames <from> <to>`: a tree-to-tree diff of two
 * commits, which never looks at (or refreshes) the index. A null commit means the
 * empty tree (no commit yet, or an unborn branch).
 */
export async function gitDiffCommits(root: string, from: string | null, to: string | null): Promise<Transition[]> {
  const out = await runGit(root, [
    "diff",
    "--raw",
    "-z",
    "--no-abbrev",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules=none",
    from ?? EMPTY_TREE,
    to ?? EMPTY_TREE,
    "--",
  ]);
  return parseDiffRaw(out.toString("utf8"));
}

export function parseDiffRaw(text: string): Transition[] {
  const tokens = text.split("\0");
  const transitions: Transition[] = [];
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const meta = tokens[i] as string;
    const path = tokens[i + 1] as string;
    if (!meta.startsWith(":")) throw new Error(`unexpected git diff record: ${JSON.stringify(meta)}`);
    const [srcMode, dstMode, srcSha, dstSha] = meta.slice(1).split(" ") as [string, string, string, string];
    transitions.push({
      path,
      before: fileState(srcMode, srcSha),
      after: fileState(dstMode, dstSha),
    });
  }
  return transitions;
}

export function fileState(mode: string, sha: string): { mode: string; blob: string } | null {
  return mode === NULL_MODE || sha === NULL_SHA ? null : { mode, blob: sha };
}

/** The HEAD commit, or null when the current branch has no commit yet. */
export async function gitHead(root: string): Promise<string | null> {
  try {
    return (await runGit(root, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).toString("utf8").trim() || null;
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return null;
    throw error;
  }
}

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
    const head = (await readFile(join(gitDir, "HEAD"), "utf8")).trim();
    if (SHA.test(head)) return head;
    const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    try {
      const loose = (await readFile(join(gitDir, ref), "utf8")).trim();
      return SHA.test(loose) ? loose : undefined;
    } catch {
      const packed = await readFile(join(gitDir, "packed-refs"), "utf8");
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

/** The commit a submodule's work tree has checked out (its gitlink state on disk). */
export async function gitSubmoduleHead(dir: string): Promise<string | null> {
  try {
    return (await runGit(dir, ["rev-parse", "--verify", "-q", "HEAD"])).toString("utf8").trim() || null;
  } catch {
    return null;
  }
}

function isErrno(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && "code" in error;
}
