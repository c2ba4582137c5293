/**
 * @module context — what a tool acts with: the authenticated account, the bindings, and the
 * stubs of the Durable Objects it talks to; plus the two shapes a tool result takes.
 */
import type { AuthInfo, CallToolResult, ServerContext } from "@modelcontextprotocol/server";
import type { Scope } from "../domain/access-scopes";
import type { FeedbackAuthor } from "../domain/view";
import { type Failure, notFound as notFoundIn } from "../errors";
import { isWorkflowId, workflowOfTask } from "../ids";
import * as stubs from "../stubs";

/** What a tool needs to act for the authenticated account. */
export interface ToolContext {
  env: Env;
  account: string;
  /** What the caller's credential may do (e.g. whether its calls consume reviewer feedback). */
  scopes: readonly Scope[];
  /** Origin of this deployment, for links in results. */
  origin: string;
  /** The client declared that it renders MCP Apps (src/mcp/app.ts): the app's own tools are offered. */
  rendersApps?: boolean;
  /** Who is calling, as feedback sent from the review app names its author (src/mcp/app.ts). */
  author: FeedbackAuthor;
  /**
   * The credential the call came with (src/domain/credentials CredentialRef): kept with the tasks
   * it records, so a verdict from a page session signed in with it is known as the agent's.
   */
  credential: string;
}

/** The account's context rides on the request's AuthInfo (src/mcp/endpoint.ts) to every handler of the exchange. */
export interface WaymarkAuthInfo extends AuthInfo {
  extra: { context: ToolContext };
}

/** The context of the request a handler serves: servers are shared between requests (src/mcp/server.ts), requests are not. */
export function requestContext(request: Pick<ServerContext, "http"> | undefined): ToolContext {
  return contextOf(request?.http?.authInfo);
}

export function contextOf(authInfo: AuthInfo | undefined): ToolContext {
  const context = (authInfo as WaymarkAuthInfo | undefined)?.extra?.context;
  if (!context) throw new Error("MCP request without an authenticated context");
  return context;
}

export function workflowStub(ctx: ToolContext, workflowId: string) {
  return isWorkflowId(workflowId) ? stubs.workflowStub(ctx.env, workflowId) : null;
}

/** The object holding a task, found from the id alone. */
export function taskStub(ctx: ToolContext, taskId: string) {
  const workflowId = workflowOfTask(taskId);
  return workflowId ? workflowStub(ctx, workflowId) : null;
}

/** The account's own object: its index of workflows and its memory of past work. */
export function accountStub(ctx: ToolContext) {
  return stubs.accountStub(ctx.env, ctx.account);
}

/** An id that cannot be this account's: the same answer as another account's id, so nothing leaks. */
export function notFound(field: string, id: string): Failure {
  return notFoundIn(field, `workflow or task ${id}`);
}

export function errorResult(failure: Failure): CallToolResult {
  return { isError: true, content: [{ type: "text", text: `${failure.code}: ${failure.message}` }] };
}

/** Structured result plus the short text form agents read when their client ignores structuredContent. */
export function toolResult(structured: object, text: string): CallToolResult {
  return { structuredContent: structured as Record<string, unknown>, content: [{ type: "text", text }] };
}

/** "a, b, c (+4 more)" — keeps results within a few hundred bytes. */
export function shortList(items: readonly string[], max = 15): string {
  if (items.length === 0) return "none";
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} (+${items.length - max} more)` : shown;
}
