/**
 * @module helper-warnings
 * What the helper said about its own observations, worded once for the edge (recorded with
 * the task) and the helper (shown as it answers): its warnings, an unavailable snapshot's
 * reason, and the other tasks open on the same working tree during a task.
 */
import { displayPath } from "./paths";
import type { Changes, ConcurrentTask, Snapshot } from "./wire";

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
