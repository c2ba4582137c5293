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
    await page.locator('#feedback select[name="target"]').selectOption(`task:${task_id}`);
    await page.check('#feedback input[name="verdict"][value="approved"]');
    await page.fill('#feedback textarea[name="body"]', "Checked the refund path");
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

  it("the agent signing in to the dashboard with its own token (a curl POST to /login) and approving on the page is a comment; the page says why", async () => {
    const { url } = env.server();
    const made = await api("/api/tokens", {
      method: "POST",
      body: JSON.stringify({ name: "the agent, again", scopes: ["read", "write"] }),
    });
    const agentToken = String(made.body.token);
    const agent = await connect({ url, token: agentToken }, { negotiation: "auto", name: "agent-at-the-dashboard" });
    const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name: "Self review at the dashboard" });
    const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "Payouts", goal: "Send payouts" });
    await ok(agent, "complete_task", {
      task_id,
      status: "success",
      outcome: { summary: "Payouts sent", manual_review_needed: true, manual_review_reason: "Moves money" },
    });
    await agent.close();

    // The attack: sign in as a script would (no browser), then drive the page's own form with that session.
    const login = await fetch(`${url}/login`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: url },
      body: new URLSearchParams({ token: agentToken }).toString(),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    const [name, value] = (login.headers.get("Set-Cookie") ?? "").split(";")[0]?.split("=") ?? [];
    const context = await env.browser().newContext();
    await context.addCookies([{ name: name ?? "", value: value ?? "", url }]);
    const page = await context.newPage();
    await page.goto(`${url}/w/${workflow_id}`);
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { getElementById(id: string): { dataset: { state?: string } } | null } }
        ).document.getElementById("wm")?.dataset.state === "live",
    );
    // The page says it before anything is given.
    expect(await page.locator("#shared-credential").innerText()).toContain(
      "You signed in with the token that recorded this workflow's tasks.",
    );
    const item = page.locator(`#wf-review li[id="nr-${task_id}"]`);
    await item.locator("summary").click();
    await item.locator("textarea").fill("LGTM");
    await item.locator("button", { hasText: "Approve" }).click();
    await expect
      .poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 })
      .toBe("Approval recorded as a comment: the server cannot tell you from the agent with this sign-in.");
    expect(await page.locator("#wf-review-title .count").innerText()).toBe("1 open item");
    expect(await page.locator("#feedback-list").innerText()).toContain("asked for an approval, recorded as a comment");
    const after = await record(workflow_id);
    expect(after.reviewsNeeded).toBe(1);
    expect(after.feedback.at(-1)).toMatchObject({ verdict: "comment", body: "LGTM", channel: "page", author: { via: "session" } });
    await context.close();
  }, 120_000);
});
