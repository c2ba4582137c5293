/**
 * @module mcp/feedback
 * Delivers reviewer feedback to the agent: after a successful tool call on a workflow (the
 * input names a workflow_id or a task_id), the feedback the agent has not seen yet is taken
 * from the workflow object (which marks it delivered) and appended to the result, as the
 * structured field `reviewer_feedback` and one short line of text. Best effort: the call
 * already succeeded, so a failing lookup costs only the digest (it is delivered next time).
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { workflowOfTask } from "../ids";
import { feedbackDigestText } from "../workflow/feedback";
import { type ToolContext, workflowStub } from "./context";

/** The workflow a tool call acted on, from its input or its result (start_workflow returns the id it created). */
function workflowOf(input: unknown, result: CallToolResult): string | null {
  const fields = [input, result.structuredContent].filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null);
  for (const f of fields) {
    if (typeof f.workflow_id === "string") return f.workflow_id;
    if (typeof f.task_id === "string") return workflowOfTask(f.task_id);
  }
  return null;
}

export async function withReviewerFeedback(result: CallToolResult, input: unknown, ctx: ToolContext): Promise<CallToolResult> {
  const workflowId = workflowOf(input, result);
  const stub = workflowId ? workflowStub(ctx, workflowId) : null;
  if (!stub) return result;
  try {
    const digest = await stub.takeFeedback(ctx.account);
    if (!digest) return result;
    return {
      ...result,
      structuredContent: { ...(result.structuredContent ?? {}), reviewer_feedback: digest },
      content: [...result.content, { type: "text", text: feedbackDigestText(digest) }],
    };
  } catch (error) {
    console.error("reviewer feedback lookup failed", error);
    return result;
  }
}
