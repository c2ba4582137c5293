import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

/**
 * The review app (src/mcp/app.ts) as an MCP Apps host reaches it: the tools that link it, its
 * `ui://` resource, the blocks it reads and its app-only feedback tool. The app rendered in
 * Chromium through the extension SDK's host side: test/e2e/app.test.ts.
 */
const UI = "io.modelcontextprotocol/ui";

/** A host that renders MCP Apps: negotiates 2026-07-28, so every request carries its capabilities. */
async function appHost(token: string = TOKENS.acme): Promise<Client> {
  const client = new Client(
    { name: "app-host", version: "1" },
    { versionNegotiation: { mode: "auto" }, capabilities: { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const textOf = (read: { contents: object[] }) => String((read.contents[0] as { text?: unknown } | undefined)?.text ?? "");

describe("the review app", () => {
  it("is linked from start_workflow, complete_task and get_workflow, and its feedback tool is offered only to app hosts", async () => {
    const plain = await connect(workerTarget());
    const listed = (await plain.listTools()).tools;
    const linked = listed.filter((t) => (t._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri === "ui://waymark/review");
    expect(linked.map((t) => t.name)).toEqual(["start_workflow", "complete_task", "get_workflow"]);
    expect(listed.map((t) => t.name)).not.toContain("send_feedback");
    await expect(plain.callTool({ name: "send_feedback", arguments: {} })).rejects.toThrow("Tool send_feedback not found");

    const host = await appHost();
    const tools = (await host.listTools()).tools;
    expect(tools.find((t) => t.name === "send_feedback")?._meta).toEqual({
      ui: { resourceUri: "ui://waymark/review", visibility: ["app"] },
    });
    const { resources } = await host.listResources();
    expect(resources).toContainEqual(expect.objectContaining({ uri: "ui://waymark/review", mimeType: "text/html;profile=mcp-app" }));
    const app = await host.readResource({ uri: "ui://waymark/review" });
    expect(app.contents[0]).toMatchObject({ mimeType: "text/html;profile=mcp-app", _meta: { ui: { prefersBorder: true } } });
    // No network: the app declares no CSP domains and its markup loads nothing from anywhere.
    expect(textOf(app)).not.toMatch(/\bsrc=|https?:\/\/|fetch\(|XMLHttpRequest|WebSocket/);
  });

  it("shows a workflow as the share page does, agent text escaped, and only to its owner", async () => {
    const agent = await connect(workerTarget(), { sdk: "v1" });
    const hostile = `<img src=x onerror="parent.postMessage('owned','*')">\u202Egnp.exe`;
    const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: hostile });
    const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "Pay", goal: "Stripe" });
    await ok(agent, "log_issue", {
      task_id,
      type: "other",
      description: "Webhook secret in logs",
      resolution: "Redacted",
      requires_human_review: true,
    });

    const host = await appHost();
    for (const id of [workflow_id, task_id]) {
      const markup = textOf(await host.readResource({ uri: `waymark://review/${id}` }));
      expect(markup).toContain(`data-workflow="${workflow_id}"`);
      expect(markup).toContain("&lt;img src=x onerror=");
      expect(markup).not.toContain("<img");
      expect(markup).toContain("[U+202E]");
      expect(markup).toContain("Webhook secret in logs");
      expect(markup).toContain('id="wf-review"');
      expect(markup).toMatch(/<form method="post" action="http:\/\/localhost\/w\/wf_[^"]+\/feedback"/);
    }
    const stranger = await appHost(TOKENS.globex);
    await expect(stranger.readResource({ uri: `waymark://review/${workflow_id}` })).rejects.toThrow(/NOT_FOUND/);
    const forged = await stranger.callTool({
      name: "send_feedback",
      arguments: { workflow_id, target: `workflow:${workflow_id}`, verdict: "approved", body: "ok" },
    });
    expect(forged.isError).toBe(true);
  });

  it("sends the reviewer's feedback to the agent's next tool result", async () => {
    const agent = await connect(workerTarget(), { sdk: "v1" });
    const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: "Reviewed in chat" });
    const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "Docs", goal: "Write docs" });
    const host = await appHost();
    const bad = await host.callTool({ name: "send_feedback", arguments: { workflow_id, target: "task:", verdict: "comment", body: " " } });
    expect(bad.content).toEqual([
      {
        type: "text",
        text: "INPUT_VALIDATION_ERROR: target: must name the workflow, a task, a decision or an issue (workflow:<id>, task:<id>…); body: must not be blank",
      },
    ]);
    const sent = await host.callTool({
      name: "send_feedback",
      arguments: { workflow_id, target: `task:${task_id}`, verdict: "comment", body: "Add an example" },
    });
    expect(sent.isError).toBeFalsy();
    expect(sent.structuredContent).toEqual({ id: expect.stringMatching(/^fb_/), target_id: task_id, verdict: "comment" });
    const next = await ok<{ reviewer_feedback?: { items: { body: string }[] } }>(agent, "log_milestone", { task_id, message: "half" });
    expect(next.reviewer_feedback?.items.map((item) => item.body)).toEqual(["Add an example"]);
    const { feedback } = await ok<{ feedback: object[] }>(agent, "get_workflow", { workflow_id });
    expect(feedback).toEqual([
      expect.objectContaining({ channel: "mcp_app", author: { kind: "bootstrap_token", credential: null, via: "token" } }),
    ]);
  });

  it("records a verdict sent from an MCP connection as a comment, says so, and counts no review", async () => {
    const agent = await connect(workerTarget(), { sdk: "v1" });
    const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: "Approved in chat?" });
    const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "Refunds", goal: "Refund flow" });
    await ok(agent, "complete_task", { task_id, status: "success", outcome: { summary: "Done", manual_review_needed: true } });
    const host = await appHost();
    for (const verdict of ["approved", "changes_requested"]) {
      const sent = await host.callTool({
        name: "send_feedback",
        arguments: { workflow_id, target: `task:${task_id}`, verdict, body: verdict },
      });
      expect(sent.structuredContent).toMatchObject({ verdict: "comment", note: expect.stringContaining(`${ORIGIN}/w/${workflow_id}`) });
      expect(JSON.stringify(sent.content)).toContain(
        "recorded as a comment: approvals and change requests count only from the workflow's page",
      );
    }
    const { totals, feedback } = await ok<{ totals: { reviews_needed: number }; feedback: { verdict: string }[] }>(agent, "get_workflow", {
      workflow_id,
    });
    expect(totals.reviews_needed).toBe(1);
    expect(feedback.map((f) => f.verdict)).toEqual(["comment", "comment"]);
  });
});
