/**
 * @module pages/paged-view
 * The page's input in the shape of the paged reads: a workflow's head (everything but its
 * tasks and their logs) and its tasks as entries in timeline order (top-level tasks by start,
 * each followed depth-first by its subtasks, each carrying its own decisions, issues and
 * milestones). The renderer only ever sees one entry at a time, so a page can be streamed.
 * `pagedView` cuts a whole WorkflowView into that shape, for callers that already hold one.
 */
import type { DecisionView, FeedbackView, IssueView, MilestoneView, TaskView, Totals, WorkflowHeader } from "../domain/view";

export interface WorkflowHead {
  workflow: WorkflowHeader;
  totals: Totals;
  last_seq: number;
  chain?: { algorithm: "sha256"; genesis: string; head: string; events: number };
  feedback?: FeedbackView[];
}

export interface TaskEntry {
  task: TaskView;
  depth: number;
  decisions: DecisionView[];
  issues: IssueView[];
  milestones: MilestoneView[];
}

interface WholeView extends WorkflowHead {
  tasks: TaskView[];
  decisions: DecisionView[];
  issues: IssueView[];
  milestones: MilestoneView[];
}

function byKey<T>(items: readonly T[], key: (item: T) => string | null): Map<string | null, T[]> {
  const groups = new Map<string | null, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** Timeline order: top-level tasks by start, each followed depth-first by its subtasks (by start). */
export function timelineEntries(view: Omit<WholeView, keyof WorkflowHead>): TaskEntry[] {
  const ids = new Set(view.tasks.map((t) => t.id));
  const byStart = [...view.tasks].sort((a, b) => a.started_at.localeCompare(b.started_at));
  const children = byKey(byStart, (t) => (t.parent_task_id !== null && ids.has(t.parent_task_id) ? t.parent_task_id : null));
  const decisions = byKey(view.decisions, (d) => d.task_id);
  const issues = byKey(view.issues, (i) => i.task_id);
  const milestones = byKey(view.milestones, (m) => m.task_id);
  const out: TaskEntry[] = [];
  const visit = (task: TaskView, depth: number) => {
    out.push({
      task,
      depth,
      decisions: decisions.get(task.id) ?? [],
      issues: issues.get(task.id) ?? [],
      milestones: milestones.get(task.id) ?? [],
    });
    for (const child of children.get(task.id) ?? []) visit(child, depth + 1);
  };
  for (const root of children.get(null) ?? []) visit(root, 0);
  return out;
}

export async function* entriesOf(entries: readonly TaskEntry[]): AsyncGenerator<TaskEntry> {
  yield* entries;
}

/** A whole view as a head and its entries. */
type Parts = "tasks" | "decisions" | "issues" | "milestones";

export function pagedView<V extends WholeView>(view: V): { head: Omit<V, Parts>; entries: AsyncIterable<TaskEntry> } {
  const { tasks, decisions, issues, milestones, ...head } = view;
  return { head, entries: entriesOf(timelineEntries({ tasks, decisions, issues, milestones })) };
}
