/**
 * @module mcp/reviewer-feedback
 * Delivers reviewer feedback to the agent: the feedback the agent has not seen yet is appended
 * to a successful tool result, as the structured field `reviewer_feedback` and one short line
 * of text. A write brings it in its own result (the workflow object takes it in the write's
 * transaction: workflow/writer); after a read that names a workflow (workflow_id or task_id) it
 * is taken from the workflow object (which marks it delivered). Best effort: the call already
 * succeeded, so a failing lookup costs only the digest (it is delivered next time).
 *
 * Only the agent's calls consume it: a credential that may consume feedback (write, the access
 * matrix's `feedback.consume`). A read-only credential's look (a dashboard script, a reviewer's
 * client) changes nothing; it sees the feedback in get_workflow's `feedback` field.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { may } from "../domain/access-scopes";
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

/** Whether this caller's reads mark feedback delivered: the one place that decides who consumes it. */
export function consumesFeedback(ctx: ToolContext): boolean {
  return may(ctx.scopes, "feedback.consume");
}

/**
 * Asks a workflow for the feedback the agent has not seen yet (marking it delivered); null when
 * none, on failure, or when the caller does not consume feedback.
 */
export async function takeFeedback(ctx: ToolContext, workflowId: string | null): Promise<FeedbackDigest | null> {
  if (!consumesFeedback(ctx)) return null;
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
