import type { Changes, DirtyEntry, FileState, Snapshot, Transition } from "./types.js";

// The edge's resolution rule (docs/attribution.md, "How the edge resolves a path"),
// kept here so the helper can show humans the same A/M/D list the edge will compute and
// so helper tests can hold every row of the attribution table to it.

export type ChangeStatus = "A" | "M" | "D";

export type ResolvedFile = {
  path: string;
  status: ChangeStatus;
  before: FileState | null;
  after: FileState | null;
  /** git only: true when the change is in commits and nothing is left uncommitted. */
  committed: boolean | null;
};

export type Resolution = {
  files: ResolvedFile[];
  added: string[];
  modified: string[];
  deleted: string[];
  renamed: { from: string; to: string }[];
};

export function sameState(a: FileState | null, b: FileState | null): boolean {
  if (a === null || b === null) return a === b;
  return a.mode === b.mode && a.blob === b.blob;
}

function classify(before: FileState | null, after: FileState | null): ChangeStatus | null {
  if (sameState(before, after)) return null;
  if (before === null) return "A";
  if (after === null) return "D";
  return "M";
}

function byPath<T extends { path: string }>(items: readonly T[]): Map<string, T> {
  return new Map(items.map((item) => [item.path, item]));
}

function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function resolveGit(startDirty: readonly DirtyEntry[], committed: readonly Transition[], endDirty: readonly DirtyEntry[]): ResolvedFile[] {
  const start = byPath(startDirty);
  const commits = byPath(committed);
  const end = byPath(endDirty);
  const paths = new Set([...start.keys(), ...commits.keys(), ...end.keys()]);
  const files: ResolvedFile[] = [];
  for (const path of [...paths].sort(comparePaths)) {
    const s = start.get(path);
    const c = commits.get(path);
    const e = end.get(path);
    const before = s ? s.worktree : c ? c.before : (e?.head ?? null);
    const after = e ? e.worktree : c ? c.after : (s?.head ?? null);
    const status = classify(before, after);
    // Committed only if a commit carried it: a dirty file the task restored is clean without any commit.
    if (status) files.push({ path, status, before, after, committed: c !== undefined && e === undefined });
  }
  return files;
}

const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

function entryKind(mode: string): string {
  return mode === "120000" || mode === "160000" ? mode : "file";
}

/**
 * Renames shown to humans: only the unambiguous ones (one deleted and one added entry of the
 * same kind with the same non-empty blob). The edge pairs the ambiguous cases too
 * (docs/attribution.md); this list is for display, the edge's is the record.
 */
function pairRenames(files: readonly ResolvedFile[]): { from: string; to: string }[] {
  const candidates = new Map<string, { from: string[]; to: string[] }>();
  const note = (state: FileState | null, side: "from" | "to", path: string) => {
    if (state === null || state.blob === EMPTY_BLOB) return;
    const key = `${entryKind(state.mode)} ${state.blob}`;
    const entry = candidates.get(key) ?? { from: [], to: [] };
    entry[side].push(path);
    candidates.set(key, entry);
  };
  for (const file of files) {
    if (file.status === "D") note(file.before, "from", file.path);
    if (file.status === "A") note(file.after, "to", file.path);
  }
  const renamed: { from: string; to: string }[] = [];
  for (const { from, to } of candidates.values()) {
    const [onlyFrom] = from;
    const [onlyTo] = to;
    if (from.length === 1 && to.length === 1 && onlyFrom !== undefined && onlyTo !== undefined)
      renamed.push({ from: onlyFrom, to: onlyTo });
  }
  return renamed.sort((a, b) => comparePaths(a.from, b.from));
}

/**
 * A/M/D per path from a start snapshot and the changes since. For a checksum
 * directory the transitions are already per path; only their kind is derived.
 */
export function resolveChanges(start: Snapshot, changes: Changes): Resolution {
  let files: ResolvedFile[];
  if (changes.type === "git") {
    if (start.type !== "git") throw new Error("git changes need a git start snapshot");
    files = resolveGit(start.dirty, changes.committed, changes.dirty);
  } else {
    files = [];
    for (const t of changes.transitions) {
      const status = classify(t.before, t.after);
      if (status)
        files.push({
          path: t.path,
          status,
          before: t.before,
          after: t.after,
          committed: null,
        });
    }
    files.sort((a, b) => comparePaths(a.path, b.path));
  }
  const pick = (status: ChangeStatus): string[] => files.filter((f) => f.status === status).map((f) => f.path);
  return {
    files,
    added: pick("A"),
    modified: pick("M"),
    deleted: pick("D"),
    renamed: pairRenames(files),
  };
}
