import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { skipBrowser, useServerAndBrowser } from "./browser";

/**
 * Only people review, attacked as the agent would, against `wrangler dev` with Chromium clicking:
 * the agent's own write token declares the MCP Apps extension and calls the review app's
 * app-only `send_feedback` with "approved" on its own task. The server cannot tell that call from
 * a person in the app, so the verdict is recorded as a comment, the review stays needed, and the
 * item names the token that sent it and the channel. The owner, signed in on the page, approves
 * by clicking: that verdict counts, and names the session's credential.
 */
describe.skipIf(skipBrowser)("only people review", () => {
  const env = useServerAndBrowser();

  const api = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${env.server().url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${env.server().token}`, "Content-Type": "application/json" },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  type Feedback = { id: string; verdict: string; body: string; author?: Record<string, unknown>; channel?: string };
  /** What the record says now: the reviews still needed and the feedback, from the owner's JSON export. */
  const record = async (workflowId: string) => {
    const got = await api(`/api/workflows/${workflowId}/export.json`);
    expect(got.status).toBe(200);
    return { reviewsNeeded: (got.body.totals as { reviews_needed: number }).reviews_needed, feedback: got.body.feedback as Feedback[] };
  };

  async function submit(page: Page, selector: string): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.locator(selector).click()]);
    await page.waitForLoadState("load");
    return response.status();
  }

  it("the agent's own token approving its own task through send_feedback is a comment that names it; the owner's click on the page counts", async () => {
    // The owner gives the agent a write token of its own.
    const made = await api("/api/tokens", { method: "POST", body: JSON.stringify({ name: "the agent", scopes: ["read", "write"] }) });
    expect(made.status).toBe(201);
    const agentTokenId = String(made.body.id);
    const agent = await connect(
      { url: env.server().url, token: String(made.body.token) },
      { negotiation: "auto", rendersApps: true, name: "agent-posing-as-app-host" },
    );
    expect((await agent.listTools()).tools.map((t) => t.name)).toContain("send_feedback");

    const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: "Self review" });
    const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "Payments", goal: "Refunds" });
    await ok(agent, "complete_task", {
      task_id,
      status: "success",
      outcome: { summary: "Refunds done", manual_review_needed: true, manual_review_reason: "Moves money" },
    });
    expect((await record(workflow_id)).reviewsNeeded).toBe(1);

    // The attack: the agent approves its own task through the app-only tool.
    const sent = await agent.callTool({
      name: "send_feedback",
      arguments: { workflow_id, target: `task:${task_id}`, verdict: "approved", body: "LGTM" },
    });
    expect(sent.isError).toBeFalsy();
    expect(sent.structuredContent).toMatchObject({ target_id: task_id, verdict: "comment" });
    expect(String((sent.structuredContent as { note?: string }).note)).toMatch(
      /^recorded as a comment: approvals and change requests count only from the workflow's page/,
    );
    const afterAttack = await record(workflow_id);
    expect(afterAttack.reviewsNeeded).toBe(1);
    expect(afterAttack.feedback).toEqual([
      expect.objectContaining({
        verdict: "comment",
        body: "LGTM",
        author: { kind: "managed_token", credential: agentTokenId, via: "token" },
        channel: "mcp_app",
      }),
    ]);

    // The owner, signed in on the page, sees who sent it, then approves by clicking.
    const context = await env.browser().newContext();
    const page = await context.newPage();
    await page.goto(`${env.server().url}/login`);
    await page.fill('input[name="token"]', env.server().token);
    await submit(page, 'button[type="submit"]');
    await page.goto(`${env.server().url}/w/${workflow_id}`);
    const item = page.locator(`#${afterAttack.feedback[0]?.id}`);
    expect(await item.innerText()).toContain(`sent with token ${agentTokenId}, from the review app in an MCP client`);
    expect(await page.locator("#wf-review").innerText()).toContain("1 open");
    await page.locator('select[name="target"]').selectOption(`task:${task_id}`);
    await page.check('input[name="verdict"][value="approved"]');
    await page.fill('textarea[name="body"]', "Checked the refund path");
    expect(await submit(page, '#feedback button[type="submit"]')).toBe(303);
    expect(await page.locator("#feedback-list").innerText()).toContain("signed in with a bootstrap token, on the page");

    const approved = await record(workflow_id);
    expect(approved.reviewsNeeded).toBe(0);
    expect(approved.feedback.at(-1)).toMatchObject({
      verdict: "approved",
      author: { kind: "bootstrap_token", credential: null, via: "session" },
      channel: "page",
    });
    await context.close();
    await agent.close();
  }, 120_000);
});
