/**
 * @module app — the review inside the chat client: an MCP App (the `io.modelcontextprotocol/ui`
 * extension, spec 2026-01-26). start_workflow, complete_task and get_workflow link to the app's
 * `ui://` resource in tools/list (`_meta.ui.resourceUri`); a host that renders MCP Apps shows it
 * beside their results, sandboxed, under the extension's restrictive default CSP (no network:
 * the app declares no domains and talks to its host only). The app reads the workflow's blocks
 * (`waymark://review/{workflow or task id}`: the owner view's renderer, the first page of the
 * timeline, every agent-written value escaped and its bidi controls revealed as on the page) and the owner's
 * feedback form; the form posts through `send_feedback`, an app-only tool (`visibility: ["app"]`)
 * offered only to clients that declare the extension, so agents in other clients never see it.
 * Access is the MCP credential's: its account must own the workflow (write scope to send).
 */
import { type McpServer, type ReadResourceResult, ResourceNotFoundError, ResourceTemplate } from "@modelcontextprotocol/server";
import { requiredText, workflowId } from "@waymark/protocol/tools";
import { z } from "zod";
import type { FeedbackView } from "../domain/view";
import { ok } from "../errors";
import { isWorkflowId, workflowOfTask } from "../ids";
import { LIMITS } from "../limits";
import { revealBidiControls } from "../pages/format";
import { renderFeedbackForm } from "../pages/owner-view";
import { pageBlocks } from "../pages/page-reads";
import { PAGE_STYLE } from "../pages/style";
import { WRITES } from "./annotations";
import { APP_SCRIPT } from "./app-client";
import { notFound, requestContext, type ToolContext, workflowStub } from "./context";
import { defineTool, type ToolDefinition } from "./define";

export const UI_EXTENSION = "io.modelcontextprotocol/ui";
export const APP_URI = "ui://waymark/review";
export const APP_MIME_TYPE = "text/html;profile=mcp-app";
/** What a tool carries in tools/list to be shown with the app. */
export const APP_LINK = { ui: { resourceUri: APP_URI } };

const APP_STYLE = "body{margin:0}#wm{padding:.75rem}#app-status:empty{display:none}";

/** Static: hosts may prefetch and review it; what it shows comes from the tool result it is given. */
const APP_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>Waymark review</title>
<style>${PAGE_STYLE}${APP_STYLE}</style></head>
<body><main id="wm" data-state="static"><p class="topbar"><span class="brand">Waymark</span></p>
<p id="app-status" class="muted" role="status">Waiting for a workflow…</p><div id="wf-blocks"></div></main>
<script>${APP_SCRIPT}</script></body></html>`;

/** Whether a JSON-RPC body (2026-07-28: each request carries its client's capabilities) comes from a client that renders MCP Apps. */
export function rendersApps(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((message) => {
    const meta = (message as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
    const capabilities = meta?.["io.modelcontextprotocol/clientCapabilities"] as { extensions?: Record<string, unknown> } | undefined;
    return typeof capabilities?.extensions?.[UI_EXTENSION] === "object";
  });
}

async function reviewFragment(ctx: ToolContext, uri: URL, named: string): Promise<ReadResourceResult> {
  const id = isWorkflowId(named) ? named : workflowOfTask(named);
  const stub = id ? workflowStub(ctx, id) : null;
  const head = stub ? await stub.readHead(ctx.account, true) : null;
  // Another account's workflow answers as an unknown one: nothing leaks.
  if (!stub || !head?.ok) throw new ResourceNotFoundError(uri.href, `NOT_FOUND: no workflow or task ${named} in this account`);
  const view = { ...head.value, feedback: head.value.feedback ?? [] };
  // The first page of the timeline, as the owner view renders it (links lead to the owner view for the rest).
  const base = `${ctx.origin}/w/${view.workflow.id}`;
  const blocks = await pageBlocks(stub, ctx.account, view, { base, after: null });
  // The form offers no verdict: from here it would be recorded as a comment (APP_VERDICT_NOTE).
  const form = revealBidiControls(
    String(renderFeedbackForm(base, view.workflow.id, blocks.facts.choices, null, { commentOnly: APP_VERDICT_NOTE })),
  );
  return {
    contents: [{ uri: uri.href, mimeType: "text/html", text: `<div data-workflow="${view.workflow.id}">${blocks.markup}${form}</div>` }],
  };
}

const TARGET = /^(workflow|task|decision|issue):([A-Za-z0-9_-]{1,64})$/;

const sendFeedbackInput = z.strictObject({
  workflow_id: workflowId,
  target: z.string().regex(TARGET, "must name the workflow, a task, a decision or an issue (workflow:<id>, task:<id>…)"),
  verdict: z.enum(["comment", "approved", "changes_requested"]),
  body: requiredText(LIMITS.FEEDBACK_TEXT),
});

/** Why a verdict sent from the app is a comment: what the tool result and the app's form say. */
export const APP_VERDICT_NOTE =
  "approvals and change requests count only from the workflow's page, signed in: an MCP connection cannot tell a person from the agent holding the same credential";

/**
 * The owner's feedback form, from inside the app: what POST /w/:id/feedback does on the owner view,
 * except that a verdict is recorded as a comment (APP_VERDICT_NOTE; the app offers none), and the
 * item names the credential that sent it and the channel.
 */
export const sendFeedbackTool: ToolDefinition = defineTool({
  name: "send_feedback",
  description: "The review app's feedback form: a comment to the agent (verdicts count only from the workflow's page).",
  input: sendFeedbackInput,
  output: ["id", "target_id", "verdict", "note"],
  annotations: WRITES,
  meta: { ui: { resourceUri: APP_URI, visibility: ["app"] } },
  run: async (input, ctx) => {
    const stub = workflowStub(ctx, input.workflow_id);
    if (!stub) return notFound("workflow_id", input.workflow_id);
    const [, target, targetId] = TARGET.exec(input.target) ?? [];
    const added = await stub.addFeedback(ctx.account, {
      target: target as FeedbackView["target"],
      target_id: targetId ?? "",
      verdict: input.verdict,
      body: input.body.trim(),
      author: ctx.author,
      channel: "mcp_app",
    });
    if (!added.ok) return added;
    const { id, target_id, verdict } = added.value;
    const page = `${ctx.origin}/w/${input.workflow_id}`;
    return ok({
      id,
      target_id,
      verdict,
      ...(verdict !== input.verdict ? { note: `recorded as a comment: ${APP_VERDICT_NOTE} (${page})` } : {}),
    });
  },
  render: (out) =>
    `feedback ${out.id} (${out.verdict.replace("_", " ")}) on ${out.target_id}: the agent receives it with its next tool result${out.note ? `; ${out.note}` : ""}`,
});

/** Tools only the app calls, offered to clients that render apps. */
export const APP_TOOLS: readonly ToolDefinition[] = [sendFeedbackTool];

/** The review app; its own tools only on servers for clients that render apps. */
export function registerApp(server: McpServer, rendersApps: boolean): void {
  server.registerResource(
    "review-app",
    APP_URI,
    { title: "Waymark review", description: "A workflow's review box, timeline and feedback form", mimeType: APP_MIME_TYPE },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: APP_MIME_TYPE, text: APP_HTML, _meta: { ui: { prefersBorder: true } } }] }),
  );
  server.registerResource(
    "review-blocks",
    new ResourceTemplate("waymark://review/{id}", { list: undefined }),
    {
      description: "What the review app shows of a workflow (or a task's workflow): the share page's blocks and the feedback form",
      mimeType: "text/html",
    },
    (uri, variables, request) => reviewFragment(requestContext(request), uri, String(variables.id ?? "")),
  );
  if (!rendersApps) return;
  for (const tool of APP_TOOLS)
    server.registerTool(tool.name, tool.config, (args: unknown, request) => tool.call(args, requestContext(request)));
}
