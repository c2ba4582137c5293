import { comparePaths } from "./paths";

// The wire types below are the contract of docs/attribution.md; the helper keeps its own copy.

export interface FileState {
	mode: string;
	blob: string;
}
export interface DirtyEntry {
	path: string;
	head: FileState | null;
	worktree: FileState | null;
}
export interface Transition {
	path: string;
	before: FileState | null;
	after: FileState | null;
}
export interface GitSnapshot {
	type: "git";
	head: string | null;
	branch?: string | null;
	dirty: DirtyEntry[];
}
export interface ChecksumSnapshot {
	type: "checksum";
	files: number;
	digest: string;
}
export type Snapshot = GitSnapshot | ChecksumSnapshot;
export interface GitChanges {
	type: "git";
	start_head: string | null;
	head: string | null;
	committed: Transition[];
	dirty: DirtyEntry[];
}
export interface ChecksumChanges {
	type: "checksum";
	transitions: Transition[];
}
export type Changes = GitChanges | ChecksumChanges;

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
}

/** The end observations cannot be compared with the start snapshot; the message names the field. */
export class ChangesMismatchError extends Error {
	override name = "ChangesMismatchError";
}

/** git's blob id of empty content: every empty file has it, so it says nothing about renames. */
export const EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391";

export function sameFileState(
	left: FileState | null,
	right: FileState | null,
): boolean {
	if (left === null || right === null) return left === right;
	return left.mode === right.mode && left.blob === right.blob;
}

/** null when nothing changed: equal states (reverts, add-then-delete) are not a change. */
export function changeStatus(
	before: FileState | null,
	after: FileState | null,
): ChangeStatus | null {
	if (sameFileState(before, after)) return null;
	if (before === null) return "A";
	return after === null ? "D" : "M";
}

/**
 * Net effect of one task: resolves each path's start and end state per docs/attribution.md and
 * keeps those that differ. Sorted by path. Throws ChangesMismatchError when the kinds differ,
 * when changes.start_head is not the snapshot's head, or when a list names a path twice with
 * different states. Checksum transitions are taken as they are, committed=false.
 */
export function computeNetChanges(
	snapshot: Snapshot,
	changes: Changes,
): PathChange[] {
	let netChanges: PathChange[];
	if (snapshot.type === "git" && changes.type === "git")
		netChanges = netGitChanges(snapshot, changes);
	else if (snapshot.type === "checksum" && changes.type === "checksum") {
		netChanges = netChecksumChanges(changes.transitions);
	} else {
		throw new ChangesMismatchError(
			`changes.type: must match the start snapshot's type ("${snapshot.type}"), got "${changes.type}"`,
		);
	}
	return netChanges.sort((left, right) => comparePaths(left.path, right.path));
}

function netGitChanges(
	snapshot: GitSnapshot,
	changes: GitChanges,
): PathChange[] {
	if (changes.start_head !== snapshot.head) {
		throw new ChangesMismatchError(
			`changes.start_head: must equal the start snapshot's head (${String(snapshot.head)}), got ${String(changes.start_head)}`,
		);
	}
	const startDirty = indexDirtyEntries(snapshot.dirty, "snapshot.dirty");
	const committed = indexTransitions(changes.committed, "changes.committed");
	const endDirty = indexDirtyEntries(changes.dirty, "changes.dirty");
	const paths = new Set([
		...startDirty.keys(),
		...committed.keys(),
		...endDirty.keys(),
	]);

	const netChanges: PathChange[] = [];
	for (const path of paths) {
		const atStart = startDirty.get(path);
		const inCommits = committed.get(path);
		const atEnd = endDirty.get(path);
		// Each fallback relies on what the lists leave out: a path absent from the status query
		// has worktree = HEAD, and a path absent from the commit diff has HEAD then = HEAD now.
		const before = atStart
			? atStart.worktree
			: inCommits
				? inCommits.before
				: (atEnd?.head ?? null);
		const after = atEnd
			? atEnd.worktree
			: inCommits
				? inCommits.after
				: (atStart?.head ?? null);
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
	const netChanges: PathChange[] = [];
	for (const { path, before, after } of indexTransitions(
		transitions,
		"changes.transitions",
	).values()) {
		const status = changeStatus(before, after);
		if (status !== null)
			netChanges.push({ path, status, before, after, committed: false });
	}
	return netChanges;
}

function indexDirtyEntries(
	entries: readonly DirtyEntry[],
	field: string,
): Map<string, DirtyEntry> {
	return indexByPath(entries, field, (entry) => [entry.head, entry.worktree]);
}

function indexTransitions(
	transitions: readonly Transition[],
	field: string,
): Map<string, Transition> {
	return indexByPath(transitions, field, (transition) => [
		transition.before,
		transition.after,
	]);
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
		if (
			!sameFileState(earlierFirst, first) ||
			!sameFileState(earlierSecond, second)
		) {
			throw new ChangesMismatchError(
				`${field}[${index}].path: ${JSON.stringify(entry.path)} is listed again with different states`,
			);
		}
	});
	return byPath;
}

/**
 * The reference files_changed shape plus additive fields. A D and an A with the same content
 * and the same kind of entry are paired in `renamed`; both paths stay in deleted/added too.
 * `uncommitted` lists paths whose change is not carried by a commit made during the task.
 * All lists sorted.
 */
export function summarizeChanges(changes: readonly PathChange[]): FilesChanged {
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
	for (const list of [added, modified, deleted, uncommitted])
		list.sort(comparePaths);
	return {
		added,
		modified,
		deleted,
		renamed: pairRenames(deletedStates, addedStates),
		uncommitted,
	};
}

/**
 * Exact-content renames only (the wire carries no contents to measure similarity). Empty files
 * are never paired: they all share one blob, so a pairing would be a guess. A regular file and a
 * symlink with equal blobs are different things, so the key includes the kind of entry; the
 * executable bit may change in a rename.
 */
function pairRenames(
	deletedStates: readonly PathChange[],
	addedStates: readonly PathChange[],
): { from: string; to: string }[] {
	const deletedByContent = groupByContent(
		deletedStates,
		(change) => change.before,
	);
	const addedByContent = groupByContent(addedStates, (change) => change.after);
	const renamed: { from: string; to: string }[] = [];
	for (const [content, fromPaths] of deletedByContent) {
		const toPaths = addedByContent.get(content);
		if (toPaths !== undefined)
			renamed.push(...pairCandidates(fromPaths, toPaths));
	}
	return renamed.sort(
		(left, right) =>
			comparePaths(left.from, right.from) || comparePaths(left.to, right.to),
	);
}

function groupByContent(
	changes: readonly PathChange[],
	stateOf: (change: PathChange) => FileState | null,
): Map<string, string[]> {
	const groups = new Map<string, string[]>();
	for (const change of changes) {
		const state = stateOf(change);
		if (state === null || state.blob === EMPTY_BLOB) continue;
		const content = `${entryKind(state.mode)} ${state.blob}`;
		const group = groups.get(content);
		if (group === undefined) groups.set(content, [change.path]);
		else group.push(change.path);
	}
	return groups;
}

function entryKind(mode: string): string {
	if (mode === "120000") return "symlink";
	if (mode === "160000") return "gitlink";
	return "file";
}

/**
 * Several identical files moved at once: prefer pairs that keep the file name (a directory
 * move), then pair the rest in path order, so the result never depends on input order.
 */
function pairCandidates(
	fromPaths: string[],
	toPaths: string[],
): { from: string; to: string }[] {
	fromPaths.sort(comparePaths);
	toPaths.sort(comparePaths);
	const tosByName = new Map<
		string,
		{ paths: string[]; nextUnpaired: number }
	>();
	for (const to of toPaths) {
		const name = baseName(to);
		const sameName = tosByName.get(name);
		if (sameName === undefined)
			tosByName.set(name, { paths: [to], nextUnpaired: 0 });
		else sameName.paths.push(to);
	}
	const pairs: { from: string; to: string }[] = [];
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
	return pairs;
}

function baseName(path: string): string {
	return path.slice(path.lastIndexOf("/") + 1);
}
