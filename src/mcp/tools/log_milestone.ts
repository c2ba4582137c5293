import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { LIMITS } from "../../limits";
import type { ToolContext } from "../context";
import { boundedObject, idempotencyKey, requiredText, taskId } from "../fields";
import { registerTaskLog } from "./task_log";

export const logMilestoneInput = z.strictObject({
  task_id: taskId,
  message: requiredText(LIMITS.SHORT_TEXT, "Short message (e.g., 'Running tests...')"),
  progress: z.number().min(0).max(100).describe("Estimated progress (0-100)").optional(),
  metadata: boundedObject("Optional additional data").optional(),
  idempotency_key: idempotencyKey,
});

export function registerLogMilestone(server: McpServer, ctx: ToolContext): void {
  registerTaskLog(server, ctx, {
    name: "log_milestone",
    description: "Log a milestone for real-time UI updates (max ~5 per task).",
    input: logMilestoneInput,
    record: (stub, account, input) => stub.logMilestone(account, input),
  });
}
