import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { LIMITS } from "../../limits";
import type { ToolContext } from "../context";
import { idempotencyKey, requiredText, taskId } from "../fields";
import { registerTaskLog } from "./task_log";

export const logIssueInput = z.strictObject({
  task_id: taskId,
  type: z.enum(["documentation_gap", "bug_encountered", "dependency_conflict", "unclear_requirement", "other"]),
  description: requiredText(LIMITS.LONG_TEXT, "Description of the issue"),
  resolution: requiredText(LIMITS.LONG_TEXT, "How the issue was resolved/worked around"),
  requires_human_review: z.boolean().describe("Does a human need to review this resolution?").optional(),
  idempotency_key: idempotencyKey,
});

export function registerLogIssue(server: McpServer, ctx: ToolContext): void {
  registerTaskLog(server, ctx, {
    name: "log_issue",
    description: "Log an issue encountered during execution and its resolution.",
    input: logIssueInput,
    record: (stub, account, input) => stub.logIssue(account, input),
  });
}
