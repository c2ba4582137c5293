import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { LIMITS } from "../../limits";
import { WRITES } from "../annotations";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, notFoundResult, type ToolContext, workflowStub } from "../context";
import { idempotencyKey, requiredText, textList, workflowId } from "../fields";

export const completeWorkflowInput = z.strictObject({
  workflow_id: workflowId,
  status: z.enum(["success", "partial_success", "failed"]),
  summary: requiredText(LIMITS.LONG_TEXT, "What the whole workflow achieved (2-4 sentences)"),
  achievements: textList().optional(),
  limitations: textList().optional(),
  idempotency_key: idempotencyKey,
});

const output = outputShape({ workflow_id: "string", status: "string", totals: "object" });

export function registerCompleteWorkflow(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "complete_workflow",
    {
      description: "Close a workflow once all its tasks are complete.",
      inputSchema: advertise(completeWorkflowInput),
      outputSchema: output,
      annotations: WRITES,
    },
    async (args) => {
      const parsed = parseArguments(completeWorkflowInput, args);
      if (!parsed.ok) return errorResult(parsed);
      const stub = workflowStub(ctx, parsed.value.workflow_id);
      if (!stub) return notFoundResult("workflow_id", parsed.value.workflow_id);
      return fromRpc(
        () => stub.completeWorkflow(ctx.account, parsed.value),
        (out) =>
          `${out.workflow_id} ${out.status}: ${out.totals.tasks} tasks, ${out.totals.files_changed} files, ${out.totals.reviews_needed} reviews needed`,
      );
    },
  );
}
