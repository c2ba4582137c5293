/**
 * @module domain/path-entries
 * What a workflow's events become in its account's path index: one entry per path a completed
 * (or updated) task changed, with the task and how it changed the path. Run by the workflow
 * object on each push; the account object stores them (account/path-index).
 */
import type { TaskView, WorkflowEvent } from "./view";

/** One changed path as the workflow object pushes it. */
export interface PathEntry {
  path: string;
  task_id: string;
  task_name: string;
  /** A, M, D or R (the new name of a rename; the old name is listed as D). */
  status: string;
  /** When the task completed (the set its paths are packed in, account/path-index). */
  at: string;
}

/** The paths completed tasks changed, from a batch of the workflow's events (run by the workflow object). */
export function pathsFromEvents(events: readonly WorkflowEvent[]): PathEntry[] {
  const out: PathEntry[] = [];
  for (const event of events) {
    if (event.type !== "task.completed" && event.type !== "task.updated") continue;
    const task = event.data as TaskView;
    const files = task.files_changed;
    if (!files) continue;
    // The completion's time, not the event's: a task.updated event later lands on the same packed set.
    const at = task.completed_at ?? event.at;
    const entry = (path: string, status: string) => ({ path, task_id: task.id, task_name: task.name, status, at });
    out.push(
      ...files.added.map((p) => entry(p, "A")),
      ...files.modified.map((p) => entry(p, "M")),
      ...files.deleted.map((p) => entry(p, "D")),
      ...files.renamed.flatMap((r) => [entry(r.from, "D"), entry(r.to, "R")]),
    );
  }
  return out;
}
