/**
 * @module export-rebuild
 * A workflow's record rebuilt from its event log alone, for `waymark verify`: every event carries
 * the whole entity after its change (a workflow header, a task, a log, a feedback item), so
 * replaying the log gives what each field of an export must say. Pure: no I/O, no clock.
 *
 * An export reads the workflow header, totals and feedback in one step, as of event
 * `chain.events` (H), and its records a page at a time after that, so a write landing meanwhile
 * shows in the pages read after it; its events run on to the log's end as read after the last
 * page (N). The rebuild therefore gives the state as of H, and for each record every state it
 * went through from H to N: an exported record must be one of them.
 *
 * What the edge derives besides the entities, rebuilt by the same rules:
 * - the header's `updated_at` is the time of the last event other than reviewer feedback
 *   (a trigger on the event log, src/workflow/workflow-schema.ts);
 * - the totals (src/workflow/totals.ts): tasks and open tasks, the duration of top-level tasks,
 *   the distinct paths changed, decisions, issues, the reviews still needed (the open review items
 *   of ./review-counts.ts), token and cost sums in completion order;
 * - the review counts (./review-counts.ts), from the tasks, issues and feedback at that state.
 *
 * The export is read as untrusted JSON (an export may have been altered): the views' shapes
 * (./views/) name what is read, never what is assumed.
 */

import { roundCost } from "./cost";
import { RECORD_KINDS, type RecordKind } from "./export-members";
import { type FactsTask, type ReviewCounts, ReviewTally, taskReviewFacts, type VerdictLike } from "./review-counts";
import type { EventType, WorkflowEvent } from "./views/events";
import type { TaskView } from "./views/task";

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** An event as an export carries it (its hash checked by the chain, @waymark/protocol/chain), its type and data not yet trusted. */
export type LoggedEvent = Pick<WorkflowEvent, "seq" | "at" | "task_id"> & { type: string; data: JsonObject };

/** Which entity each event type carries (./views/events.ts: every type has one). */
const EVENT_KINDS: Record<EventType, RecordKind | "workflow" | "feedback"> = {
  "workflow.started": "workflow",
  "workflow.completed": "workflow",
  "task.started": "tasks",
  "task.completed": "tasks",
  "task.updated": "tasks",
  "decision.logged": "decisions",
  "issue.logged": "issues",
  "milestone.logged": "milestones",
  "feedback.created": "feedback",
};

/** The record as of one event. Maps keep insertion order: feedback is listed oldest first, as the edge lists it. */
export interface RecordState {
  workflow: JsonObject | null;
  /** When the agent last wrote: the header's updated_at. */
  lastAgentWrite: string | null;
  records: Record<RecordKind, Map<string, JsonObject>>;
  feedback: Map<string, JsonObject>;
  /** Task ids in the order they completed: the order the edge summed their usage in. */
  completed: string[];
}

export interface Rebuilt {
  /** The state as of event H. */
  state: RecordState;
  /** Each record's states from H on: its state at H (if it existed) and every later one, oldest first. */
  versions: Record<RecordKind, Map<string, JsonObject[]>>;
  /** Events that could not be applied (an unknown type, data that names no entity): the record cannot be rebuilt past them. */
  problems: string[];
}

const emptyRecords = <T>(make: () => T): Record<RecordKind, T> => ({
  tasks: make(),
  decisions: make(),
  issues: make(),
  milestones: make(),
});

function snapshot(state: RecordState): RecordState {
  return {
    workflow: state.workflow,
    lastAgentWrite: state.lastAgentWrite,
    records: {
      tasks: new Map(state.records.tasks),
      decisions: new Map(state.records.decisions),
      issues: new Map(state.records.issues),
      milestones: new Map(state.records.milestones),
    },
    feedback: new Map(state.feedback),
    completed: [...state.completed],
  };
}

/** Replays `events` (seq 1…N, already checked against their chain), keeping the state at event `at` (H ≤ N). */
export function rebuild(events: readonly LoggedEvent[], at: number): Rebuilt {
  const state: RecordState = {
    workflow: null,
    lastAgentWrite: null,
    records: emptyRecords(() => new Map<string, JsonObject>()),
    feedback: new Map(),
    completed: [],
  };
  const problems: string[] = [];
  let kept: RecordState | null = at === 0 ? snapshot(state) : null;
  const versions = emptyRecords(() => new Map<string, JsonObject[]>());
  for (const event of events) {
    const kind = (EVENT_KINDS as Record<string, RecordKind | "workflow" | "feedback" | undefined>)[event.type];
    const id = event.data.id;
    if (kind === undefined) {
      problems.push(
        `event ${event.seq}: type ${JSON.stringify(event.type)} is not one this verifier knows, so the record cannot be rebuilt`,
      );
      break;
    }
    if (typeof id !== "string") {
      problems.push(`event ${event.seq} (${event.type}): its data names no entity (no id)`);
      break;
    }
    if (kind === "tasks" && event.task_id !== id) {
      problems.push(`event ${event.seq} (${event.type}): it is filed under task ${event.task_id} but carries task ${id}`);
      break;
    }
    if (kind !== "feedback") state.lastAgentWrite = event.at;
    if (kind === "workflow") state.workflow = event.data;
    else if (kind === "feedback") state.feedback.set(id, event.data);
    else {
      state.records[kind].set(id, event.data);
      if (event.type === "task.completed") state.completed.push(id);
      if (kept !== null) {
        const seen = versions[kind].get(id);
        if (seen) seen.push(event.data);
        else versions[kind].set(id, [event.data]);
      }
    }
    if (event.seq === at) {
      kept = snapshot(state);
      for (const each of RECORD_KINDS) for (const [key, value] of state.records[each]) versions[each].set(key, [value]);
    }
  }
  return { state: kept ?? snapshot(state), versions, problems };
}

/** The header as the edge shows it at that state: the last workflow event's, touched by every agent write since. */
export function headerOf(state: RecordState): JsonObject | null {
  if (!state.workflow) return null;
  return state.lastAgentWrite === null ? state.workflow : { ...state.workflow, updated_at: state.lastAgentWrite };
}

const objectOr = (value: Json | undefined): JsonObject | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value : null;
const numberOr0 = (value: Json | undefined) => (typeof value === "number" ? value : 0);
const strings = (value: Json | undefined): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

/** A task's changed paths (added, modified, deleted; a rename is its two paths). */
export function changedPaths(task: JsonObject): string[] {
  const files = objectOr(task.files_changed);
  return files ? [...strings(files.added), ...strings(files.modified), ...strings(files.deleted)] : [];
}

/**
 * The totals the edge shows at this state. `pathsOf` gives a completed task's changed paths: its
 * event's lists, or the export's full lists where the event names only the first files.
 */
export function totalsOf(state: RecordState, pathsOf: (task: JsonObject) => string[]): JsonObject {
  const tasks = [...state.records.tasks.values()];
  const paths = new Set<string>();
  let duration = 0;
  for (const task of tasks) {
    if (task.status === "in_progress") continue;
    for (const path of pathsOf(task)) paths.add(path);
    if (task.parent_task_id === null) duration += numberOr0(task.duration_seconds);
  }
  let input = 0;
  let output = 0;
  let cost = 0;
  for (const id of state.completed) {
    const metrics = objectOr(state.records.tasks.get(id)?.metrics);
    input += numberOr0(metrics?.input_tokens);
    output += numberOr0(metrics?.output_tokens);
    cost += numberOr0(metrics?.cost_usd);
  }
  return {
    tasks: tasks.length,
    open_tasks: tasks.filter((task) => task.status === "in_progress").length,
    duration_seconds: duration,
    files_changed: paths.size,
    decisions: state.records.decisions.size,
    issues: state.records.issues.size,
    reviews_needed: reviewOf(state).review.open,
    input_tokens: input,
    output_tokens: output,
    cost_usd: roundCost(cost),
  };
}

/**
 * The review counts at this state (./review-counts.ts): its tasks as their events carry them (each
 * event's task is the view the edge read the task's review facts from), its issues and its
 * feedback in the order it was given.
 */
export function reviewOf(state: RecordState): ReviewCounts {
  const tally = new ReviewTally();
  for (const task of state.records.tasks.values()) {
    const status = String(task.status);
    const completedAt = typeof task.completed_at === "string" ? task.completed_at : null;
    tally.addTask(
      { id: String(task.id), status: status as TaskView["status"], completed_at: completedAt },
      status === "in_progress" ? null : taskReviewFacts(task as unknown as FactsTask),
    );
  }
  for (const issue of state.records.issues.values())
    tally.addIssue({ id: String(issue.id), requires_human_review: issue.requires_human_review === true });
  return tally.counts([...state.feedback.values()] as unknown as VerdictLike[]);
}
