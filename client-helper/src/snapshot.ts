import { lstat, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Changes, ChecksumSnapshot, DirtyEntry, FileState, GitChanges, Snapshot, Transition } from "@waymark/protocol/wire";
import { compareScans, type ScanOptions, scanDirectory } from "./checksum.js";
import {
  fileState,
  type GitContext,
  gitDiffCommits,
  gitHead,
  gitStatus,
  gitSubmoduleHead,
  gitToplevel,
  headFromFiles,
  inertContext,
  type StatusRecord,
  type StatusResult,
} from "./git.js";
import { hashPathQuick, isMissing, mapLimit } from "./hash.js";
import type { LocalGitSnapshot, LocalSnapshot } from "./local.js";

const HASH_CONCURRENCY = 32;
const GITLINK = "160000";
const REGULAR = new Set(["100644", "100755"]);

/** How to learn a path's state on disk once all status records are read. */
type Plan = {
  path: string;
  head: FileState | null;
  /** Known without touching the disk (the worktree equals the index, or the file is gone). */
  known?: FileState | null;
  /** git's view of the worktree mode; honours core.fileMode=false where lstat cannot. */
  modeHint?: string;
  submodule?: boolean;
};

function planFor(record: StatusRecord): Plan {
  switch (record.kind) {
    case "tracked": {
      const head = fileState(record.mH, record.hH);
      const y = record.xy[1];
      if (y === "D") return { path: record.path, head, known: null };
      // Y "." means status compared the working tree with the index and found them
      // equal, so the index entry is the worktree state: no need to read the file.
      if (y === "." && record.mI !== "000000")
        return {
          path: record.path,
          head,
          known: fileState(record.mI, record.hI),
        };
      const submodule = record.sub[0] === "S" || record.mW === GITLINK;
      if (submodule && record.sub[1] !== "C" && record.mI === GITLINK) {
        return {
          path: record.path,
          head,
          known: fileState(record.mI, record.hI),
        };
      }
      return { path: record.path, head, modeHint: record.mW, submodule };
    }
    case "unmerged":
      return {
        path: record.path,
        head: fileState(record.m2, record.h2),
        modeHint: record.mW,
      };
    case "untracked":
      // An untracked nested repository is reported as "dir/": git would record a gitlink.
      return record.directory ? { path: record.path, head: null, submodule: true } : { path: record.path, head: null };
  }
}

async function worktreeState(context: GitContext, root: string, plan: Plan): Promise<FileState | null> {
  if (plan.known !== undefined) return plan.known;
  const abs = join(root, plan.path);
  if (plan.submodule) {
    try {
      await lstat(join(abs, ".git"));
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    const commit = await gitSubmoduleHead(context, abs);
    return commit ? { mode: GITLINK, blob: commit } : null;
  }
  const state = await hashPathQuick(abs);
  if (state && plan.modeHint && REGULAR.has(plan.modeHint) && REGULAR.has(state.mode)) {
    return { mode: plan.modeHint, blob: state.blob };
  }
  return state;
}

/** Turns status records into DirtyEntries, hashing only files whose worktree differs from the index. */
export async function dirtyEntries(context: GitContext, root: string, status: StatusResult): Promise<DirtyEntry[]> {
  const plans = new Map<string, Plan>();
  for (const record of status.records) {
    const plan = planFor(record);
    const seen = plans.get(plan.path);
    // `git rm --cached f` reports f twice: deleted from the index (with its HEAD state)
    // and untracked (on disk). Keep the HEAD state and read the disk.
    if (seen) plans.set(plan.path, { path: plan.path, head: seen.head ?? plan.head });
    else plans.set(plan.path, plan);
  }
  const list = [...plans.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return mapLimit(list, HASH_CONCURRENCY, async (plan) => ({
    path: plan.path,
    head: plan.head,
    worktree: await worktreeState(context, root, plan),
  }));
}

export type SnapshotOptions = ScanOptions;

/** The state of `dir` now: git HEAD + dirty paths, or a checksum scan outside git. */
export async function takeSnapshot(dir: string, options: SnapshotOptions = {}): Promise<LocalSnapshot> {
  // Checked first: a missing directory must fail, not read as an empty checksum scan.
  if (!(await stat(dir)).isDirectory()) throw new Error(`not a directory: ${dir}`);
  // Porcelain status paths are relative to the repository root whatever the working
  // directory, so status can run in `dir` alongside the top-level lookup.
  const context = await inertContext(dir);
  const [root, status] = await Promise.allSettled([gitToplevel(context), gitStatus(context)]);
  if (root.status === "rejected") throw root.reason;
  if (root.value === null) return scanDirectory(dir, options);
  if (status.status === "rejected") throw status.reason;
  const { head, branch } = status.value;
  const rootContext = { ...context, cwd: root.value };
  return { type: "git", root: root.value, head, branch, dirty: await dirtyEntries(rootContext, root.value, status.value) };
}

/** What goes to the edge at start_task: never the local checksum list. */
export function wireSnapshot(snapshot: LocalSnapshot): Snapshot {
  if (snapshot.type === "checksum") {
    const wire: ChecksumSnapshot = {
      type: "checksum",
      files: snapshot.files,
      digest: snapshot.digest,
    };
    return wire;
  }
  const wire: Snapshot = {
    type: "git",
    head: snapshot.head,
    branch: snapshot.branch ?? null,
    dirty: snapshot.dirty,
  };
  return wire;
}

async function gitChanges(since: LocalGitSnapshot): Promise<GitChanges> {
  const root = since.root;
  const context = await inertContext(root);
  const diff = (to: string | null): Promise<Transition[]> =>
    to === since.head ? Promise.resolve([]) : gitDiffCommits(context, since.head, to);
  // status and the commit diff run concurrently against the HEAD read just before; if
  // a commit lands in between, status reports another HEAD and the pair is taken again.
  for (let attempt = 1; ; attempt++) {
    const headNow = (await headFromFiles(root)) ?? (await gitHead(context));
    const [status, committed] = await Promise.all([gitStatus(context), diff(headNow)]);
    if (status.head !== headNow && attempt < 3) continue;
    return {
      type: "git",
      start_head: since.head,
      head: status.head,
      committed: status.head === headNow ? committed : await diff(status.head),
      dirty: await dirtyEntries(context, root, status),
    };
  }
}

/** Changes of `since`'s directory from that snapshot to now. */
export async function computeChanges(since: LocalSnapshot, options: SnapshotOptions = {}): Promise<Changes> {
  if (since.type === "git") return gitChanges(since);
  const now = await scanDirectory(since.root, {
    ...options,
    previous: options.previous ?? since,
  });
  return {
    type: "checksum",
    transitions: compareScans(since.entries, now.entries),
  };
}
