// The implementation this replaced, kept verbatim as the oracle of test/domain/edge-merge.test.ts.
/**
 * @module attribution
 * The attribution rule, shared by the helper and the edge: from a start snapshot and the
 * changes observed at the end, which paths a task added, modified or deleted
 * (docs/attribution.md, "How the edge resolves a path"), the files_changed summary with
 * renames paired, and the per-directory summary of lists too large to send.
 */
import { comparePaths, sortPaths } from "@waymark/protocol/paths";
import type {
  Changes,
  DirtyEntry,
  FileState,
  GitChanges,
  GitSnapshot,
  NetTransition,
  Snapshot,
  Transition,
  Truncation,
} from "@waymark/protocol/wire";

export type ChangeStatus = "A" | "M" | "D";
export interface PathChange {
  path: string;
  status: ChangeStatus;
  before: FileState | null;
  after: FileState | null;
  committed: boolean;
}
export interface FilesChanged {
  added: string[];
  modified: string[];
  deleted: string[];
  renamed: { from: string; to: string }[];
  uncommitted: string[];
  /** Present when the helper's lists were too large to send whole: what is not listed above. */
  truncated?: Truncation;
}

/** The end observations cannot be compared with the start snapshot; the message names the field. */
export class ChangesMismatchError extends Error {
  override name = "ChangesMismatchError";
}

/** git's blob id of empty content: every empty file has it, so it says nothing about renames. */
export const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

export function sameFileState(left: FileState | null, right: FileState | null): boolean {
  if (left === null || right === null) return left === right;
  return left.mode === right.mode && left.blob === right.blob;
}

/** null when nothing changed: equal states (reverts, add-then-delete) are not a change. */
export function changeStatus(before: FileState | null, after: FileState | null): ChangeStatus | null {
  if (sameFileState(before, after)) return null;
  if (before === null) return "A";
  return after === null ? "D" : "M";
}

/**
 * Net effect of one task: resolves each path's start and end state per docs/attribution.md and
 * keeps those that differ. Sorted by path. Throws ChangesMismatchError when the kinds differ,
 * when changes.start_head is not the snapshot's head, or when a list names a path twice with
 * different states. Checksum transitions are taken as they are, committed=false; `net`
 * transitions (resolved by the helper, for any kind of snapshot) as they are too.
 * `unavailable` changes carry no paths: their reason is a warning (see helperWarnings).
 */
export function computeNetChanges(snapshot: Snapshot, changes: Changes): PathChange[] {
  if (changes.type === "unavailable") return [];
  if (changes.type === "net") return netResolvedChanges(changes.transitions);
  if (snapshot.type === "git" && changes.type === "git") {
    if (snapshot.dirty_omitted !== undefined) {
      throw new ChangesMismatchError(
        'changes.type: the start snapshot\'s dirty list was summarised, so changes must be resolved ("net"), got "git"',
      );
    }
    return netGitChanges(snapshot, changes);
  }
  if (snapshot.type === "checksum" && changes.type === "checksum") {
    return netChecksumChanges(changes.transitions);
  }
  throw new ChangesMismatchError(`changes.type: must match the start snapshot's type ("${snapshot.type}"), got "${changes.type}"`);
}

function netGitChanges(snapshot: GitSnapshot, changes: GitChanges): PathChange[] {
  if (changes.start_head !== snapshot.head) {
    throw new ChangesMismatchError(
      `changes.start_head: must equal the start snapshot's head (${String(snapshot.head)}), got ${String(changes.start_head)}`,
    );
  }
  const startDirty = indexDirtyEntries(snapshot.dirty, "snapshot.dirty");
  const committed = indexTransitions(changes.committed, "changes.committed");
  const endDirty = indexDirtyEntries(changes.dirty, "changes.dirty");
  const paths = [...startDirty.keys()];
  for (const path of committed.keys()) {
    if (!startDirty.has(path)) paths.push(path);
  }
  for (const path of endDirty.keys()) {
    if (!startDirty.has(path) && !committed.has(path)) paths.push(path);
  }

  const netChanges: PathChange[] = [];
  for (const path of sortPaths(paths)) {
    const atStart = startDirty.get(path);
    const inCommits = committed.get(path);
    const atEnd = endDirty.get(path);
    // Each fallback relies on what the lists leave out: a path absent from the status query
    // has worktree = HEAD, and a path absent from the commit diff has HEAD then = HEAD now.
    const before = atStart ? atStart.worktree : inCommits ? inCommits.before : (atEnd?.head ?? null);
    const after = atEnd ? atEnd.worktree : inCommits ? inCommits.after : (atStart?.head ?? null);
    const status = changeStatus(before, after);
    if (status === null) continue;
    netChanges.push({
      path,
      status,
      before,
      after,
      committed: inCommits !== undefined && atEnd === undefined,
    });
  }
  return netChanges;
}

function netChecksumChanges(transitions: readonly Transition[]): PathChange[] {
  const byPath = indexTransitions(transitions, "changes.transitions");
  const netChanges: PathChange[] = [];
  for (const path of sortPaths([...byPath.keys()])) {
    const transition = byPath.get(path);
    if (transition === undefined) continue;
    const { before, after } = transition;
    const status = changeStatus(before, after);
    if (status !== null) netChanges.push({ path, status, before, after, committed: false });
  }
  return netChanges;
}

function netResolvedChanges(transitions: readonly NetTransition[]): PathChange[] {
  const byPath = indexTransitions(transitions, "changes.transitions");
  const netChanges: PathChange[] = [];
  for (const path of sortPaths([...byPath.keys()])) {
    const transition = byPath.get(path) as NetTransition;
    const status = changeStatus(transition.before, transition.after);
    if (status !== null) {
      netChanges.push({ path, status, before: transition.before, after: transition.after, committed: transition.committed ?? false });
    }
  }
  return netChanges;
}

function indexDirtyEntries(entries: readonly DirtyEntry[], field: string): Map<string, DirtyEntry> {
  return indexByPath(entries, field, (entry) => [entry.head, entry.worktree]);
}

function indexTransitions<Entry extends Transition>(transitions: readonly Entry[], field: string): Map<string, Entry> {
  return indexByPath(transitions, field, (transition) => [transition.before, transition.after]);
}

/** A path listed twice is tolerated when both entries agree; disagreeing entries leave no truth to pick. */
function indexByPath<Entry extends { path: string }>(
  entries: readonly Entry[],
  field: string,
  statesOf: (entry: Entry) => readonly [FileState | null, FileState | null],
): Map<string, Entry> {
  const byPath = new Map<string, Entry>();
  entries.forEach((entry, index) => {
    const earlier = byPath.get(entry.path);
    if (earlier === undefined) {
      byPath.set(entry.path, entry);
      return;
    }
    const [earlierFirst, earlierSecond] = statesOf(earlier);
    const [first, second] = statesOf(entry);
    if (!sameFileState(earlierFirst, first) || !sameFileState(earlierSecond, second)) {
      throw new ChangesMismatchError(`${field}[${index}].path: ${JSON.stringify(entry.path)} is listed again with different states`);
    }
  });
  return byPath;
}

/**
 * The reference files_changed shape plus additive fields. A D and an A with the same content
 * and the same kind of entry are paired in `renamed`; both paths stay in deleted/added too.
 * `uncommitted` lists paths whose change is not carried by a commit made during the task.
 * All lists sorted. `truncated` (from truncationOf) is carried as it is.
 */
export function summarizeChanges(changes: readonly PathChange[], truncated?: Truncation): FilesChanged {
  const added: string[] = [];
  const modified: string[] = [];
  const deleted: string[] = [];
  const uncommitted: string[] = [];
  const addedStates: PathChange[] = [];
  const deletedStates: PathChange[] = [];
  for (const change of changes) {
    if (change.status === "A") {
      added.push(change.path);
      addedStates.push(change);
    } else if (change.status === "D") {
      deleted.push(change.path);
      deletedStates.push(change);
    } else modified.push(change.path);
    if (!change.committed) uncommitted.push(change.path);
  }
  for (const list of [added, modified, deleted, uncommitted]) sortPaths(list);
  const summary: FilesChanged = { added, modified, deleted, renamed: pairRenames(deletedStates, addedStates), uncommitted };
  if (truncated) summary.truncated = truncated;
  return summary;
}

/**
 * Exact-content renames only (the wire carries no contents to measure similarity). Empty files
 * are never paired: they all share one blob, so a pairing would be a guess. A regular file and a
 * symlink with equal blobs are different things, so the key includes the kind of entry; the
 * executable bit may change in a rename.
 */
function pairRenames(deletedStates: readonly PathChange[], addedStates: readonly PathChange[]): { from: string; to: string }[] {
  const deletedByContent = groupByContent(deletedStates, (change) => change.before);
  const addedByContent = groupByContent(addedStates, (change) => change.after);
  const renamed: { from: string; to: string }[] = [];
  for (const [kind, deletedByBlob] of deletedByContent) {
    const addedByBlob = addedByContent.get(kind);
    if (addedByBlob === undefined) continue;
    for (const [blob, fromPaths] of deletedByBlob) {
      const toPaths = addedByBlob.get(blob);
      if (toPaths !== undefined) pairCandidates(fromPaths, toPaths, renamed);
    }
  }
  return renamed.sort((left, right) => comparePaths(left.from, right.from));
}

/** Paths by kind of entry, then by blob: nested maps, so no key string is built per path. */
function groupByContent(
  changes: readonly PathChange[],
  stateOf: (change: PathChange) => FileState | null,
): Map<EntryKind, Map<string, string[]>> {
  const groups = new Map<EntryKind, Map<string, string[]>>();
  for (const change of changes) {
    const state = stateOf(change);
    if (state === null || state.blob === EMPTY_BLOB) continue;
    const kind = entryKind(state.mode);
    let byBlob = groups.get(kind);
    if (byBlob === undefined) {
      byBlob = new Map();
      groups.set(kind, byBlob);
    }
    const group = byBlob.get(state.blob);
    if (group === undefined) byBlob.set(state.blob, [change.path]);
    else group.push(change.path);
  }
  return groups;
}

type EntryKind = "file" | "symlink" | "gitlink";

function entryKind(mode: string): EntryKind {
  if (mode === "120000") return "symlink";
  if (mode === "160000") return "gitlink";
  return "file";
}

/**
 * Several identical files moved at once: prefer pairs that keep the file name (a directory
 * move), then pair the rest in path order, so the result never depends on input order.
 */
function pairCandidates(fromPaths: string[], toPaths: string[], pairs: { from: string; to: string }[]): void {
  const [onlyFrom] = fromPaths;
  const [onlyTo] = toPaths;
  if (fromPaths.length === 1 && toPaths.length === 1) {
    if (onlyFrom !== undefined && onlyTo !== undefined) {
      pairs.push({ from: onlyFrom, to: onlyTo });
    }
    return;
  }
  sortPaths(fromPaths);
  sortPaths(toPaths);
  const tosByName = new Map<string, { paths: string[]; nextUnpaired: number }>();
  for (const to of toPaths) {
    const name = baseName(to);
    const sameName = tosByName.get(name);
    if (sameName === undefined) tosByName.set(name, { paths: [to], nextUnpaired: 0 });
    else sameName.paths.push(to);
  }
  const pairedTos = new Set<string>();
  const fromsLeft: string[] = [];
  for (const from of fromPaths) {
    const sameName = tosByName.get(baseName(from));
    const to = sameName?.paths[sameName.nextUnpaired];
    if (sameName === undefined || to === undefined) {
      fromsLeft.push(from);
      continue;
    }
    sameName.nextUnpaired++;
    pairs.push({ from, to });
    pairedTos.add(to);
  }
  const tosLeft = toPaths.filter((to) => !pairedTos.has(to));
  fromsLeft.forEach((from, index) => {
    const to = tosLeft[index];
    if (to !== undefined) pairs.push({ from, to });
  });
}

function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
