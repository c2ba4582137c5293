/**
 * @module pages/timeline
 * The workflow as a timeline, written one task entry at a time so a page of any length can
 * be streamed in bounded memory. Entries arrive in timeline order (top-level tasks by start,
 * each followed depth-first by its subtasks); inside a task, its milestones, decisions, issues
 * and subtasks are merged in time order: a task's logs are held (never more than the open
 * tasks' own logs) until the next subtask's start says which of them come before it.
 *
 * While it writes, the timeline gathers what the page shows around it, each list bounded:
 * the items needing review, which plan steps which tasks did, the names of what reviewers
 * commented on, and the owner's feedback targets.
 */
import { type CheckLine, checkLines } from "@waymark/protocol/check-evidence";
import { type DiffLink, diffLink } from "@waymark/protocol/diff-links";
import { isReviewItem, taskReviewFacts } from "@waymark/protocol/review-counts";
import { counted, enumLabel } from "@waymark/protocol/wording";
import type { html } from "hono/html";
import { type PlanStepRef, planStepMatcher } from "../domain/plan";
import type { DecisionView, IssueView, MilestoneView, TaskEntry, TaskView } from "../domain/view";
import { type FileRow, taskFiles } from "./files";
import type { Level } from "./format";
import type { CommonProvenance } from "./provenance-notes";
import { closeTask, type ItemOptions, openTask, renderDecision, renderIssue, renderMilestone } from "./task";

type Html = ReturnType<typeof html>;
export type Chunk = Html | string;

/** Workflows with more tasks than this start with their finished tasks collapsed. */
export const EXPANDED_TASKS = 25;
/** Items listed in the review box (the rest are counted). */
const REVIEW_ITEMS = 100;
/** Rows of the page's one list of changed files (the rest are counted; each task's card lists its own). */
const CHANGED_ROWS = 200;
/** Tasks whose checks the first screen lists, and tasks whose files outside their areas it lists. */
const CHECK_TASKS = 20;
const OUTSIDE_TASKS = 20;
/** Tasks named per plan step. */
const TASKS_PER_STEP = 5;
/** Out-of-scope paths a review item names (the task's files table marks them all). */
const SCOPE_PATHS = 3;
/** Choices in the owner's feedback form besides the workflow and the review items. */
const FEEDBACK_TARGETS = 200;

/**
 * A review item on this page (@waymark/protocol/review-counts): a completed task that failed, asked
 * for review or changed files outside its areas (once, with each reason), or an issue flagged for
 * a human.
 */
export interface ReviewItem {
  kind: "task" | "issue";
  id: string;
  /** A task's name; an issue's type in words. */
  title: string;
  /** For an issue, the task it was logged on. */
  task?: { id: string; name: string };
  /** Why it needs a person, each said in words. */
  reasons: string[];
  /** Verdicts count from this time (a task's completion; "" for an issue). */
  since: string;
}

/** One row of the page's one list of changed files: the file, the task that changed it, where to see its change. */
export interface ChangedRow {
  task: { id: string; name: string };
  row: FileRow;
  diff: DiffLink;
}

/** A task's files outside its declared areas. */
export interface OutsideTask {
  task: { id: string; name: string };
  areas: string[];
  paths: string[];
  /** Such files beyond those listed. */
  more: number;
  /** Its subtasks changed every one of them: a parent's files include its subtasks'. */
  throughSubtasks: boolean;
}

/** Whether every file a task lists outside its areas is one its subtasks list too (a parent's record includes their files). */
function throughSubtasks(entry: TaskEntry): boolean {
  const inSubtasks = new Set(entry.paths_in_subtasks);
  const outside = entry.task.verification?.unexpected_files ?? [];
  return entry.subtasks > 0 && outside.length > 0 && outside.every((path) => inSubtasks.has(path));
}

export interface StepTask {
  id: string;
  name: string;
  state: "done" | "running" | "failed";
}

export interface FeedbackChoice {
  value: string;
  label: string;
  id: string;
}

export interface TimelineFacts {
  tasks: number;
  review: ReviewItem[];
  reviewOmitted: number;
  /** Review items this page met, listed or not (the head counts the workflow's). */
  reviewSeen: number;
  /** The page's changed files across its tasks (each task's own files), and how many more it met. */
  changed: ChangedRow[];
  changedOmitted: number;
  /** Tasks whose files were read past this page's bound (their cards link to them all). */
  changedUnlisted: number;
  /** Tasks with checks claimed or observed, with their check lines. */
  checks: { task: { id: string; name: string; status: string }; lines: CheckLine[] }[];
  checksOmitted: number;
  outside: OutsideTask[];
  outsideOmitted: number;
  /** Per plan step (same order as the plan): the tasks named after it, done, running or failed. */
  steps: { tasks: StepTask[]; omitted: number }[];
  /** Labels of the ids asked for (what feedback is about). */
  labels: Map<string, string>;
  choices: FeedbackChoice[];
}

type LogItem = {
  at: string;
  item: { kind: "milestone"; value: MilestoneView } | { kind: "decision"; value: DecisionView } | { kind: "issue"; value: IssueView };
};

interface OpenTask {
  depth: number;
  logs: LogItem[];
  /** Index of the next log to write. */
  next: number;
}

const clip = (text: string, max = 70) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export interface TimelineOptions extends ItemOptions {
  plan: readonly PlanStepRef[];
  /** Provenance said once for the page: a task's card says only where it differs. */
  provenance?: CommonProvenance;
  /** Tasks in the workflow: beyond EXPANDED_TASKS, finished tasks start collapsed. */
  totalTasks: number;
  /** Ids whose labels the page needs (feedback targets). */
  labelsFor: ReadonlySet<string>;
  /** The feedback form's preselected id: always among the choices. */
  selected?: string | null;
}

export class Timeline {
  readonly facts: TimelineFacts;
  private readonly stack: OpenTask[] = [];
  private readonly matchSteps: (task: TaskView) => number[];

  constructor(private readonly options: TimelineOptions) {
    this.matchSteps = planStepMatcher(options.plan);
    this.facts = {
      tasks: 0,
      review: [],
      reviewOmitted: 0,
      reviewSeen: 0,
      changed: [],
      changedOmitted: 0,
      changedUnlisted: 0,
      checks: [],
      checksOmitted: 0,
      outside: [],
      outsideOmitted: 0,
      steps: options.plan.map(() => ({ tasks: [], omitted: 0 })),
      labels: new Map(),
      choices: [],
    };
  }

  /** The rest of the timeline, once every entry was added. */
  *finish(): Generator<Chunk> {
    while (this.stack.length > 0) yield* this.close();
  }

  /** The markup of one entry, and of its parents' logs that came before it. */
  *add(entry: TaskEntry): Generator<Chunk> {
    const depth = Math.min(entry.depth, this.stack.length);
    while (this.stack.length > depth) yield* this.close();
    const parent = this.stack.at(-1);
    if (parent) yield* this.logsBefore(parent, entry.task.started_at);
    const t = entry.task;
    this.gather(entry);
    const steps = this.matchSteps(t);
    for (const index of steps) this.recordStep(index, t);
    yield openTask(
      {
        task: t,
        // A failed task did not do the steps it is named after.
        planSteps: t.status === "failed" ? [] : steps.map((i) => this.options.plan[i]?.step ?? ""),
        inSubtasks: entry.subtasks > 0 ? new Set(entry.paths_in_subtasks) : null,
        logs: {
          decisions: entry.decisions.length,
          issues: entry.issues.length,
          reviews: entry.issues.filter((i) => i.requires_human_review).length,
        },
        open: this.options.totalTasks <= EXPANDED_TASKS || t.status === "in_progress",
        level: Math.min(6, 3 + depth) as Level,
        filesUnlisted: entry.files_unlisted ?? 0,
      },
      this.options,
    );
    const logs: LogItem[] = [
      ...entry.milestones.map((value): LogItem => ({ at: value.created_at, item: { kind: "milestone", value } })),
      ...entry.decisions.map((value): LogItem => ({ at: value.created_at, item: { kind: "decision", value } })),
      ...entry.issues.map((value): LogItem => ({ at: value.created_at, item: { kind: "issue", value } })),
    ].sort((a, b) => a.at.localeCompare(b.at));
    this.stack.push({ depth, logs, next: 0 });
  }

  private *logsBefore(open: OpenTask, until: string | null): Generator<Chunk> {
    while (open.next < open.logs.length) {
      const log = open.logs[open.next];
      if (!log || (until !== null && log.at > until)) return;
      open.next++;
      const { item } = log;
      yield item.kind === "milestone"
        ? renderMilestone(item.value)
        : item.kind === "decision"
          ? renderDecision(item.value, this.options)
          : renderIssue(item.value, this.options);
    }
  }

  private *close(): Generator<Chunk> {
    const open = this.stack.pop();
    if (!open) return;
    yield* this.logsBefore(open, null);
    yield closeTask;
  }

  private recordStep(index: number, t: TaskView): void {
    const step = this.facts.steps[index];
    if (!step) return;
    const state = t.status === "in_progress" ? "running" : t.status === "failed" ? "failed" : "done";
    if (step.tasks.length < TASKS_PER_STEP) step.tasks.push({ id: t.id, name: t.name, state });
    else step.omitted++;
  }

  /** The task's own files (a parent's without those its subtasks list) into the page's one list. */
  private gatherChanged(entry: TaskEntry): void {
    const t = entry.task;
    if (!t.files_changed) return;
    const { rows, unlisted } = taskFiles(t, entry.subtasks > 0 ? new Set(entry.paths_in_subtasks) : undefined);
    if (unlisted + (entry.files_unlisted ?? 0) > 0) this.facts.changedUnlisted++;
    const repo = t.repository;
    for (const row of rows) {
      if (this.facts.changed.length >= CHANGED_ROWS) {
        this.facts.changedOmitted++;
        continue;
      }
      const diff = diffLink({
        remote: repo?.remote ?? null,
        start: repo?.start_commit ?? null,
        end: repo?.end_commit ?? null,
        path: row.path,
        uncommitted: row.uncommitted,
      });
      this.facts.changed.push({ task: { id: t.id, name: t.name }, row, diff });
    }
  }

  private review(item: ReviewItem): void {
    if (this.facts.review.length < REVIEW_ITEMS) this.facts.review.push(item);
    else this.facts.reviewOmitted++;
  }

  private choice(kind: string, id: string, label: string): void {
    if (this.facts.choices.length < FEEDBACK_TARGETS || id === this.options.selected)
      this.facts.choices.push({ value: `${kind}:${id}`, label: clip(label), id });
  }

  private label(id: string, label: string): void {
    if (this.options.labelsFor.has(id)) this.facts.labels.set(id, label);
  }

  private gather(entry: TaskEntry): void {
    const t = entry.task;
    this.facts.tasks++;
    const ref = { id: t.id, name: t.name };
    const facts = t.status === "in_progress" ? null : taskReviewFacts(t);
    const outside = t.verification?.unexpected_files ?? [];
    if (facts && isReviewItem(t.status, facts)) {
      this.facts.reviewSeen++;
      const reasons: string[] = [];
      if (facts.failed) reasons.push("the agent reported it failed");
      if (facts.asked) reasons.push(`it asked for review: ${t.outcome?.manual_review_reason || "no reason given"}`);
      if (facts.outside > 0) {
        const named = outside.slice(0, SCOPE_PATHS).join(", ");
        const more = facts.outside - Math.min(outside.length, SCOPE_PATHS);
        const through = throughSubtasks(entry) ? " (through its subtasks)" : "";
        reasons.push(
          `it changed ${counted(facts.outside, "file")} outside its declared areas${through}: ${named}${more > 0 ? ` and ${more} more` : ""}`,
        );
      }
      this.review({ kind: "task", id: t.id, title: t.name, reasons, since: t.completed_at ?? "" });
    }
    for (const i of entry.issues)
      if (i.requires_human_review) {
        this.facts.reviewSeen++;
        this.review({ kind: "issue", id: i.id, title: enumLabel(i.type), task: ref, reasons: [i.description], since: "" });
      }
    if (facts && facts.outside > 0) {
      if (this.facts.outside.length < OUTSIDE_TASKS)
        this.facts.outside.push({
          task: ref,
          areas: t.areas,
          paths: outside,
          more: facts.outside - outside.length,
          throughSubtasks: throughSubtasks(entry),
        });
      else this.facts.outsideOmitted++;
    }
    const lines = checkLines(t);
    if (lines.length > 0) {
      if (this.facts.checks.length < CHECK_TASKS) this.facts.checks.push({ task: { ...ref, status: t.status }, lines });
      else this.facts.checksOmitted++;
    }
    this.gatherChanged(entry);
    this.label(t.id, `task ${t.name}`);
    this.choice("task", t.id, `Task: ${t.name}`);
    for (const d of entry.decisions) {
      this.label(d.id, `decision ${d.question}`);
      this.choice("decision", d.id, `Decision: ${d.question}`);
    }
    for (const i of entry.issues) {
      this.label(i.id, `issue ${enumLabel(i.type)}`);
      this.choice("issue", i.id, `Issue (${enumLabel(i.type)}): ${i.description}`);
    }
  }
}
