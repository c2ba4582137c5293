/**
 * @module attribution
 * The attribution rule, shared by the helper and the edge: from a start snapshot and the
 * changes observed at the end, which paths a task added, modified or deleted
 * (docs/attribution.md, "How the edge resolves a path"). ./files-changed.ts summarises the
 * result (renames paired), ./truncation.ts keeps lists within the helper's ceilings, and
 * ./helper-warnings.ts words what the helper reported.
 */
import { comparePaths } from "./paths";
import type { Changes, DirtyEntry, FileState, GitChanges, GitSnapshot, NetTransition, Snapshot, Transition } from "./wire";

export type ChangeStatus = "A" | "M" | "D";
export interface PathChange {
  path: string;
  status: ChangeStatus;
  before: FileState | null;
  after: FileState | null;
  committed: boolean;
}
/** The end observations cannot be compared with the start snapshot; the message names the field. */
export class ChangesMismatchError extends Error {
  override name = "ChangesMismatchError";
}

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
 * `unavailable` changes carry no paths: their reason is a warning (./helper-warnings.ts).
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
  // git lists paths in order, so the three lists are merged rather than indexed and re-sorted.
  const startDirty = inPathOrder(snapshot.dirty);
  const committed = inPathOrder(changes.committed);
  const endDirty = inPathOrder(changes.dirty);
  // A conflict is reported as indexing the lists as sent would: the first list, then the first entry.
  const explainConflict = () => {
    indexDirtyEntries(snapshot.dirty, "snapshot.dirty");
    indexTransitions(changes.committed, "changes.committed");
    indexDirtyEntries(changes.dirty, "changes.dirty");
  };
  // Sized for every path listed, then cut to the paths that changed: growing it costs more.
  const netChanges = new Array<PathChange>(startDirty.length + committed.length + endDirty.length);
  let count = 0;
  let startIndex = 0;
  let commitIndex = 0;
  let endIndex = 0;
  while (startIndex < startDirty.length || commitIndex < committed.length || endIndex < endDirty.length) {
    const startPath = startDirty[startIndex]?.path;
    const commitPath = committed[commitIndex]?.path;
    const endPath = endDirty[endIndex]?.path;
    let path = startPath as string;
    if (path === undefined || (commitPath !== undefined && commitPath < path)) path = commitPath as string;
    if (path === undefined || (endPath !== undefined && endPath < path)) path = endPath as string;

    let atStart: DirtyEntry | undefined;
    let inCommits: Transition | undefined;
    let atEnd: DirtyEntry | undefined;
    if (startPath === path) {
      atStart = startDirty[startIndex];
      startIndex = pastRun(startDirty, startIndex, dirtyStates, explainConflict);
    }
    if (commitPath === path) {
      inCommits = committed[commitIndex];
      commitIndex = pastRun(committed, commitIndex, transitionStates, explainConflict);
    }
    if (endPath === path) {
      atEnd = endDirty[endIndex];
      endIndex = pastRun(endDirty, endIndex, dirtyStates, explainConflict);
    }
    // Each fallback relies on what the lists leave out: a path absent from the status query
    // has worktree = HEAD, and a path absent from the commit diff has HEAD then = HEAD now.
    const before = atStart ? atStart.worktree : inCommits ? inCommits.before : (atEnd?.head ?? null);
    const after = atEnd ? atEnd.worktree : inCommits ? inCommits.after : (atStart?.head ?? null);
    const status = changeStatus(before, after);
    if (status === null) continue;
    netChanges[count++] = { path, status, before, after, committed: inCommits !== undefined && atEnd === undefined };
  }
  netChanges.length = count;
  return netChanges;
}

function netChecksumChanges(transitions: readonly Transition[]): PathChange[] {
  return netTransitions(transitions, () => false);
}

function netResolvedChanges(transitions: readonly NetTransition[]): PathChange[] {
  return netTransitions(transitions, (transition) => transition.committed ?? false);
}

function netTransitions<Entry extends Transition>(
  transitions: readonly Entry[],
  committedOf: (transition: Entry) => boolean,
): PathChange[] {
  const ordered = inPathOrder(transitions);
  const netChanges: PathChange[] = [];
  for (let index = 0; index < ordered.length; ) {
    const transition = ordered[index] as Entry;
    index = pastRun(ordered, index, transitionStates, () => indexTransitions(transitions, "changes.transitions"));
    const { before, after } = transition;
    const status = changeStatus(before, after);
    if (status !== null) netChanges.push({ path: transition.path, status, before, after, committed: committedOf(transition) });
  }
  return netChanges;
}

/**
 * The entries sorted by path (comparePaths). git's lists already are, and are returned as they
 * are; a list in another order (a hand-made client, paths whose wire form sorts differently) is
 * sorted once, stably, so that repeated paths keep their order.
 */
function inPathOrder<Entry extends { path: string }>(entries: readonly Entry[]): readonly Entry[] {
  for (let index = 1; index < entries.length; index++) {
    if ((entries[index - 1] as Entry).path > (entries[index] as Entry).path) {
      return entries.slice().sort((left, right) => comparePaths(left.path, right.path));
    }
  }
  return entries;
}

/**
 * The index after the entries that repeat the path at `start`. A path listed twice is tolerated
 * when both entries agree; disagreeing entries leave no truth to pick, and `explainConflict`
 * (which indexes the list as sent, naming the entry in the client's order) throws.
 */
function pastRun<Entry extends { path: string }>(
  entries: readonly Entry[],
  start: number,
  statesOf: (entry: Entry) => readonly [FileState | null, FileState | null],
  explainConflict: () => unknown,
): number {
  const first = entries[start] as Entry;
  let end = start + 1;
  for (; end < entries.length && (entries[end] as Entry).path === first.path; end++) {
    const [firstBefore, firstAfter] = statesOf(first);
    const [before, after] = statesOf(entries[end] as Entry);
    if (!sameFileState(firstBefore, before) || !sameFileState(firstAfter, after)) {
      explainConflict();
      throw new ChangesMismatchError(`${JSON.stringify(first.path)} is listed again with different states`);
    }
  }
  return end;
}

const dirtyStates = (entry: DirtyEntry) => [entry.head, entry.worktree] as const;
const transitionStates = (transition: Transition) => [transition.before, transition.after] as const;

function indexDirtyEntries(entries: readonly DirtyEntry[], field: string): Map<string, DirtyEntry> {
  return indexByPath(entries, field, dirtyStates);
}

function indexTransitions<Entry extends Transition>(transitions: readonly Entry[], field: string): Map<string, Entry> {
  return indexByPath(transitions, field, transitionStates);
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
