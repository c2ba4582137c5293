/**
 * @module workflow/resume
 * What an agent that lost its context reads to pick up a workflow: open tasks with their last
 * milestone, recent decisions and issues, the next steps of the latest completed tasks, and
 * totals. Bounded by `recent`, whatever the workflow's size.
 */
import type { WorkflowHeader, WorkflowView } from "../domain/view";
import type { Sql } from "../storage/sql";
import { iso, type WorkflowRecords } from "./records";
import type { RunningTotals } from "./totals";

export interface ResumeInfo {
  workflow: Pick<WorkflowHeader, "id" | "name" | "status" | "description" | "plan">;
  open_tasks: { task_id: string; parent_task_id: string | null; name: string; goal: string; started_at: string; last_milestone?: string }[];
  recent_decisions: { task_id: string; question: string; chosen: string }[];
  recent_issues: { task_id: string; type: string; description: string; requires_human_review: boolean }[];
  next_steps: string[];
  totals: WorkflowView["totals"];
}

export function resumeInfo(sql: Sql, records: WorkflowRecords, totals: RunningTotals, recent: number): ResumeInfo {
  const header = records.header();
  const decisions = sql<{ task_id: string; question: string; chosen: string }>`
    SELECT task_id, question, chosen FROM decisions ORDER BY created_at DESC, id DESC LIMIT ${recent}`;
  const issues = sql<{ task_id: string; type: string; description: string; requires_human_review: number }>`
    SELECT task_id, type, description, requires_human_review FROM issues ORDER BY requires_human_review DESC, created_at DESC LIMIT ${recent}`;
  const lastDone = sql<{ outcome: string }>`
    SELECT outcome FROM tasks WHERE outcome IS NOT NULL ORDER BY completed_at DESC LIMIT 3`;
  return {
    workflow: { id: header.id, name: header.name, status: header.status, description: header.description, plan: header.plan },
    open_tasks: records.openTasks().map((t) => {
      const milestone = records.lastMilestone(t.id);
      return {
        task_id: t.id,
        parent_task_id: t.parent_id,
        name: t.name,
        goal: t.goal,
        started_at: iso(t.started_at),
        ...(milestone === undefined ? {} : { last_milestone: milestone }),
      };
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
