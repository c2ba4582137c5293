/**
 * @module resume-text — a resumed workflow as compact text: what get_workflow {workflow_id}
 * answers, what the `resume` prompt says, and the workflow's state a helper's start_task and
 * complete_task carry in their result's `_meta` for its hooks (one request per tool call: the
 * helper need not ask get_workflow after each task).
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { WORKFLOW_STATE_CHARS, WORKFLOW_STATE_META } from "@waymark/protocol/wire-constants";
import type { WorkflowState } from "../workflow/resume";

/** Recent decisions, issues and next steps a resume lists. */
export const RESUME_RECENT = 5;

export function renderResume(info: Partial<WorkflowState>): string {
  const lines = info.workflow ? [`${info.workflow.id} "${info.workflow.name}" ${info.workflow.status}`] : [];
  for (const t of info.open_tasks ?? [])
    lines.push(`open: ${t.task_id} ${t.name}${t.parent_task_id ? ` (sub of ${t.parent_task_id})` : ""}`);
  for (const t of info.completed_tasks ?? []) lines.push(`done: ${t.task_id} ${t.name} (${t.status})${t.summary ? `: ${t.summary}` : ""}`);
  for (const p of info.plan_progress ?? [])
    lines.push(`plan ${p.step}: ${p.done_by.length > 0 ? `done by ${p.done_by.join(", ")}` : "not done yet"}`);
  for (const d of info.recent_decisions ?? []) lines.push(`decided: ${d.question} → ${d.chosen}`);
  for (const i of info.recent_issues ?? []) lines.push(`issue${i.requires_human_review ? " (needs review)" : ""}: ${i.description}`);
  for (const step of info.next_steps ?? []) lines.push(`next: ${step}`);
  for (const f of info.feedback ?? []) lines.push(`reviewer ${f.verdict.replace("_", " ")} on ${f.target_id}: ${f.body}`);
  return lines.join("\n");
}

/** The result with the workflow's state in its `_meta` (WORKFLOW_STATE_META), for the helper's hooks. */
export function withWorkflowState(result: CallToolResult, state: WorkflowState | undefined): CallToolResult {
  if (!state) return result;
  const text = renderResume(state);
  const kept = text.length > WORKFLOW_STATE_CHARS ? `${text.slice(0, WORKFLOW_STATE_CHARS - 1)}…` : text;
  return { ...result, _meta: { ...result._meta, [WORKFLOW_STATE_META]: { workflow_id: state.workflow.id, text: kept } } };
}
