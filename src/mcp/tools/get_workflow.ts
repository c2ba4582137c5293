/**
 * @module get_workflow — the one reading tool, in four modes chosen by the input: resume a workflow
 * (workflow_id), one task in full (task_id), search past work (query: words, or a file path to find
 * which tasks changed it, see account/work-search), or the open workflows (nothing).
 */
import { displayPath } from "@waymark/protocol/paths";
import { compactProvenance } from "@waymark/protocol/provenance-wording";
import { getWorkflowInput } from "@waymark/protocol/tools";
import type { WorkHit } from "../../account/work-search";
import type { FeedbackView, TaskView } from "../../domain/view";
import { ok, type Result } from "../../errors";
import type { ResumeInfo } from "../../workflow/workflow-object";
import { READS } from "../annotations";
import { APP_LINK } from "../app";
import { accountStub, notFound, shortList, type ToolContext, taskStub, workflowStub } from "../context";
import { defineTool } from "../define";
import { RESUME_RECENT, renderResume } from "../resume-text";
import { consumesFeedback } from "../reviewer-feedback";

const DEFAULT_SEARCH_RESULTS = 5;
const LISTED_WORKFLOWS = 20;

interface OpenWorkflow {
  workflow_id: string;
  name: string;
  updated_at: string;
  open_tasks: number;
  reviews_needed: number;
}

/** Each mode fills its own fields; docs/tools.md documents each shape. */
export type GetWorkflowOutput = Partial<
  ResumeInfo & { feedback: FeedbackView[]; task: TaskView; match: "all" | "any"; results: WorkHit[]; workflows: OpenWorkflow[] }
>;

function renderTask(task: TaskView): string {
  const lines = [`${task.id} "${task.name}" ${task.status}${task.duration_seconds === null ? "" : ` in ${task.duration_seconds}s`}`];
  if (task.outcome) lines.push(`summary: ${task.outcome.summary}`);
  const files = task.files_changed;
  if (files)
    lines.push(`added: ${shortList(files.added)}`, `modified: ${shortList(files.modified)}`, `deleted: ${shortList(files.deleted)}`);
  if (files?.more) lines.push(`and ${files.more} more files recorded (the task's file pages and the JSON export list all)`);
  if (task.verification && !task.verification.scope_match) lines.push(`outside scope: ${shortList(task.verification.unexpected_files)}`);
  lines.push(...compactProvenance(task, shortList));
  return lines.join("\n");
}

function renderHit(hit: WorkHit): string {
  if (hit.kind === "file")
    return `file ${displayPath(hit.path)} ${hit.status} by ${hit.task_id} "${hit.task_name}" (${hit.workflow_id}) ${hit.at}`;
  return `${hit.kind} ${hit.id} (${hit.workflow_id}): ${hit.text}`;
}

function renderSearch(match: "all" | "any" | undefined, results: WorkHit[]): string {
  if (results.length === 0) return "no matches";
  const files = results.filter((r) => r.kind === "file").map(renderHit);
  const words = results.filter((r) => r.kind !== "file").map(renderHit);
  if (match === "any" && words.length > 0) words.unshift("no result has every word; results with some:");
  return [...files, ...words].join("\n");
}

function renderList(workflows: OpenWorkflow[]): string {
  if (workflows.length === 0) return "no open workflows";
  return workflows.map((w) => `${w.workflow_id} "${w.name}" ${w.open_tasks} open task(s), updated ${w.updated_at}`).join("\n");
}

function render(out: GetWorkflowOutput): string {
  if (out.task) return renderTask(out.task);
  if (out.results) return renderSearch(out.match, out.results);
  if (out.workflows) return renderList(out.workflows);
  return renderResume(out);
}

async function openWorkflows(ctx: ToolContext): Promise<Result<GetWorkflowOutput>> {
  const workflows = await accountStub(ctx).listWorkflows({ openOnly: true, limit: LISTED_WORKFLOWS });
  return ok({
    workflows: workflows.map((w) => ({
      workflow_id: w.id,
      name: w.name,
      updated_at: w.updated_at,
      open_tasks: w.open_tasks,
      reviews_needed: w.reviews_needed,
    })),
  });
}

export const getWorkflowTool = defineTool({
  name: "get_workflow",
  description: "Resume (workflow_id), read a task (task_id), search past work (query), or list open workflows.",
  input: getWorkflowInput,
  output: [
    "workflow",
    "open_tasks",
    "completed_tasks",
    "plan_progress",
    "recent_decisions",
    "recent_issues",
    "next_steps",
    "feedback",
    "totals",
    "task",
    "match",
    "results",
    "workflows",
  ],
  annotations: READS,
  meta: APP_LINK,
  run: async (input, ctx): Promise<Result<GetWorkflowOutput>> => {
    if (input.query !== undefined) return ok(await accountStub(ctx).searchWork(input.query, input.limit ?? DEFAULT_SEARCH_RESULTS));
    if (input.task_id !== undefined) {
      const stub = taskStub(ctx, input.task_id);
      if (!stub) return notFound("task_id", input.task_id);
      const task = await stub.task(ctx.account, input.task_id);
      return task.ok ? ok({ task: task.value }) : task;
    }
    if (input.workflow_id === undefined) return openWorkflows(ctx);
    const stub = workflowStub(ctx, input.workflow_id);
    return stub ? stub.resume(ctx.account, RESUME_RECENT, consumesFeedback(ctx)) : notFound("workflow_id", input.workflow_id);
  },
  render,
});
