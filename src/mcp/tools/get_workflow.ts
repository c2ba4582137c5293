import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { MemoryHit } from "../../account/memory";
import { ok, type Result } from "../../errors";
import { LIMITS } from "../../limits";
import type { ResumeInfo } from "../../workflow/object";
import type { TaskView, WorkflowSummary } from "../../workflow/view";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, notFoundResult, shortList, type ToolContext, taskStub, toolResult, workflowStub } from "../context";
import { requiredText, taskId, workflowId } from "../fields";

export const getWorkflowInput = z.strictObject({
  workflow_id: workflowId.optional(),
  task_id: taskId.describe("One task in full").optional(),
  query: requiredText(LIMITS.SEARCH_QUERY, "Search past tasks, decisions, issues").optional(),
  limit: z.number().int().min(1).max(LIMITS.SEARCH_RESULTS).optional(),
});

const RECENT = 5;

// Four shapes (resume, one task, search, list): the README documents each.
const output = outputShape({});

function renderResume(info: ResumeInfo): string {
  const lines = [`${info.workflow.id} "${info.workflow.name}" ${info.workflow.status}`];
  for (const t of info.open_tasks) lines.push(`open: ${t.task_id} ${t.name}${t.parent_task_id ? ` (sub of ${t.parent_task_id})` : ""}`);
  for (const d of info.recent_decisions) lines.push(`decided: ${d.question} → ${d.chosen}`);
  for (const i of info.recent_issues) lines.push(`issue${i.requires_human_review ? " (needs review)" : ""}: ${i.description}`);
  for (const step of info.next_steps) lines.push(`next: ${step}`);
  return lines.join("\n");
}

function renderTask(task: TaskView): string {
  const lines = [`${task.id} "${task.name}" ${task.status}${task.duration_seconds === null ? "" : ` in ${task.duration_seconds}s`}`];
  if (task.outcome) lines.push(`summary: ${task.outcome.summary}`);
  const files = task.files_changed;
  if (files)
    lines.push(`added: ${shortList(files.added)}`, `modified: ${shortList(files.modified)}`, `deleted: ${shortList(files.deleted)}`);
  if (task.verification && !task.verification.scope_match) lines.push(`outside scope: ${shortList(task.verification.unexpected_files)}`);
  return lines.join("\n");
}

function renderSearch(out: { match: "all" | "any"; results: MemoryHit[] }): string {
  if (out.results.length === 0) return "no matches";
  const lines = out.results.map((r) => `${r.kind} ${r.id} (${r.workflow_id}): ${r.text}`);
  return out.match === "any" ? ["no result has every word; results with some:", ...lines].join("\n") : lines.join("\n");
}

function renderList(workflows: WorkflowSummary[]): string {
  if (workflows.length === 0) return "no open workflows";
  return workflows.map((w) => `${w.id} "${w.name}" ${w.open_tasks} open task(s), updated ${w.updated_at}`).join("\n");
}

export function registerGetWorkflow(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "get_workflow",
    {
      description:
        "Resume after context loss (workflow_id), one task in full (task_id), search past work (query), or list your open workflows (no input).",
      inputSchema: advertise(getWorkflowInput),
      outputSchema: output,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) => {
      const parsed = parseArguments(getWorkflowInput, args);
      if (!parsed.ok) return errorResult(parsed);
      const { workflow_id: id, task_id: wantedTask, query, limit } = parsed.value;
      if (query !== undefined) {
        const account = ctx.env.ACCOUNT.get(ctx.env.ACCOUNT.idFromName(ctx.account));
        return fromRpc(async () => ok(await account.search(query, limit ?? 5)), renderSearch);
      }
      if (wantedTask !== undefined) {
        const stub = taskStub(ctx, wantedTask);
        if (!stub) return notFoundResult("task_id", wantedTask);
        return fromRpc(
          async (): Promise<Result<{ task: TaskView }>> => {
            const result = await stub.task(ctx.account, wantedTask);
            return result.ok ? ok({ task: result.value }) : result;
          },
          (out) => renderTask(out.task),
        );
      }
      if (id === undefined) {
        const account = ctx.env.ACCOUNT.get(ctx.env.ACCOUNT.idFromName(ctx.account));
        const workflows = await account.listWorkflows({ openOnly: true, limit: 20 });
        const structured = {
          workflows: workflows.map((w) => ({
            workflow_id: w.id,
            name: w.name,
            updated_at: w.updated_at,
            open_tasks: w.open_tasks,
            reviews_needed: w.reviews_needed,
          })),
        };
        return toolResult(structured, renderList(workflows));
      }
      const stub = workflowStub(ctx, id);
      if (!stub) return notFoundResult("workflow_id", id);
      return fromRpc(() => stub.resume(ctx.account, RECENT), renderResume);
    },
  );
}
