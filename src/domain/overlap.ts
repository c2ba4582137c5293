/**
 * @module domain/overlap
 * Tasks open at the same time in one working tree. Within one workflow an identical change is
 * attributed once, to the task that completed first, and reported on both. Across workflows
 * (two agents in one checkout, as their helpers report each other) each workflow keeps its own
 * record: a file both changed stays with both and is reported on both.
 */

import { comparePaths } from "@waymark/protocol/paths";
import type { Overlap } from "@waymark/protocol/views/task";
import { type PathChange, sameFileState } from "./changes";

/** A file a concurrent task changed too (@waymark/protocol/views/task); `workflow_id` when it is another workflow's. */
export type { Overlap } from "@waymark/protocol/views/task";

export interface TaskWindow {
  task_id: string;
  started_at: number;
  /** null: the task is still open. */
  completed_at: number | null;
  /** Ids of its ancestor tasks. */
  ancestors: readonly string[];
}
export interface CompletedTaskChanges {
  window: TaskWindow;
  changes: readonly PathChange[];
}

/**
 * Neither is an ancestor of the other (a parent's changes include its subtasks' by design), and
 * the windows intersect. Windows that only touch (one starts the instant the other completes) are
 * sequential, not concurrent.
 */
export function tasksOverlap(left: TaskWindow, right: TaskWindow): boolean {
  if (left.task_id === right.task_id) return false;
  if (left.ancestors.includes(right.task_id) || right.ancestors.includes(left.task_id)) return false;
  const leftEnd = left.completed_at ?? Number.POSITIVE_INFINITY;
  const rightEnd = right.completed_at ?? Number.POSITIVE_INFINITY;
  return left.started_at < rightEnd && right.started_at < leftEnd;
}

/** A task of another workflow that was open on the same working tree, and its changes to the files both changed. */
export interface TaskElsewhere {
  task_id: string;
  workflow_id: string;
  changes: readonly PathChange[];
}

/** This task's overlaps with tasks of other workflows: each file both changed, same change or not. Sorted like every overlap list. */
export function overlapsElsewhere(mine: readonly PathChange[], others: readonly TaskElsewhere[]): Overlap[] {
  if (others.length === 0) return [];
  const byPath = new Map(mine.map((change) => [change.path, change]));
  const overlaps = others.flatMap((other) =>
    sharedChanges(byPath, other.changes).map(({ path, same }) => ({
      path,
      task_id: other.task_id,
      same_change: same,
      workflow_id: other.workflow_id,
    })),
  );
  return overlaps.sort(compareOverlaps);
}

/** The paths of `theirs` that `mine` (by path) changed too, and whether both saw the same states before and after. */
function sharedChanges(mine: ReadonlyMap<string, PathChange>, theirs: readonly PathChange[]): { path: string; same: boolean }[] {
  const shared: { path: string; same: boolean }[] = [];
  for (const other of theirs) {
    const change = mine.get(other.path);
    if (change === undefined) continue;
    shared.push({ path: change.path, same: sameFileState(change.before, other.before) && sameFileState(change.after, other.after) });
  }
  return shared;
}

/** Overlaps in the order they are reported: by path, then by the other task's id. */
export function compareOverlaps(left: Overlap, right: Overlap): number {
  return (
    comparePaths(left.path, right.path) || comparePaths(left.task_id, right.task_id) || Number(left.same_change) - Number(right.same_change)
  );
}

/**
 * For the task completing now against other tasks of the workflow that already completed (pass
 * their net changes). A path both changed identically (same state before and after) is one change
 * seen twice: it stays with the task that completed first, so it is not kept here, and is
 * reported. A path changed differently is kept and reported. Kept changes stay in input order;
 * overlaps are sorted by path, then task id.
 */
export function attributeOverlaps(
  completing: CompletedTaskChanges,
  completedOthers: readonly CompletedTaskChanges[],
): { kept: PathChange[]; overlaps: Overlap[] } {
  const concurrent = completedOthers.filter((other) => tasksOverlap(completing.window, other.window));
  // The common case, no concurrent task: nothing to index.
  if (concurrent.length === 0) return { kept: [...completing.changes], overlaps: [] };
  const completingByPath = new Map(completing.changes.map((change) => [change.path, change]));
  const seenBefore = new Set<string>();
  const overlaps: Overlap[] = [];
  for (const other of concurrent) {
    for (const { path, same } of sharedChanges(completingByPath, other.changes)) {
      if (same) seenBefore.add(path);
      overlaps.push({ path, task_id: other.window.task_id, same_change: same });
    }
  }
  overlaps.sort(compareOverlaps);
  return {
    kept: completing.changes.filter((change) => !seenBefore.has(change.path)),
    overlaps,
  };
}
