/**
 * @module workflow/resume
 * What an agent that lost its context reads to pick up a workflow: what is still open (tasks
 * with their last milestone), what is already done (the latest completed tasks with a one-line
 * outcome, and which plan steps they fulfilled where names allow), recent decisions and issues,
 * the next steps of the latest completed tasks, and totals. Lists are bounded whatever the
 * workflow's size.
 */
import type { StepProgress } from "../domain/plan";
import type { FeedbackView, WorkflowHeader, WorkflowView } from "../domain/view";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import { iso, type WorkflowRecords } from "./records";
import type { RunningTotals } from "./totals";

export interface ResumeInfo {
  workflow: Pick<WorkflowHeader, "id" | "name" | "status" | "description" | "plan" | "repository">;
  open_tasks: { task_id: string; parent_task_id: string | null; name: string; goal: string; started_at: string; last_milestone?: string }[];
  /** Newest first, at most LIMITS.RESUME_COMPLETED; `summary` is the outcome's first line, shortened. */
  completed_tasks: {
    task_id: string;
    parent_task_id: string | null;
    name: string;
    status: string;
    summary: string;
    completed_at: string;
  }[];
  /** Present when the workflow has a plan. */
  plan_progress?: StepProgress[];
  recent_decisions: { task_id: string; question: string; chosen: string }[];
  recent_issues: { task_id: string; type: string; description: string; requires_human_review: boolean }[];
  next_steps: string[];
  totals: WorkflowView["totals"];
}

/** The resume with the reviewer feedback (get_workflow's `feedback`): the workflow's state as the helper's hooks keep it. */
export type WorkflowState = ResumeInfo & { feedback?: FeedbackView[] };

export function resumeInfo(sql: Sql, records: WorkflowRecords, totals: RunningTotals, recent: number): ResumeInfo {
  const header = records.header();
  const decisions = sql<{ task_id: string; question: string; chosen: string }>`
    SELECT task_id, question, chosen FROM log_entries WHERE kind = 'decisions' ORDER BY created_at DESC, id DESC LIMIT ${recent}`;
  // Those asking for review first, newest first (through their partial index, log_entries_review:
  // only issues have the flag), then
  // the newest others: the second statement skips at most the flagged ones, fewer than `recent` when it runs.
  type IssueRow = { task_id: string; type: string; description: string; requires_human_review: number };
  const flagged = sql<IssueRow>`
    SELECT task_id, type, description, requires_human_review FROM log_entries WHERE requires_human_review = 1
    ORDER BY created_at DESC, id DESC LIMIT ${recent}`;
  const issues =
    flagged.length >= recent
      ? flagged
      : flagged.concat(sql<IssueRow>`
    SELECT task_id, type, description, requires_human_review FROM log_entries WHERE kind = 'issues' AND requires_human_review = 0
    ORDER BY created_at DESC, id DESC LIMIT ${recent - flagged.length}`);
  // The tasks listed, with their outcomes (the large column) in the same statement: plan progress is
  // kept by the object (workflow/plan-progress), so a resume reads no other completed task (a
  // helper's start_task and complete_task read this after every write: ../mcp/resume-text).
  const listed = sql<{ id: string; parent_id: string | null; name: string; status: string; completed_at: number; outcome: string | null }>`
    SELECT id, parent_id, name, status, completed_at, outcome FROM tasks WHERE status != 'in_progress' AND completed_at IS NOT NULL
    ORDER BY completed_at DESC, id DESC LIMIT ${LIMITS.RESUME_COMPLETED}`;
  const outcomes = new Map(listed.map((t) => [t.id, t.outcome]));
  // The next steps come from the latest three outcomes: those listed already hold them unless too few of them have one.
  const listedOutcomes = listed.map((t) => outcomes.get(t.id) ?? null).filter((outcome): outcome is string => outcome !== null);
  const lastDone =
    listedOutcomes.length >= 3 || listed.length < LIMITS.RESUME_COMPLETED
      ? listedOutcomes.slice(0, 3).map((outcome) => ({ outcome }))
      : sql<{ outcome: string }>`
    SELECT outcome FROM tasks WHERE outcome IS NOT NULL AND completed_at IS NOT NULL ORDER BY completed_at DESC LIMIT 3`;
  const open = records.openTasks();
  const milestones = records.lastMilestones(open);
  return {
    workflow: {
      id: header.id,
      name: header.name,
      status: header.status,
      description: header.description,
      plan: header.plan,
      // Repository identity: which repository and branch this workflow was started in.
      ...(header.repository ? { repository: header.repository } : {}),
    },
    open_tasks: open.map((t) => {
      const milestone = milestones.get(t.id);
      return {
        task_id: t.id,
        parent_task_id: t.parent_id,
        name: t.name,
        goal: t.goal,
        started_at: iso(t.started_at),
        ...(milestone === undefined ? {} : { last_milestone: milestone }),
      };
    }),
    completed_tasks: listed.map((t) => ({
      task_id: t.id,
      parent_task_id: t.parent_id,
      name: t.name,
      status: t.status,
      summary: oneLine(summaryOf(outcomes.get(t.id) ?? null)),
      completed_at: iso(t.completed_at),
    })),
    ...(header.plan.length === 0
      ? {}
      : {
          plan_progress: records.planProgress.of(header.plan),
        }),
    recent_decisions: decisions.map((d) => ({ task_id: d.task_id, question: d.question, chosen: d.chosen })),
    recent_issues: issues.map((i) => ({
      task_id: i.task_id,
      type: i.type,
      description: i.description,
      requires_human_review: i.requires_human_review === 1,
    })),
    next_steps: lastDone.flatMap((t) => (JSON.parse(t.outcome) as { next_steps?: string[] }).next_steps ?? []).slice(0, recent),
    totals: totals.read(),
  };
}

const summaryOf = (outcome: string | null) => (outcome === null ? "" : ((JSON.parse(outcome) as { summary?: string }).summary ?? ""));

/** The first line of a text, at most LIMITS.RELATED_TEXT characters: enough to know what was done. */
function oneLine(text: string): string {
  const first = text.split("\n", 1)[0]?.trim() ?? "";
  return first.length > LIMITS.RELATED_TEXT ? `${first.slice(0, LIMITS.RELATED_TEXT - 1)}…` : first;
}
