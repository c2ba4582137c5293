import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Failure, Result } from "../errors";
import { isWorkflowId, workflowOfTask } from "../ids";

/** What a tool needs to act for the authenticated account. */
export interface ToolContext {
  env: Env;
  account: string;
  /** Origin of this deployment, for links in results. */
  origin: string;
}

export function workflowStub(ctx: ToolContext, workflowId: string) {
  return isWorkflowId(workflowId) ? ctx.env.WORKFLOW.get(ctx.env.WORKFLOW.idFromName(workflowId)) : null;
}

/** The object holding a task, found from the id alone. */
export function taskStub(ctx: ToolContext, taskId: string) {
  const workflowId = workflowOfTask(taskId);
  return workflowId ? workflowStub(ctx, workflowId) : null;
}

export function errorResult(failure: Failure): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `${failure.code}: ${failure.message}` }] };
}

export function notFoundResult(field: string, id: string): CallToolResult {
  return errorResult({ ok: false, code: "NOT_FOUND", message: `${field}: no workflow or task ${id} in this account` });
}

/** Structured result plus the short text form agents read when their client ignores structuredContent. */
export function toolResult(structured: object, text: string): CallToolResult {
  return { structuredContent: structured as Record<string, unknown>, content: [{ type: "text", text }] };
}

/** Maps an RPC result to a tool result; an exception becomes INTERNAL without leaking internals. */
export async function fromRpc<T extends object>(call: () => Promise<Result<T>>, render: (value: T) => string): Promise<CallToolResult> {
  try {
    const result = await call();
    return result.ok ? toolResult(result.value, render(result.value)) : errorResult(result);
  } catch (error) {
    console.error("tool call failed", error);
    return errorResult({
      ok: false,
      code: "INTERNAL",
      message: "the workflow store failed to answer; the call may be retried (with the same idempotency_key)",
    });
  }
}

/** "a, b, c (+4 more)" — keeps results within a few hundred bytes. */
export function shortList(items: readonly string[], max = 15): string {
  if (items.length === 0) return "none";
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} (+${items.length - max} more)` : shown;
}
