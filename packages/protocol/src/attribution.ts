/**
 * @module attribution
 * The attribution rule, shared by the helper and the edge: from a start snapshot and the
 * changes observed at the end, which paths a task added, modified or deleted
 * (docs/attribution.md, "How the edge resolves a path"), the files_changed summary with
 * renames paired, and the per-directory summary of lists too large to send.
 */
import { comparePaths, decodeWirePath, displayPath, ESCAPED_PATH_PREFIX, encodePathBytes, isEscapedPath, sortPaths } from "./paths";
import type { ReviewFields } from "./review-fields";
import type {
  Changes,
  ConcurrentTask,
  DirtyEntry,
  FileState,
  GitChanges,
  GitSnapshot,
  NetTransition,
  Snapshot,
  Transition,
  Truncation,
} from "./wire";
import { WIRE_LIMITS } from "./wire-constants";

export type ChangeStatus = "A" | "M" | "D";
export interface PathChange {
  path: string;
  status: ChangeStatus;
  before: FileState | null;
  after: FileState | null;
  committed: boolean;
}
/** `ReviewFields` (./review): line counts, commits and branch, when the helper measured them. */
export interface FilesChanged extends ReviewFields {
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

/**
 * What the helper reported about its own observations, to show next to the files it found:
 * its warnings, and the other tasks open on the same working tree during this one. Tasks in
 * `lineage` (the task's ancestors and subtasks) are left out: a parent's work includes its
 * subtasks' by design, so their being open together is not a warning.
 */
export function helperWarnings(data: Snapshot | Changes | null | undefined, lineage: ReadonlySet<string> = NO_TASKS): string[] {
  if (!data) return [];
  if (data.type === "unavailable") return [data.reason];
  const others = (data.concurrent ?? []).filter((task) => !lineage.has(task.task_id));
  return [...(data.warnings ?? []), ...others.map(describeConcurrentTask)];
}

const NO_TASKS: ReadonlySet<string> = new Set();

function describeConcurrentTask(task: ConcurrentTask): string {
  const window = `from ${new Date(task.started_at).toISOString()} to ${task.completed_at === null ? "now (still open)" : new Date(task.completed_at).toISOString()}`;
  const opening = `Task ${task.task_id} was also open on this working tree ${window}: changes made there in that time may be attributed to both tasks.`;
  if (task.shared_paths === undefined) return opening;
  const count = task.shared_count ?? task.shared_paths.length;
  if (count === 0) return `${opening} No file changed by both.`;
  const named = task.shared_paths.map(displayPath).join(", ");
  return `${opening} Changed by both (${count}): ${named}${count > task.shared_paths.length ? ", …" : ""}.`;
}

/** The summary of what the helper could not list, if anything. */
export function truncationOf(changes: Changes | null | undefined): Truncation | undefined {
  return changes?.type === "net" ? changes.truncated : undefined;
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

/**
 * The reference files_changed shape plus additive fields. A D and an A with the same content
 * and the same kind of entry are paired in `renamed`; both paths stay in deleted/added too.
 * `uncommitted` lists paths whose change is not carried by a commit made during the task.
 * All lists sorted. `truncated` (from truncationOf) is carried as it is.
 */
export function summarizeChanges(changes: readonly PathChange[], truncated?: Truncation): FilesChanged {
  // Counted first, so that each list is allocated once at its size (at 50,000 changes the
  // garbage of growing lists costs more than this pass).
  let addedCount = 0;
  let deletedCount = 0;
  let uncommittedCount = 0;
  let inOrder = true;
  for (let index = 0; index < changes.length; index++) {
    const change = changes[index] as PathChange;
    if (change.status === "A") addedCount++;
    else if (change.status === "D") deletedCount++;
    if (!change.committed) uncommittedCount++;
    if (inOrder && index > 0 && (changes[index - 1] as PathChange).path > change.path) inOrder = false;
  }
  const added = new Array<string>(addedCount);
  const modified = new Array<string>(changes.length - addedCount - deletedCount);
  const deleted = new Array<string>(deletedCount);
  const uncommitted = new Array<string>(uncommittedCount);
  let addedAt = 0;
  let modifiedAt = 0;
  let deletedAt = 0;
  let uncommittedAt = 0;
  for (let index = 0; index < changes.length; index++) {
    const change = changes[index] as PathChange;
    if (change.status === "A") added[addedAt++] = change.path;
    else if (change.status === "D") deleted[deletedAt++] = change.path;
    else modified[modifiedAt++] = change.path;
    if (!change.committed) uncommitted[uncommittedAt++] = change.path;
  }
  // Net changes come in path order, and so does every list drawn from them.
  if (!inOrder) for (const list of [added, modified, deleted, uncommitted]) sortUnlessSorted(list);
  const summary: FilesChanged = { added, modified, deleted, renamed: pairRenames(changes, addedCount, deletedCount), uncommitted };
  if (truncated) summary.truncated = truncated;
  return summary;
}

/**
 * Exact-content renames only (the wire carries no contents to measure similarity). Empty files
 * are never paired: they all share one blob, so a pairing would be a guess. A regular file and a
 * symlink with equal blobs are different things, so the key includes the kind of entry; the
 * executable bit may change in a rename.
 */
function pairRenames(changes: readonly PathChange[], addedCount: number, deletedCount: number): { from: string; to: string }[] {
  const renamed: { from: string; to: string }[] = [];
  if (addedCount === 0 || deletedCount === 0) return renamed;
  // One index, of the added side; each deletion then looks its content up and joins its group.
  const groups = new ContentIndex(addedCount);
  for (let index = 0; index < changes.length; index++) {
    const change = changes[index] as PathChange;
    const state = change.after;
    if (change.status !== "A" || state === null) continue;
    groups.add(state.blob, entryKind(state.mode), change.path);
  }
  const matched: RenameCandidates[] = [];
  for (let index = 0; index < changes.length; index++) {
    const change = changes[index] as PathChange;
    const state = change.before;
    if (change.status !== "D" || state === null) continue;
    const group = groups.find(state.blob, entryKind(state.mode));
    if (group === undefined) continue;
    if (group.from === undefined) {
      matched.push(group);
      group.from = change.path;
    } else if (group.moreFrom === undefined) group.moreFrom = [change.path];
    else group.moreFrom.push(change.path);
  }
  for (const group of matched) {
    const from = group.from as string;
    if (group.moreFrom === undefined && group.moreTo === undefined) renamed.push({ from, to: group.to });
    else pairCandidates([from, ...(group.moreFrom ?? [])], [group.to, ...(group.moreTo ?? [])], renamed);
  }
  for (let index = 1; index < renamed.length; index++) {
    if ((renamed[index - 1] as { from: string }).from > (renamed[index] as { from: string }).from) {
      return renamed.sort((left, right) => comparePaths(left.from, right.from));
    }
  }
  return renamed;
}

/**
 * Deleted and added paths of one content and kind of entry: the first of each, and the others
 * in order (several identical files are rare, so most groups hold no array at all).
 */
interface RenameCandidates {
  blob: string;
  kind: EntryKind;
  to: string;
  moreTo: string[] | undefined;
  from: string | undefined;
  moreFrom: string[] | undefined;
}

/**
 * Rename candidates by blob and kind of entry: an open-addressing table keyed by a hash of the
 * blob id, sized for the entries it will hold. At 50,000 changes a Map keyed by 40-character
 * strings was most of the summary's cost; here a probe compares numbers, and a blob only on a
 * hash match. Blobs come from the client: the hash is seeded per index, so no one can choose
 * blobs that all land on one slot. Empty blobs are never added.
 */
class ContentIndex {
  private readonly seed = (Math.random() * 0x100000000) | 0;
  private readonly emptyHash = blobHash(EMPTY_BLOB, this.seed);
  private readonly mask: number;
  /** Per slot, 1 + the index of its group in `groups`; 0 for an empty slot. */
  private readonly slots: Int32Array;
  private readonly hashes: Int32Array;
  private readonly groups: RenameCandidates[] = [];

  constructor(entries: number) {
    let capacity = 16;
    while (capacity < entries * 2) capacity *= 2;
    this.mask = capacity - 1;
    this.slots = new Int32Array(capacity);
    this.hashes = new Int32Array(capacity);
  }

  /** An added path with this content. */
  add(blob: string, kind: EntryKind, path: string): void {
    const hash = blobHash(blob, this.seed);
    if (hash === this.emptyHash && blob === EMPTY_BLOB) return;
    let slot = hash & this.mask;
    for (let occupant = this.slots[slot] as number; occupant !== 0; occupant = this.slots[slot] as number) {
      const group = this.groups[occupant - 1] as RenameCandidates;
      if (this.hashes[slot] === hash && group.kind === kind && group.blob === blob) {
        if (group.moreTo === undefined) group.moreTo = [path];
        else group.moreTo.push(path);
        return;
      }
      slot = (slot + 1) & this.mask;
    }
    this.groups.push({ blob, kind, to: path, moreTo: undefined, from: undefined, moreFrom: undefined });
    this.slots[slot] = this.groups.length;
    this.hashes[slot] = hash;
  }

  /** The group of added paths with this content, if any. */
  find(blob: string, kind: EntryKind): RenameCandidates | undefined {
    const hash = blobHash(blob, this.seed);
    let slot = hash & this.mask;
    for (let occupant = this.slots[slot] as number; occupant !== 0; occupant = this.slots[slot] as number) {
      const group = this.groups[occupant - 1] as RenameCandidates;
      if (this.hashes[slot] === hash && group.kind === kind && group.blob === blob) return group;
      slot = (slot + 1) & this.mask;
    }
    return undefined;
  }
}

/**
 * A well-mixed 32-bit hash of a blob id (any string works), two characters a step in two
 * interleaved lanes: a 40-character id is hashed in ten dependent steps instead of forty.
 */
function blobHash(blob: string, seed: number): number {
  let even = seed ^ 0x811c9dc5;
  let odd = seed ^ 0x01000193;
  let index = 0;
  for (; index + 4 <= blob.length; index += 4) {
    even = Math.imul(even ^ (blob.charCodeAt(index) | (blob.charCodeAt(index + 1) << 16)), 0x01000193);
    odd = Math.imul(odd ^ (blob.charCodeAt(index + 2) | (blob.charCodeAt(index + 3) << 16)), 0x85ebca6b);
  }
  for (; index < blob.length; index++) even = Math.imul(even ^ blob.charCodeAt(index), 0x01000193);
  let hash = even ^ Math.imul(odd ^ blob.length, 0xc2b2ae35);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x45d9f3b);
  return hash ^ (hash >>> 16);
}

/** Sorts in comparePaths order, after checking in one pass whether that is needed. */
function sortUnlessSorted(paths: string[]): void {
  for (let index = 1; index < paths.length; index++) {
    if ((paths[index - 1] as string) > (paths[index] as string)) {
      sortPaths(paths);
      return;
    }
  }
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

/**
 * Keeps a list of changes within the helper's ceilings (WIRE_LIMITS.HELPER_LIST_ENTRIES entries,
 * `maxBytes` of serialized entries): the first ones in path order are listed, the rest are
 * counted per directory. The directory depth is the deepest (up to 3 segments) that names at
 * most WIRE_LIMITS.TRUNCATED_DIRECTORIES directories; beyond those, the largest are named and
 * the rest counted in `other`.
 */
export function limitChanges<Entry extends { path: string; status: ChangeStatus }>(
  entries: readonly Entry[],
  sizeOf: (entry: Entry) => number,
  maxBytes: number = WIRE_LIMITS.HELPER_LIST_BYTES,
  maxEntries: number = WIRE_LIMITS.HELPER_LIST_ENTRIES,
): { listed: Entry[]; truncated?: Truncation } {
  let bytes = 0;
  let count = 0;
  while (count < entries.length && count < maxEntries) {
    bytes += sizeOf(entries[count] as Entry);
    if (bytes > maxBytes) break;
    count++;
  }
  if (count === entries.length) return { listed: [...entries] };
  const omitted = entries.slice(count);
  return { listed: entries.slice(0, count), truncated: summariseByDirectory(omitted) };
}

type DirectoryCounts = { path: string; added: number; modified: number; deleted: number };

function summariseByDirectory(omitted: readonly { path: string; status: ChangeStatus }[]): Truncation {
  let groups = new Map<string, DirectoryCounts>();
  for (let depth = 3; depth >= 1; depth--) {
    groups = new Map();
    for (const entry of omitted) {
      const directory = directoryOf(entry.path, depth);
      let counts = groups.get(directory);
      if (counts === undefined) {
        counts = { path: directory, added: 0, modified: 0, deleted: 0 };
        groups.set(directory, counts);
      }
      if (entry.status === "A") counts.added++;
      else if (entry.status === "D") counts.deleted++;
      else counts.modified++;
    }
    if (groups.size <= WIRE_LIMITS.TRUNCATED_DIRECTORIES) break;
  }
  const total = (counts: DirectoryCounts) => counts.added + counts.modified + counts.deleted;
  const byCount = [...groups.values()].sort((left, right) => total(right) - total(left) || comparePaths(left.path, right.path));
  const named = byCount.slice(0, WIRE_LIMITS.TRUNCATED_DIRECTORIES).sort((left, right) => comparePaths(left.path, right.path));
  const other = byCount.slice(WIRE_LIMITS.TRUNCATED_DIRECTORIES).reduce((sum, counts) => sum + total(counts), 0);
  return { omitted: omitted.length, directories: named, other };
}

/** The first `depth` directory segments of a file's path ("" for a file at the root). */
function directoryOf(path: string, depth: number): string {
  const escaped = isEscapedPath(path);
  const start = escaped ? ESCAPED_PATH_PREFIX.length : 0;
  let end = -1;
  for (let segment = 0; segment < depth; segment++) {
    const next = path.indexOf("/", Math.max(end + 1, start));
    if (next < 0) break;
    end = next;
  }
  if (end < 0) return "";
  if (!escaped) return path.slice(0, end);
  // A directory of a name that is not UTF-8 may itself be valid UTF-8: give it its one wire form.
  const bytes = decodeWirePath(path.slice(0, end));
  return bytes === null ? "" : encodePathBytes(bytes);
}
