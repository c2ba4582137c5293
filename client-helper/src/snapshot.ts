/**
 * @module snapshot
 * What the helper observes in a project directory: at start, HEAD and the state in HEAD and
 * on disk of every dirty, untracked or hidden (skip-worktree, assume-unchanged) path; at the
 * end, the same plus the commits since. Outside what git tracks, a checksum scan. States on
 * disk are computed the way git would record them (its content conversions and mode rules).
 */

import { createHash } from "node:crypto";
import { lstatSync, readFileSync, readlinkSync, realpathSync, type Stats, statSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { isAbsolute, join, relative, sep } from "node:path";
import { decodeWirePath } from "@waymark/protocol/paths";
import type { Changes, ChecksumSnapshot, DirtyEntry, FileState, GitChanges, Snapshot, Transition } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { compareScans, type ScanOptions, scanDirectory } from "./checksum.js";
import { headFromFiles } from "./git/head-files.js";
import { inertContext, plainContext } from "./git/inert-config.js";
import { fileState, type HiddenEntry, type StatusRecord, type StatusResult } from "./git/porcelain.js";
import { type GitContext, GitError } from "./git/process.js";
import {
  gitDiffCommits,
  gitHasCommit,
  gitHashFiles,
  gitHead,
  gitHiddenEntries,
  gitIgnoresDirectory,
  gitStatus,
  gitSubmoduleHead,
  gitToplevel,
} from "./git/queries.js";
import { blobId, fsPath, isMissing } from "./hash.js";
import type { LocalGitSnapshot, LocalSnapshot } from "./local.js";
import { compareUnrunFilters } from "./unrun-filters.js";
import { attributesOnDisk, isAttributesPath, repositoryStoresVerbatim, VERBATIM_MAX_BYTES } from "./verbatim-blobs.js";

const GITLINK = "160000";
const SYMLINK = "120000";
const REGULAR = new Set(["100644", "100755"]);

/** A failure to observe the project, worded for the person who has to fix it. */
export class ObservationError extends Error {
  override name = "ObservationError";
}

/** How to learn a path's state on disk once all status records are read. */
type Plan = {
  path: string;
  head: FileState | null;
  /** Known without touching the disk (the worktree equals the index, or the file is gone). */
  known?: FileState | null;
  /** git's view of the worktree mode (the index mode when core.fileMode or core.symlinks is off). */
  modeHint?: string;
  submodule?: boolean;
  /** Flagged in the index so that status does not look: read the disk, and keep only if it differs from HEAD. */
  hidden?: HiddenEntry;
};

function planFor(record: StatusRecord): Plan {
  switch (record.kind) {
    case "tracked": {
      const head = fileState(record.headMode, record.headBlob);
      const y = record.xy[1];
      if (y === "D") return { path: record.path, head, known: null };
      // Y "." means status compared the working tree with the index and found them
      // equal, so the index entry is the worktree state: no need to read the file.
      if (y === "." && record.indexMode !== "000000")
        return { path: record.path, head, known: fileState(record.indexMode, record.indexBlob) };
      const submodule = record.submodule[0] === "S" || record.worktreeMode === GITLINK;
      if (submodule && record.submodule[1] !== "C" && record.indexMode === GITLINK) {
        return { path: record.path, head, known: fileState(record.indexMode, record.indexBlob) };
      }
      return { path: record.path, head, modeHint: record.worktreeMode, submodule };
    }
    case "unmerged":
      return { path: record.path, head: fileState(record.oursMode, record.oursBlob), modeHint: record.worktreeMode };
    case "untracked":
      // An untracked nested repository: git would record a gitlink.
      return record.directory ? { path: record.path, head: null, submodule: true } : { path: record.path, head: null };
  }
}

/** The mode git records for a file found on disk, under the repository's core.fileMode and core.symlinks. */
function recordedMode(context: GitContext, stats: Stats, modeHint: string | undefined): string | null {
  if (stats.isSymbolicLink()) return SYMLINK;
  if (!stats.isFile()) return null;
  // Without symlink support git checks a link out as a file holding its target, and keeps its mode.
  if (!context.symlinks && modeHint === SYMLINK) return SYMLINK;
  if (!context.fileMode) return modeHint && REGULAR.has(modeHint) ? modeHint : "100644";
  return stats.mode & 0o100 ? "100755" : "100644";
}

/**
 * The on-disk state of every planned path. Regular files are hashed by git in one batch
 * (through its conversions, without writing objects); links are hashed here (git does not
 * convert them); submodules report their checked-out commit.
 */
async function worktreeStates(
  context: GitContext,
  root: string,
  plans: readonly Plan[],
  attributesApply: ((path: string) => boolean) | null,
  contents?: Contents,
): Promise<(FileState | null)[]> {
  const states: (FileState | null)[] = new Array(plans.length).fill(null);
  const toHash: { index: number; mode: string }[] = [];
  const submodules: number[] = [];
  plans.forEach((plan, index) => {
    if (plan.known !== undefined) {
      states[index] = plan.known;
      return;
    }
    if (plan.submodule) {
      submodules.push(index);
      return;
    }
    const abs = fsPath(root, plan.path);
    let stats: Stats;
    try {
      stats = lstatSync(abs);
    } catch (error) {
      if (isMissing(error)) {
        // Sparse checkouts leave skip-worktree files off the disk: absent there means unchanged.
        states[index] = plan.hidden?.flag === "skip-worktree" ? plan.hidden.index : null;
        return;
      }
      throw error;
    }
    const mode = recordedMode(context, stats, plan.modeHint);
    if (mode === SYMLINK && stats.isSymbolicLink()) {
      try {
        states[index] = { mode, blob: blobId(readlinkSync(abs, { encoding: "buffer" })) };
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    } else if (mode !== null) {
      // Stored as its bytes (./verbatim-blobs.ts): its blob id is theirs, no git process needed.
      if (attributesApply && stats.size <= VERBATIM_MAX_BYTES && !attributesApply(plan.path))
        states[index] = verbatimState(abs, mode, contents);
      else toHash.push({ index, mode });
    }
  });
  const blobs = await gitHashFiles(
    context,
    toHash.map(({ index }) => decodeWirePath((plans[index] as Plan).path) ?? new Uint8Array()),
  );
  toHash.forEach(({ index, mode }, at) => {
    const blob = blobs[at] ?? rawBlob(fsPath(root, (plans[index] as Plan).path));
    states[index] = blob ? { mode, blob } : null;
  });
  await Promise.all(
    submodules.map(async (index) => {
      const abs = fsPath(root, (plans[index] as Plan).path);
      try {
        await lstat(Buffer.concat([abs, Buffer.from(`${sep}.git`)]));
      } catch (error) {
        if (isMissing(error)) return;
        throw error;
      }
      const commit = await gitSubmoduleHead(context, abs.toString("utf8"));
      states[index] = commit ? { mode: GITLINK, blob: commit } : null;
    }),
  );
  return states;
}

/** A regular file's state from its bytes (kept in `contents` within its budget); null when it is gone by now. */
function verbatimState(path: Buffer, mode: string, contents?: Contents): FileState | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  const blob = blobId(bytes);
  contents?.keep(blob, bytes);
  return { mode, blob };
}

/**
 * Contents read while hashing the end state, by blob id, for the line counts of the same call
 * (./review-measures.ts) not to read them again; bounded, beyond which they are read again there.
 */
class Contents {
  readonly byBlob = new Map<string, Buffer>();
  private bytes = 0;

  keep(blob: string, content: Buffer): void {
    if (this.bytes + content.length > KEPT_CONTENT_BYTES) return;
    this.bytes += content.length;
    this.byBlob.set(blob, content);
  }
}

const KEPT_CONTENT_BYTES = 32 * 1024 * 1024;

/** The blob id of a file git could not hash: its raw content, or null when it is really gone (an agent deleted it meanwhile). */
function rawBlob(path: Buffer): string | null {
  try {
    return blobId(readFileSync(path));
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Turns status records (and hidden index entries) into DirtyEntries, hashing only what git did not already compare. */
export async function dirtyEntries(
  context: GitContext,
  root: string,
  status: StatusResult,
  hidden: readonly HiddenEntry[] = [],
  gitDir?: string,
  contents?: Contents,
): Promise<DirtyEntry[]> {
  const plans = new Map<string, Plan>();
  for (const record of status.records) {
    const plan = planFor(record);
    const seen = plans.get(plan.path);
    // `git rm --cached f` reports f twice: deleted from the index (with its HEAD state)
    // and untracked (on disk). Keep the HEAD state and read the disk.
    if (seen) plans.set(plan.path, { path: plan.path, head: seen.head ?? plan.head });
    else plans.set(plan.path, plan);
  }
  for (const entry of hidden) {
    if (entry.index.mode === GITLINK) continue;
    const seen = plans.get(entry.path);
    // Not in status: the index (which status compared with HEAD) is HEAD for this path.
    const head = seen ? seen.head : entry.index;
    plans.set(entry.path, { path: entry.path, head, modeHint: entry.index.mode, hidden: entry });
  }
  const list = [...plans.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // A .gitattributes tracked but changed or hidden (git may read it from the index): every file goes through git.
  const verbatim =
    gitDir !== undefined &&
    repositoryStoresVerbatim(context, gitDir) &&
    !status.records.some((record) => isAttributesPath(record.path)) &&
    !hidden.some((entry) => isAttributesPath(entry.path));
  const states = await worktreeStates(context, root, list, verbatim ? attributesOnDisk(root) : null, contents);
  const inStatus = new Set(status.records.map((record) => record.path));
  const entries: DirtyEntry[] = [];
  list.forEach((plan, index) => {
    const worktree = states[index] ?? null;
    const unchangedHidden =
      plan.hidden !== undefined && !inStatus.has(plan.path) && worktree?.mode === plan.head?.mode && worktree?.blob === plan.head?.blob;
    if (!unchangedHidden) entries.push({ path: plan.path, head: plan.head, worktree });
  });
  return entries;
}

export type SnapshotOptions = ScanOptions & {
  /**
   * The inert git context of the project directory, when the caller already reads it for other
   * queries of the same tool call: the repository's config is then read once per call.
   */
  context?: Promise<GitContext>;
  /** The caller's `gitToplevel` of the project directory, when it already asked (the context may depend on it). */
  toplevel?: Promise<{ root: string; gitDir: string } | null>;
};

/** git's words for a failure, turned into what happened and how to fix it. */
export function explainGitFailure(error: unknown, dir: string): Error {
  if (!(error instanceof GitError)) return error instanceof Error ? error : new Error(String(error));
  const owner = /detected dubious ownership in repository at '([^']+)'/.exec(error.stderr);
  if (owner) {
    return new ObservationError(
      `git refuses to read ${owner[1]}: the repository is owned by another user (git's "dubious ownership" check), so file changes were not computed. If you trust it, run: git config --global --add safe.directory '${owner[1]}'`,
    );
  }
  if (/must be run in a work tree|bare repository/i.test(error.stderr)) {
    return new ObservationError(
      `${dir} is inside a bare git repository (no working tree), so there are no files to observe. Point the helper at a checkout: --dir <checkout> or the MCP client's project root.`,
    );
  }
  return new ObservationError(`git failed in ${dir}, so file changes were not computed: ${error.stderr || error.message}`);
}

/** The state of `dir` now: git HEAD + dirty paths, or a checksum scan outside what git tracks. */
export async function takeSnapshot(dir: string, options: SnapshotOptions = {}): Promise<LocalSnapshot> {
  // Checked first: a missing directory must fail, not read as an empty checksum scan.
  // One stat, done at once: git status waits for it.
  const info = statSync(dir, { throwIfNoEntry: false });
  if (!info) {
    throw new ObservationError(
      `the project directory ${dir} does not exist, so file changes were not computed. Check --dir or the MCP client's project root.`,
    );
  }
  if (!info.isDirectory()) throw new ObservationError(`the project path ${dir} is not a directory; point --dir at the project folder.`);
  // The top-level lookup runs nothing the repository could define, so it need not wait for the config read.
  const [root, context] = await Promise.allSettled([
    options.toplevel ?? gitToplevel(plainContext(dir)),
    options.context ?? inertContext(dir),
  ]);
  if (root.status === "rejected") throw explainGitFailure(root.reason, dir);
  if (context.status === "rejected") throw explainGitFailure(context.reason, dir);
  if (root.value === null) return scanDirectory(dir, options);
  const { root: top, gitDir } = root.value;
  // Porcelain status paths are relative to the repository root whatever the working directory.
  const rootContext = { ...context.value, cwd: top };
  const [status, hidden, ignored] = await Promise.allSettled([
    gitStatus(rootContext),
    gitHiddenEntries(rootContext, join(gitDir, "index")),
    ignoredByRepository(rootContext, top, dir),
  ]);
  if (ignored.status === "fulfilled" && ignored.value) {
    const scan = await scanDirectory(dir, options);
    scan.warnings = [
      `The project directory ${dir} is ignored by the enclosing git repository at ${top}, so git cannot see its files: changes were compared by checksums instead. Make it a repository of its own (git init) or stop ignoring it to get commit-level detail.`,
    ];
    return scan;
  }
  if (status.status === "rejected") throw explainGitFailure(status.reason, dir);
  if (hidden.status === "rejected") throw explainGitFailure(hidden.reason, dir);
  const { head, branch } = status.value;
  const contents = new Contents();
  const dirty = await dirtyEntries(rootContext, top, status.value, hidden.value, gitDir, contents);
  const ignoreRules = ignoreRulesDigest(rootContext, gitDir);
  const snapshot: LocalGitSnapshot = {
    type: "git",
    root: top,
    head,
    branch: clipBranch(branch),
    dirty,
    git_dir: gitDir,
    ignore_rules: ignoreRules,
  };
  snapshotContents.set(snapshot, contents.byBlob);
  storedBlobs.set(snapshot, blobsInObjects(status.value, hidden.value));
  return snapshot;
}

/** The blobs status names as HEAD's or the index's (so in the object database), the hidden entries' index blobs too. */
function blobsInObjects(status: StatusResult, hidden: readonly HiddenEntry[]): Set<string> {
  const blobs = new Set<string>();
  for (const record of status.records) {
    if (record.kind === "tracked") blobs.add(record.headBlob).add(record.indexBlob);
    else if (record.kind === "unmerged") blobs.add(record.oursBlob);
  }
  for (const entry of hidden) blobs.add(entry.index.blob);
  return blobs;
}

/**
 * True when the project directory lies inside the repository's work tree but git ignores it
 * (a project kept in an ignored folder of an enclosing repository): git then sees none of its files.
 */
async function ignoredByRepository(context: GitContext, root: string, dir: string): Promise<boolean> {
  // git reports the top level with symlinks resolved: compare like with like (one realpath(3) each,
  // as fs/promises' realpath makes it, without two trips through the thread pool).
  const inside = relative(realpathSync.native(root), realpathSync.native(dir));
  if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) return false;
  return gitIgnoresDirectory(context, inside.split(sep).join("/")).catch(() => false);
}

/** A branch name is context for people; an absurdly long one is cut rather than refused. */
function clipBranch(branch: string | null): string | null {
  if (branch === null || branch.length <= WIRE_LIMITS.BRANCH_CHARS) return branch;
  return `${branch.slice(0, WIRE_LIMITS.BRANCH_CHARS - 1)}…`;
}

/** What goes to the edge at start_task: never the local checksum list. */
export function wireSnapshot(snapshot: LocalSnapshot): Snapshot {
  if (snapshot.type === "checksum") {
    const wire: ChecksumSnapshot = { type: "checksum", files: snapshot.files, digest: snapshot.digest };
    if (snapshot.warnings) wire.warnings = snapshot.warnings;
    return wire;
  }
  const wire: Snapshot = { type: "git", head: snapshot.head, branch: snapshot.branch ?? null, dirty: snapshot.dirty };
  if (snapshot.warnings) wire.warnings = snapshot.warnings;
  return wire;
}

/**
 * A digest of the ignore rules kept outside the working tree: .git/info/exclude and a
 * core.excludesFile set by the repository's config. Edits to them are not file changes, yet
 * they decide which new files status reports, so a change during a task is worth a warning.
 */
function ignoreRulesDigest(context: GitContext, gitDir: string): string {
  let exclude: Buffer;
  try {
    // One small file: read at once rather than through the thread pool.
    exclude = readFileSync(join(gitDir, "info", "exclude"));
  } catch {
    exclude = Buffer.from("(none)");
  }
  return createHash("sha256")
    .update(`${context.localExcludesFile ?? ""}\0`)
    .update(exclude)
    .digest("hex");
}

/** The branch `git status` named with each set of git changes computed here (not part of the wire data). */
const branches = new WeakMap<Changes, string | null>();
/** The dirty files' contents read while taking each git snapshot, until the start contents are kept (take-once). */
const snapshotContents = new WeakMap<LocalSnapshot, ReadonlyMap<string, Buffer>>();

/** Blobs each git snapshot's status named as stored (HEAD's, the index's): the start contents need no copy of them. */
const storedBlobs = new WeakMap<LocalSnapshot, ReadonlySet<string>>();

/** The blobs the status of `snapshot` named as HEAD's or the index's; undefined when it was not taken in this process. */
export function blobsStoredAt(snapshot: LocalSnapshot): ReadonlySet<string> | undefined {
  return storedBlobs.get(snapshot);
}

/** The dirty files' contents read while taking `snapshot`, by blob id, once (they are not kept beyond). */
export function takeSnapshotContents(snapshot: LocalSnapshot): ReadonlyMap<string, Buffer> | undefined {
  const contents = snapshotContents.get(snapshot);
  snapshotContents.delete(snapshot);
  return contents;
}

/** The end-state contents read while computing each set of git changes (not part of the wire data). */
const contentsRead = new WeakMap<Changes, ReadonlyMap<string, Buffer>>();

/** Contents of `changes`' end states read while computing them, by blob id; undefined when none were kept. */
export function observedContents(changes: Changes): ReadonlyMap<string, Buffer> | undefined {
  return contentsRead.get(changes);
}

/** The branch checked out when `changes` were observed (null: detached HEAD); undefined when not known. */
export function observedBranch(changes: Changes): string | null | undefined {
  return branches.get(changes);
}

async function gitChanges(since: LocalGitSnapshot, known?: Promise<GitContext>): Promise<GitChanges> {
  const root = since.root;
  const context = { ...(await (known ?? inertContext(root))), cwd: root };
  const diff = async (to: string | null): Promise<Transition[]> => {
    if (to === since.head) return [];
    try {
      return await gitDiffCommits(context, since.head, to);
    } catch (error) {
      if (since.head !== null && !(await gitHasCommit(context, since.head))) {
        throw new ObservationError(
          `the task's start commit ${since.head} is no longer in the repository (garbage-collected after a rebase, reset or amend and a gc), so the changes since it cannot be computed. Complete tasks before rewriting and pruning history, or keep reflogs longer (gc.reflogExpire).`,
        );
      }
      throw explainGitFailure(error, root);
    }
  };
  // status and the commit diff run concurrently against the HEAD read just before; if
  // a commit lands in between, status reports another HEAD and the pair is taken again.
  for (let attempt = 1; ; attempt++) {
    const contents = new Contents();
    const headNow = (await headFromFiles(root)) ?? (await gitHead(context));
    const [status, committed, hidden] = await Promise.all([
      gitStatus(context).catch((error: unknown) => Promise.reject(explainGitFailure(error, root))),
      diff(headNow),
      gitHiddenEntries(context, since.git_dir === undefined ? undefined : join(since.git_dir, "index")),
    ]);
    if (status.head !== headNow && attempt < 3) continue;
    const changes: GitChanges = {
      type: "git",
      start_head: since.head,
      head: status.head,
      committed: status.head === headNow ? committed : await diff(status.head),
      dirty: await dirtyEntries(context, root, status, hidden, since.git_dir, contents),
    };
    if (since.git_dir && since.ignore_rules && since.ignore_rules !== ignoreRulesDigest(context, since.git_dir)) {
      changes.warnings = [
        `The repository's own ignore rules (${join(since.git_dir, "info", "exclude")} or core.excludesFile in its config) changed during the task: files they now ignore are not listed. Check that no new file was hidden this way.`,
      ];
    }
    // Files behind a filter the repository defines are compared by their bytes where git's ids cannot be.
    await compareUnrunFilters(context, root, since, changes);
    branches.set(changes, status.branch);
    contentsRead.set(changes, contents.byBlob);
    return changes;
  }
}

/** Changes of `since`'s directory from that snapshot to now. */
export async function computeChanges(since: LocalSnapshot, options: SnapshotOptions = {}): Promise<Changes> {
  if (since.type === "git") return gitChanges(since, options.context);
  const now = await scanDirectory(since.root, { ...options, previous: options.previous ?? since });
  const changes: Changes = { type: "checksum", transitions: compareScans(since, now) };
  if (since.warnings) changes.warnings = since.warnings;
  return changes;
}
