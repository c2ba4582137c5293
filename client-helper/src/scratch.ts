/**
 * @module scratch
 * Where the line counts of ./review-measures.ts are taken when ./quick-counts.ts cannot tell: a scratch
 * repository of the helper's own (an empty directory in its cache made a bare repository),
 * outside the user's, where nothing of the user's repository applies (no config, no attributes,
 * no filters: bytes are compared as given). The two sides of the counts go in as two trees with
 * one `git fast-import` (a pack, not a file per side: creating hundreds of small files was most
 * of complete_task's time) and are counted by one `git diff-tree --stdin --numstat -z`. Both
 * processes can be started before the contents are known (complete_task starts them while `git
 * status` runs when the last task's counts needed them), so their start-up is off the call's
 * path; the trees' ids are computed here, as git names them, for diff-tree to read.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { splitNul } from "./git/porcelain.js";
import { cleanGitEnv, type GitContext, type StartedGit, startGit } from "./git/process.js";
import { EMPTY_TREE } from "./git/queries.js";

export const COMMITTER = "committer waymark <waymark> 0 +0000\ndata 0\n";

/**
 * glibc's heap trim threshold for the scratch repository's git (other C libraries ignore it).
 * fast-import frees a block of about 128 KiB per blob; with the default, dynamic threshold glibc
 * gave that memory back to the kernel and took it again for every blob in some environments
 * (the helper's among them: 800 brk calls), which tripled its time (15 ms instead of 5 for a
 * hundred files). Memory only: nothing git reads or writes changes.
 */
const SCRATCH_TRIM_THRESHOLD = String(4 * 1024 * 1024);

export type Counts = { added: number; removed: number } | "binary";

/** SHA-1 object id of a loose object's content, as git names it. */
export function objectId(type: "blob" | "tree", content: Buffer): Buffer {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest();
}

/** Tree entries named by the change index: the names sort as git sorts a tree's files (bytewise). */
export function treeId(entries: readonly { name: string; blob: Buffer }[]): string {
  if (entries.length === 0) return EMPTY_TREE;
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const body = Buffer.concat(sorted.flatMap(({ name, blob }) => [Buffer.from(`100644 ${name}\0`), blob]));
  return objectId("tree", body).toString("hex");
}

/**
 * An empty bare repository of the helper's own under `root`, and the context git runs in there:
 * no system config, throwaway objects (not synced to disk, not compressed: a fifth less time for a
 * hundred files). The caller removes `dir`.
 */
export function makeScratchRepository(root: string): { dir: string; context: GitContext } {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(join(root, "waymark-lines-"));
  mkdirSync(join(dir, "objects", "pack"), { recursive: true });
  mkdirSync(join(dir, "refs", "heads"), { recursive: true });
  writeFileSync(join(dir, "HEAD"), "ref: refs/heads/start\n");
  const context: GitContext = {
    cwd: dir,
    env: {
      ...cleanGitEnv(),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_DIR: dir,
      MALLOC_TRIM_THRESHOLD_: SCRATCH_TRIM_THRESHOLD,
      GIT_CONFIG_COUNT: "2",
      GIT_CONFIG_KEY_0: "core.fsync",
      GIT_CONFIG_VALUE_0: "none",
      GIT_CONFIG_KEY_1: "pack.compression",
      GIT_CONFIG_VALUE_1: "0",
    },
    fileMode: true,
    symlinks: true,
  };
  return { dir, context };
}

/** The two sides of the counts, per change index: a file absent on a side stays absent (git counts it whole). */
export class ScratchSides {
  private readonly stream: Buffer[] = [];
  private readonly start: { name: string; mark: number; blob: Buffer }[] = [];
  private readonly end: { name: string; mark: number; blob: Buffer }[] = [];
  private marks = 0;

  get empty(): boolean {
    return this.start.length === 0 && this.end.length === 0;
  }

  add(index: number, before: Buffer | null, after: Buffer | null): void {
    if (before) this.start.push({ name: String(index), ...this.blob(before) });
    if (after) this.end.push({ name: String(index), ...this.blob(after) });
  }

  private blob(content: Buffer): { mark: number; blob: Buffer } {
    this.marks++;
    this.stream.push(Buffer.from(`blob\nmark :${this.marks}\ndata ${content.length}\n`), content, Buffer.from("\n"));
    return { mark: this.marks, blob: objectId("blob", content) };
  }

  /** The fast-import stream: every content once, then one commit per side (refs/heads/start, refs/heads/end). */
  importStream(): Buffer {
    const files = (side: typeof this.start) => side.map(({ name, mark }) => `M 100644 :${mark} ${name}\n`).join("");
    return Buffer.concat([
      ...this.stream,
      Buffer.from(
        `commit refs/heads/start\n${COMMITTER}${files(this.start)}\ncommit refs/heads/end\n${COMMITTER}${files(this.end)}\ndone\n`,
      ),
    ]);
  }

  /** The ids of the two sides' trees. */
  trees(): { start: string; end: string } {
    return { start: treeId(this.start), end: treeId(this.end) };
  }
}

export const FAST_IMPORT = ["fast-import", "--quiet", "--done", "--date-format=raw"];
const DIFF_TREE = ["diff-tree", "--stdin", "-r", "--no-renames", "--no-ext-diff", "--no-textconv", "--numstat", "-z"];

/** A scratch repository with its fast-import and diff-tree started, for one call's line counts. */
export class ScratchRepository {
  private constructor(
    private readonly dir: string,
    private readonly fastImport: StartedGit,
    private readonly diffTree: StartedGit,
  ) {}

  /** Makes a new scratch repository under `root` (the helper's cache) and starts its two git processes. */
  static open(root: string): ScratchRepository {
    const { dir, context } = makeScratchRepository(root);
    return new ScratchRepository(dir, startGit(context, FAST_IMPORT), startGit(context, DIFF_TREE));
  }

  /** Imports both sides and counts lines per change index. */
  async numstat(sides: ScratchSides): Promise<Map<number, Counts>> {
    await this.fastImport.finish(sides.importStream());
    const { start, end } = sides.trees();
    const out = await this.diffTree.finish(Buffer.from(`${start} ${end}\n`));
    // diff-tree --stdin repeats each input line before its records.
    const newline = out.indexOf(0x0a);
    if (newline < 0 || out.toString("latin1", 0, newline) !== `${start} ${end}`) {
      throw new Error(`git diff-tree in the scratch repository answered without the trees asked for: ${out.toString("latin1", 0, 200)}`);
    }
    return parseNumstat(out.subarray(newline + 1));
  }

  /** Ends the processes (if not used) and removes the repository. */
  async remove(): Promise<void> {
    const empty = Buffer.alloc(0);
    await Promise.allSettled([this.fastImport.finish(empty), this.diffTree.finish(empty)]);
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** `--numstat -z` of the two sides: record "added\tremoved\t" NUL source NUL destination NUL, per file index. */
export function parseNumstat(out: Buffer): Map<number, Counts> {
  const tokens = splitNul(out).map((token) => token.toString("latin1"));
  const counts = new Map<number, Counts>();
  for (let i = 0; i < tokens.length; i++) {
    const [added, removed, inline] = (tokens[i] as string).split("\t");
    if (added === undefined || removed === undefined) continue;
    // One path inline when both sides have the same name, else two tokens follow (a file present on one side only).
    let name = inline ?? "";
    if (name === "") {
      const source = tokens[i + 1] ?? "";
      const destination = tokens[i + 2] ?? "";
      name = destination === "/dev/null" ? source : destination;
      i += 2;
    }
    const index = Number(name.slice(name.lastIndexOf("/") + 1));
    if (!Number.isInteger(index)) continue;
    counts.set(index, added === "-" ? "binary" : { added: Number(added), removed: Number(removed) });
  }
  return counts;
}
