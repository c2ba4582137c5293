/**
 * @module review-measures
 * What a reviewer wants beside a task's file list, measured on the machine without sending any
 * contents: lines added and removed per changed file, the commits made during the task and the
 * branch (the wire's `review` block).
 *
 * "The task's lines" of a file are `git diff --numstat` between its content at task start and
 * at task end. Contents come from where they are, and nothing is ever written to the
 * repository (no object, no index):
 * - a state stored in the object database (committed or staged): `git cat-file --batch`;
 * - the end state of a file not in the object database: the file on disk now;
 * - the start state of a file that was dirty or untracked at start and whose content is in no
 *   object: the copy the helper took at start_task into its cache directory (`saveStartContents`).
 * Both sides are counted in a scratch repository of the helper's own, outside the user's
 * (./scratch.ts: no repository config or attributes apply). A side whose content is gone (or
 * larger than the limits) leaves the file without counts rather than guess.
 */
import { closeSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, writeFileSync, writeSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PathChange } from "@waymark/protocol/attribution";
import type { CommitInfo, FileState, LineCount, ReviewData } from "@waymark/protocol/wire";
import { REVIEW_LIMITS, WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { splitNul } from "./git/porcelain.js";
import { type GitContext, GitError, runGit } from "./git/process.js";
import { blobId, fsPath, isMissing } from "./hash.js";
import type { LocalGitSnapshot } from "./local.js";
import { readableWarning } from "./outgoing.js";
import { quickCounts } from "./quick-counts.js";
import { ScratchRepository, ScratchSides } from "./scratch.js";

export const CONTENT_LIMITS = {
  /** A file larger than this is not copied or counted (its line counts are left out). */
  FILE_BYTES: 8 * 1024 * 1024,
  /** Bytes copied at start_task, and bytes counted at complete_task, per task. */
  TOTAL_BYTES: 256 * 1024 * 1024,
} as const;
/** Copies of start contents left behind by a task never completed are removed after this long. */
const COPIES_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
const GITLINK = "160000";

export function startContentsRoot(cacheRoot: string): string {
  return join(cacheRoot, "start-contents");
}

/** The arguments of objectSizes' git query (a tool call may start it ahead: ./prestarted-git.ts). */
export const OBJECT_SIZES: readonly string[] = ["cat-file", "--batch-check"];

/** Blob ids the object database holds, with their sizes (`git cat-file --batch-check`, read-only). */
async function objectSizes(context: GitContext, blobs: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (blobs.length === 0) return sizes;
  const out = await runGit(context, OBJECT_SIZES, Buffer.from(`${blobs.join("\n")}\n`));
  for (const line of out.toString("latin1").split("\n")) {
    const [sha, type, size] = line.split(" ");
    if (sha && type === "blob" && size !== undefined) sizes.set(sha, Number(size));
  }
  return sizes;
}

/** Contents of blobs from the object database (`git cat-file --batch`, no conversion). */
async function readObjects(context: GitContext, blobs: readonly string[]): Promise<Map<string, Buffer>> {
  const contents = new Map<string, Buffer>();
  if (blobs.length === 0) return contents;
  const out = await runGit(context, ["cat-file", "--batch"], Buffer.from(`${blobs.join("\n")}\n`));
  let at = 0;
  while (at < out.length) {
    const newline = out.indexOf(0x0a, at);
    if (newline < 0) break;
    const [sha, type, size] = out.toString("latin1", at, newline).split(" ");
    at = newline + 1;
    if (type === "missing" || size === undefined || sha === undefined) continue;
    const length = Number(size);
    if (type === "blob") contents.set(sha, out.subarray(at, at + length));
    at += length + 1;
  }
  return contents;
}

/**
 * A file's bytes on disk as git would store them before conversion: a link's target, a file's
 * content. Read synchronously, as every file this module reads or writes: they are many and
 * mostly small, and through the thread pool each costs a round trip (a hundred files on a busy
 * machine added a tenth of a second to a tool call).
 */
function diskContent(root: string, path: string, maxBytes: number): Buffer | null {
  const abs = fsPath(root, path);
  try {
    const info = lstatSync(abs);
    if (info.isSymbolicLink()) return readlinkSync(abs, { encoding: "buffer" });
    if (!info.isFile() || info.size > maxBytes) return null;
    return readFileSync(abs);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** A mode change only: git counts no lines. */
const sameContent = (change: PathChange) => change.before !== null && change.after !== null && change.before.blob === change.after.blob;

const isContent = (state: FileState | null): state is FileState => state !== null && state.mode !== GITLINK;

/**
 * Copies, into `target` (the helper's cache, outside the repository), the content of every
 * file dirty or untracked at start whose blob is in no object: at complete_task it is the
 * start side of its line counts. Bounded by CONTENT_LIMITS. `read`: contents the snapshot already
 * read, by blob id (not read from the disk again). `stored`: the blobs the snapshot's status named
 * as HEAD's or the index's; then every other content is copied without asking git which are
 * stored (a git process less per start_task; a content stored some other way, which is rare, is
 * copied for nothing). Returns how many were copied.
 */
export async function saveStartContents(
  context: GitContext,
  snapshot: LocalGitSnapshot,
  target: string,
  read?: ReadonlyMap<string, Buffer>,
  stored?: ReadonlySet<string>,
): Promise<number> {
  const wanted = new Map<string, string>();
  for (const entry of snapshot.dirty) {
    if (isContent(entry.worktree) && !wanted.has(entry.worktree.blob)) wanted.set(entry.worktree.blob, entry.path);
  }
  const inObjects: { has(blob: string): boolean } = stored ?? (await objectSizes(context, [...wanted.keys()]));
  mkdirSync(target, { recursive: true, mode: 0o700 });
  let bytes = 0;
  let copied = 0;
  const index: Record<string, [number, number]> = {};
  // Two files whatever the number of copies: creating a file per copy was most of the cost.
  const bundle = openSync(join(target, BUNDLE), "w", 0o600);
  try {
    for (const [blob, path] of wanted) {
      if (inObjects.has(blob)) continue;
      const known = read?.get(blob);
      const content =
        known && known.length <= CONTENT_LIMITS.FILE_BYTES ? known : diskContent(snapshot.root, path, CONTENT_LIMITS.FILE_BYTES);
      if (content === null || bytes + content.length > CONTENT_LIMITS.TOTAL_BYTES) continue;
      index[blob] = [bytes, content.length];
      writeSync(bundle, content, 0, content.length, bytes);
      bytes += content.length;
      copied++;
    }
  } finally {
    closeSync(bundle);
  }
  writeFileSync(join(target, BUNDLE_INDEX), JSON.stringify(index), { mode: 0o600 });
  return copied;
}

const BUNDLE = "contents";
const BUNDLE_INDEX = "contents.json";

/**
 * The start contents kept in `dir`: the bundle saveStartContents writes, or (a task started by
 * an earlier helper) one file per blob id.
 */
function startContentsReader(dir: string | undefined): (blob: string) => Buffer | null {
  if (dir === undefined) return () => null;
  let bundle: { contents: Buffer; index: Record<string, [number, number]> } | null = null;
  try {
    bundle = {
      index: JSON.parse(readFileSync(join(dir, BUNDLE_INDEX), "utf8")) as Record<string, [number, number]>,
      contents: readFileSync(join(dir, BUNDLE)),
    };
  } catch {
    bundle = null;
  }
  return (blob) => {
    if (bundle) {
      const at = Object.hasOwn(bundle.index, blob) ? bundle.index[blob] : undefined;
      return at ? bundle.contents.subarray(at[0], at[0] + at[1]) : null;
    }
    try {
      return readFileSync(join(dir, blob));
    } catch {
      return null;
    }
  };
}

/** Removes folders left longer than 30 days: start contents of tasks never completed, line counts interrupted. */
export async function pruneStartContents(root: string, now = Date.now()): Promise<void> {
  for (const name of await readdir(root).catch(() => [])) {
    const info = await stat(join(root, name)).catch(() => null);
    if (info && now - info.mtimeMs > COPIES_MAX_AGE_MS) await rm(join(root, name), { recursive: true, force: true });
  }
}

/**
 * Clean-up a call defers until its answer went out: started then, not before, because on a
 * machine with few cores removing files and ending processes while the endpoint answers took
 * that time from the answer (a fifth of complete_task's remote call at 10,000 files).
 */
export type Leftovers = (() => Promise<unknown>)[];

/** Starts the deferred clean-up; resolves when all of it has ended, failures included. */
export function clearLeftovers(leftovers: Leftovers): Promise<unknown> {
  return Promise.all(leftovers.map((remove) => remove().catch(() => {})));
}

export type ReviewOptions = {
  /** Where scratch repositories are made (the helper's cache; a folder in a crowded /tmp was far slower). */
  scratchRoot?: string;
  /** Receives the removal of this call's scratch files, for the caller to start after its answer. */
  leftovers?: Leftovers;
  /** The branch as `git status` named it with the end state (undefined: asked of git). */
  endBranch?: string | null;
  /** A scratch repository the caller opened ahead (and removes); else one is opened and removed here. */
  scratch?: ScratchRepository;
  /** Contents already read, by blob id (bytes that hash to it): not read again. */
  contents?: ReadonlyMap<string, Buffer>;
  /** Filled with the git processes the counts needed (the caller starts those ahead next time). */
  needed?: CountsNeeded;
  /** Filled with both sides of every text file counted, by path (the line attribution reads them: ./lines/attribute.ts). */
  sides?: Map<string, { before: Buffer | null; after: Buffer | null }>;
};

/** What line counts needed beyond the bytes at hand: the repository's object database, the scratch repository. */
export type CountsNeeded = { objects: boolean; scratch: boolean };

/**
 * Lines added and removed per change, in the order of `changes` (gitlinks and files whose
 * content is not known are left out; binary files are marked). Files whose counts do not depend
 * on how a diff aligns them are counted here (./quick-counts.ts); the rest by git in the scratch
 * repository.
 */
export async function countLines(
  context: GitContext,
  root: string,
  changes: readonly PathChange[],
  startContents: string | undefined,
  options: ReviewOptions = {},
): Promise<LineCount[]> {
  const { scratchRoot = tmpdir(), leftovers, scratch: prepared } = options;
  const counted = changes.filter((c) => (c.before === null || isContent(c.before)) && (c.after === null || isContent(c.after)));
  const kept = startContentsReader(startContents);
  // Bytes at hand that hash to the state's blob id are that blob's content, wherever git would
  // read it from: the file on disk for an end state, the start copy for a start state. Only the
  // other states are asked of the object database.
  const verified = new Map<string, Buffer>(options.contents ?? []);
  const verify = (blob: string, read: () => Buffer | null) => {
    if (verified.has(blob)) return;
    const bytes = read();
    if (bytes !== null && blobId(bytes) === blob) verified.set(blob, bytes);
  };
  const blobs = new Set<string>();
  for (const change of counted) {
    if (sameContent(change)) continue;
    if (change.before) verify(change.before.blob, () => kept(change.before?.blob ?? ""));
    if (change.after) verify(change.after.blob, () => diskContent(root, change.path, CONTENT_LIMITS.FILE_BYTES));
    for (const state of [change.before, change.after]) if (state && !verified.has(state.blob)) blobs.add(state.blob);
  }
  if (options.needed) options.needed.objects = blobs.size > 0;
  const sizes = await objectSizes(context, [...blobs]);
  const fromObjects = await readObjects(
    context,
    [...sizes].filter(([, size]) => size <= CONTENT_LIMITS.FILE_BYTES).map(([blob]) => blob),
  );
  // A scratch repository the caller prepared is the caller's to remove; one opened here (only when
  // some file needs git's count) is removed here.
  let opened: ScratchRepository | undefined;
  try {
    let bytes = 0;
    const content = (state: FileState, path: string, side: "start" | "end"): Buffer | null => {
      const known = verified.get(state.blob) ?? fromObjects.get(state.blob);
      if (known) return known;
      if (sizes.has(state.blob)) return null; // stored, but too large to count
      if (side === "end") return diskContent(root, path, CONTENT_LIMITS.FILE_BYTES);
      return kept(state.blob);
    };
    const sides = new ScratchSides();
    const results: (LineCount | null)[] = counted.map(() => null);
    for (const [index, change] of counted.entries()) {
      if (sameContent(change)) {
        results[index] = { path: change.path, added: 0, removed: 0 };
        continue;
      }
      const before = change.before ? content(change.before, change.path, "start") : Buffer.alloc(0);
      const after = change.after ? content(change.after, change.path, "end") : Buffer.alloc(0);
      if (before === null || after === null) continue;
      bytes += before.length + after.length;
      if (bytes > CONTENT_LIMITS.TOTAL_BYTES) break;
      // A missing side stays absent, so git counts a whole added or removed file.
      const [start, end] = [change.before ? before : null, change.after ? after : null];
      const quick = quickCounts(start, end);
      if (quick !== "binary") options.sides?.set(change.path, { before: start, after: end });
      if (quick !== null) {
        results[index] = quick === "binary" ? { path: change.path, binary: true } : { path: change.path, ...quick };
        continue;
      }
      sides.add(index, start, end);
      // Equal bytes (e.g. a state that only differs after git's conversions) are not reported by git: 0/0.
      results[index] = { path: change.path, added: 0, removed: 0 };
    }
    if (options.needed) options.needed.scratch = !sides.empty;
    if (!sides.empty) {
      const scratch = prepared ?? ScratchRepository.open(scratchRoot);
      if (scratch !== prepared) opened = scratch;
      for (const [index, counts] of await scratch.numstat(sides)) {
        const change = counted[index];
        if (!change) continue;
        results[index] = counts === "binary" ? { path: change.path, binary: true } : { path: change.path, ...counts };
      }
    }
    return results.filter((result): result is LineCount => result !== null);
  } finally {
    // The scratch copies are private to this call: with `leftovers`, the caller removes them
    // when it suits it (after the tool's answer went out) instead of on the way.
    if (opened) {
      const scratch = opened;
      if (leftovers) leftovers.push(() => scratch.remove());
      else await scratch.remove();
    }
  }
}

/**
 * The branch checked out (null when HEAD is detached): as `git status` named it when the end
 * state was observed (`known`), else asked of git.
 */
async function currentBranch(context: GitContext, known: string | null | undefined): Promise<string | null> {
  if (known !== undefined) return known === null ? null : readableWarning(known).slice(0, WIRE_LIMITS.BRANCH_CHARS);
  try {
    const name = (await runGit(context, ["symbolic-ref", "-q", "--short", "HEAD"])).toString("utf8").trim();
    return name === "" ? null : readableWarning(name).slice(0, WIRE_LIMITS.BRANCH_CHARS);
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return null;
    throw error;
  }
}

const FIELD = "\u001f";

/**
 * Commits reachable from `head` and not from `startHead` (all of `head`'s history when the task
 * started before the first commit), newest first, with their `Waymark-Task:` trailer.
 */
export async function commitsSince(
  context: GitContext,
  startHead: string | null,
  head: string | null,
): Promise<{ commits: CommitInfo[]; omitted: number }> {
  if (head === null || head === startHead) return { commits: [], omitted: 0 };
  const range = startHead === null ? [head] : [head, `^${startHead}`];
  const out = await runGit(context, [
    "log",
    "-z",
    "--no-show-signature",
    "--no-decorate",
    "--no-color",
    `-n${REVIEW_LIMITS.COMMITS + 1}`,
    "--format=%h%x1f%s%x1f%(trailers:key=Waymark-Task,valueonly,separator=%x2C)",
    ...range,
    "--",
  ]);
  const commits: CommitInfo[] = [];
  for (const record of splitNul(out)) {
    const [sha = "", subject = "", trailer = ""] = record.toString("utf8").split(FIELD);
    if (!REVIEW_LIMITS.SHORT_SHA.test(sha)) continue;
    const commit: CommitInfo = { sha, subject: clip(readableWarning(subject.trim()), REVIEW_LIMITS.SUBJECT_CHARS) };
    const task = readableWarning(trailer.split(",")[0]?.trim() ?? "").slice(0, 64);
    if (task !== "") commit.task = task;
    commits.push(commit);
  }
  if (commits.length <= REVIEW_LIMITS.COMMITS) return { commits, omitted: 0 };
  const total = Number((await runGit(context, ["rev-list", "--count", ...range, "--"])).toString("latin1").trim());
  return { commits: commits.slice(0, REVIEW_LIMITS.COMMITS), omitted: total - REVIEW_LIMITS.COMMITS };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The review block of a git task: line counts of its net changes, its commits, the branch.
 */
export async function measureReview(
  context: GitContext,
  start: LocalGitSnapshot,
  endHead: string | null,
  changes: readonly PathChange[],
  startContents: string | undefined,
  options: ReviewOptions = {},
): Promise<ReviewData> {
  const listed = changes.slice(0, WIRE_LIMITS.HELPER_LIST_ENTRIES);
  const [lines, log, branch] = await Promise.all([
    countLines(context, start.root, listed, startContents, options),
    commitsSince(context, start.head, endHead),
    currentBranch(context, options.endBranch),
  ]);
  const review: ReviewData = { lines, commits: log.commits, branch };
  if (log.omitted > 0) review.commits_omitted = log.omitted;
  return review;
}
