import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { LIMITS } from "../../limits";
import type { CompleteTaskOutput } from "../../workflow/object";
import { WRITES } from "../annotations";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, notFoundResult, shortList, type ToolContext, taskStub } from "../context";
import { changesSchema, HELPER_ONLY, idempotencyKey, requiredText, taskId, text, textList } from "../fields";

const METRICS_DESCRIPTION = "Your usage: {input_tokens, output_tokens, model, cost_usd}";

const shortTextList = z.array(requiredText(LIMITS.NAME)).max(LIMITS.LIST_ITEMS * 2);

export const completeTaskInput = z.strictObject({
  task_id: taskId,
  status: z.enum(["success", "partial_success", "failed"]),
  outcome: z.strictObject({
    summary: requiredText(LIMITS.LONG_TEXT, "Summary of what was accomplished (2-4 sentences)"),
    achievements: textList("Concrete achievements (empty array if none)").optional(),
    limitations: textList("Limitations/compromises (empty array if none)").optional(),
    manual_review_needed: z.boolean().describe("Does a human need to review before continuing?").optional(),
    manual_review_reason: text(LIMITS.SHORT_TEXT, "Why manual review is needed").optional(),
    next_steps: textList("Suggested next steps (optional)").optional(),
  }),
  metadata: z
    .strictObject({
      packages_added: shortTextList.optional(),
      packages_removed: shortTextList.optional(),
      commands_executed: z
        .array(requiredText(LIMITS.SHORT_TEXT))
        .max(LIMITS.LIST_ITEMS * 2)
        .optional(),
      tests_status: z.enum(["passed", "failed", "not_run"]).optional(),
    })
    .optional(),
  metrics: z
    .strictObject({
      input_tokens: z.number().int().min(0).max(LIMITS.METRIC_TOKENS).optional(),
      output_tokens: z.number().int().min(0).max(LIMITS.METRIC_TOKENS).optional(),
      model: requiredText(LIMITS.NAME).optional(),
      cost_usd: z.number().min(0).max(LIMITS.METRIC_COST_USD).optional(),
    })
    .optional(),
  changes: changesSchema.optional(),
  idempotency_key: idempotencyKey,
});

const output = outputShape({ task_id: "string", duration_seconds: "number", files_changed: "object", verification: "object" });

function render(out: CompleteTaskOutput): string {
  const f = out.files_changed;
  const v = out.verification;
  const lines = [
    `${out.task_id} ${out.status} in ${out.duration_seconds}s`,
    `added: ${shortList(f.added)}`,
    `modified: ${shortList(f.modified)}`,
    `deleted: ${shortList(f.deleted)}`,
  ];
  if (f.renamed.length > 0) lines.push(`renamed: ${shortList(f.renamed.map((r) => `${r.from} → ${r.to}`))}`);
  if (f.uncommitted.length > 0) lines.push(`uncommitted: ${shortList(f.uncommitted)}`);
  lines.push(v.scope_match ? "scope: ok" : `scope: outside declared areas: ${shortList(v.unexpected_files)}`);
  for (const warning of v.warnings) lines.push(`warning: ${warning}`);
  return lines.join("\n");
}

export function registerCompleteTask(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "complete_task",
    {
      description: "Complete a task and compute file changes via Git diff. Complete subtasks first.",
      // metrics is advertised by its key names only: its full schema would cost every agent ~300 bytes of context.
      inputSchema: advertise(completeTaskInput, { changes: HELPER_ONLY, metrics: METRICS_DESCRIPTION }),
      outputSchema: output,
      annotations: WRITES,
    },
    async (args) => {
      const parsed = parseArguments(completeTaskInput, args);
      if (!parsed.ok) return errorResult(parsed);
      const stub = taskStub(ctx, parsed.value.task_id);
      if (!stub) return notFoundResult("task_id", parsed.value.task_id);
      return fromRpc(() => stub.completeTask(ctx.account, parsed.value), render);
    },
  );
}
