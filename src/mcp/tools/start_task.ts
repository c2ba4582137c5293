import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { RelatedItem } from "../../account/memory";
import { ok, type Result } from "../../errors";
import { LIMITS } from "../../limits";
import type { StartTaskInput } from "../../workflow/inputs";
import type { StartTaskOutput } from "../../workflow/object";
import { WRITES } from "../annotations";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, notFoundResult, type ToolContext, workflowStub } from "../context";
import { HELPER_ONLY, idempotencyKey, requiredText, snapshotSchema, taskId, workflowId } from "../fields";

export const startTaskInput = z.strictObject({
  workflow_id: workflowId.describe("Parent workflow ID"),
  parent_task_id: taskId.describe("Parent task ID (null if top-level task)").optional(),
  name: requiredText(LIMITS.NAME, "Task name (e.g., 'Implement Stripe integration')"),
  goal: requiredText(LIMITS.LONG_TEXT, "Precise goal of this task"),
  areas: z
    .array(requiredText(LIMITS.AREA))
    .max(LIMITS.AREAS)
    .describe("Code areas this task will touch (e.g., ['auth', 'api'])")
    .optional(),
  snapshot: snapshotSchema.optional(),
  idempotency_key: idempotencyKey,
});

const output = outputShape({ task_id: "string", snapshot_id: "string", snapshot_type: "string", started_at: "string" });

/**
 * Earlier decisions and issues of the account relevant to this task (memory, BM25), so the
 * agent learns from past work without another call. Best effort: the task is started either way.
 */
async function relatedWork(ctx: ToolContext, input: StartTaskInput, taskId: string): Promise<RelatedItem[]> {
  try {
    const account = ctx.env.ACCOUNT.get(ctx.env.ACCOUNT.idFromName(ctx.account));
    return await account.related({
      workflow_id: input.workflow_id,
      task_id: taskId,
      name: input.name,
      goal: input.goal,
      areas: input.areas ?? [],
    });
  } catch (error) {
    console.error("related work lookup failed", error);
    return [];
  }
}

export function registerStartTask(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "start_task",
    {
      description: "Start a new task and create a Git snapshot. Call before each task or subtask.",
      inputSchema: advertise(startTaskInput, { snapshot: HELPER_ONLY }),
      outputSchema: output,
      annotations: WRITES,
    },
    async (args) => {
      const parsed = parseArguments(startTaskInput, args);
      if (!parsed.ok) return errorResult(parsed);
      const input = parsed.value;
      const stub = workflowStub(ctx, input.workflow_id);
      if (!stub) return notFoundResult("workflow_id", input.workflow_id);
      return fromRpc(
        async (): Promise<Result<StartTaskOutput & { related?: RelatedItem[] }>> => {
          const started = await stub.startTask(ctx.account, input);
          if (!started.ok) return started;
          const related = await relatedWork(ctx, input, started.value.task_id);
          return ok(related.length > 0 ? { ...started.value, related } : started.value);
        },
        (out) =>
          [
            `task_id: ${out.task_id}`,
            `snapshot: ${out.snapshot_type} ${out.snapshot_id}`,
            ...(out.warnings ?? []).map((w) => `warning: ${w}`),
            ...(out.related ?? []).map((r) => `related ${r.kind} (${r.task_id ?? r.workflow_id}): ${r.text}`),
          ].join("\n"),
      );
    },
  );
}
