/**
 * @module files-changed
 * The files_changed summary of a task's net changes (./attribution.ts): the paths added,
 * modified and deleted, renames paired by exact content, and what is not committed.
 */
import type { PathChange } from "./attribution";
import { comparePaths, sortPaths } from "./paths";
import type { FilesChanged as RecordedFiles } from "./views/task";
import type { Truncation } from "./wire";

/**
 * What attribution computes of a task's files_changed (./views/task.ts): the lists, the helper's
 * `truncated` summary and the review fields (./review-fields.ts); the edge adds their provenance.
 */
export type FilesChanged = Omit<RecordedFiles, "source" | "not_by_agent_tools" | "more">;

/** git's blob id of empty content: every empty file has it, so it says nothing about renames. */
export const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

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
