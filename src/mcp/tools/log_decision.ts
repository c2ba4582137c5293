import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { LIMITS } from "../../limits";
import type { ToolContext } from "../context";
import { idempotencyKey, requiredText, taskId, text } from "../fields";
import { registerTaskLog } from "./task_log";

export const logDecisionInput = z.strictObject({
  task_id: taskId,
  category: z.enum(["architecture", "library_choice", "trade_off", "workaround", "other"]),
  question: requiredText(LIMITS.SHORT_TEXT, "The decision question (e.g., 'Which auth library to use?')"),
  options_considered: z
    .array(requiredText(LIMITS.SHORT_TEXT))
    .max(LIMITS.OPTIONS)
    .describe("Options evaluated (e.g., ['NextAuth', 'Clerk', 'Custom'])")
    .optional(),
  chosen: requiredText(LIMITS.SHORT_TEXT, "Chosen option"),
  reasoning: requiredText(LIMITS.LONG_TEXT, "Why this choice (1-2 sentences)"),
  trade_offs: text(LIMITS.LONG_TEXT, "Accepted compromises (optional)").optional(),
  idempotency_key: idempotencyKey,
});

export function registerLogDecision(server: McpServer, ctx: ToolContext): void {
  registerTaskLog(server, ctx, {
    name: "log_decision",
    description: "Log an important architectural decision (skip trivial ones).",
    input: logDecisionInput,
    record: (stub, account, input) => stub.logDecision(account, input),
  });
}
