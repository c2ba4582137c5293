/**
 * @module domain/overlap
 * Tasks of one workflow open at the same time in one working tree: an identical change is
 * attributed once, to the task that completed first, and reported on both.
 */

import { comparePaths } from "@waymark/protocol/paths";
import { type PathChange, sameFileState } from "./changes";

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
export interface Overlap {
  path: string;
  task_id: string;
  same_change: boolean;
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
    for (const otherChange of other.changes) {
      const change = completingByPath.get(otherChange.path);
      if (change === undefined) continue;
      const sameChange = sameFileState(change.before, otherChange.before) && sameFileState(change.after, otherChange.after);
      if (sameChange) seenBefore.add(change.path);
      overlaps.push({
        path: change.path,
        task_id: other.window.task_id,
        same_change: sameChange,
      });
    }
  }
  overlaps.sort(
    (left, right) =>
      comparePaths(left.path, right.path) ||
      comparePaths(left.task_id, right.task_id) ||
      Number(left.same_change) - Number(right.same_change),
  );
  return {
    kept: completing.changes.filter((change) => !seenBefore.has(change.path)),
    overlaps,
  };
}
