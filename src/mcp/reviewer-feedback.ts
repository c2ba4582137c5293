/**
 * @module mcp/reviewer-feedback
 * Delivers reviewer feedback to the agent: the feedback the agent has not seen yet is appended
 * to a successful tool result, as the structured field `reviewer_feedback` and one short line
 * of text. A write brings it in its own result (the workflow object takes it in the write's
 * transaction: workflow/writer); after a read that names a workflow (workflow_id or task_id) it
 * is taken from the workflow object (which marks it delivered). Best effort: the call already
 * succeeded, so a failing lookup costs only the digest (it is delivered next time).
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { workflowOfTask } from "../ids";
import { type FeedbackDigest, feedbackDigestText } from "../workflow/feedback";
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

/** The result with `digest` as its structured field and one line of text. */
export function withDigest(result: CallToolResult, digest: FeedbackDigest | null | undefined): CallToolResult {
  if (!digest) return result;
  return {
    ...result,
    structuredContent: { ...(result.structuredContent ?? {}), reviewer_feedback: digest },
    content: [...result.content, { type: "text", text: feedbackDigestText(digest) }],
  };
}

/** Asks a workflow for the feedback the agent has not seen yet (marking it delivered); null when none or on failure. */
export async function takeFeedback(ctx: ToolContext, workflowId: string | null): Promise<FeedbackDigest | null> {
  const stub = workflowId ? workflowStub(ctx, workflowId) : null;
  if (!stub) return null;
  try {
    return await stub.takeFeedback(ctx.account);
  } catch (error) {
    console.error("reviewer feedback lookup failed", error);
    return null;
  }
}

/** After a read: asks the workflow the call named for the feedback not yet delivered. */
export async function withReviewerFeedback(result: CallToolResult, input: unknown, ctx: ToolContext): Promise<CallToolResult> {
  return withDigest(result, await takeFeedback(ctx, workflowOf(input, result)));
}
