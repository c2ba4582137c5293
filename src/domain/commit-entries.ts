/**
 * @module domain/commit-entries
 * What a workflow's events become in its account's commit index: one entry per commit a completed
 * (or updated) task made, so that what knows only a commit (a pull request's range in `waymark ci`,
 * a review comment from GitHub) finds the task that made it. Run by the workflow object on each
 * push; the account object stores them (account/commit-index).
 */
import type { TaskView, WorkflowEvent } from "./view";

/** One commit as the workflow object pushes it. */
export interface CommitEntry {
  /** The commit id as the helper recorded it: lowercase hex, abbreviated (git's %h) for the commits made, full for the end commit. */
  sha: string;
  task_id: string;
  task_name: string;
  at: string;
}

/** A commit id as recorded: at least git's shortest abbreviation. */
const COMMIT_ID = /^[0-9a-f]{7,64}$/;

/**
 * The commits completed tasks made, from a batch of the workflow's events: those the task recorded
 * as made during it, and its end commit when it moved past its start (HEAD when it completed).
 */
export function commitsFromEvents(events: readonly WorkflowEvent[]): CommitEntry[] {
  const out: CommitEntry[] = [];
  for (const event of events) {
    if (event.type !== "task.completed" && event.type !== "task.updated") continue;
    const task = event.data as TaskView;
    const shas = new Set((task.files_changed?.commits ?? []).map((commit) => commit.sha));
    const end = task.repository?.end_commit;
    if (end && end !== task.repository?.start_commit) shas.add(end);
    for (const sha of shas) if (COMMIT_ID.test(sha)) out.push({ sha, task_id: task.id, task_name: task.name, at: event.at });
  }
  return out;
}
