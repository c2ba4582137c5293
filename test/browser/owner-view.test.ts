import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentWriteToken } from "../support/agents";
import { eventually } from "../support/eventually";
import { callTool, connect, type Structured } from "../support/mcp-client";
import { skipBrowser, useServerAndBrowser } from "./browser";
import type { DomDocument } from "./dom";

declare const document: DomDocument;

/**
 * The owner's side, clicked in Chromium against `wrangler dev`: sign in, search by text and by
 * file path, open a workflow at its owner URL, change the sharing setting and the link, comment
 * and request changes; then an agent on the SDK client receives the comment in its next result.
 * With SCREENSHOTS=1 it also writes the README's screenshots to docs/screenshots/.
 */
describe.skipIf(skipBrowser)("owner view in Chromium", () => {
  const env = useServerAndBrowser();
  let agent: Client;
  let workflowId = "";
  let taskId = "";
  let issueId = "";
  let openTaskId = "";

  const blob = (c: string) => c.repeat(40);
  const agentCall = (client: Client, name: string, args: Structured) => callTool(client, name, args, { mustSucceed: true });

  beforeAll(async () => {
    // The agent holds a write token of its own (the owner's would make its own verdicts the agent's).
    const agentToken = (await agentWriteToken(env.server(), "owner-view agent")).token;
    agent = await connect({ url: env.server().url, token: agentToken }, { negotiation: "auto", name: "owner-view-agent" });
    const other = await agentCall(agent, "start_workflow", { name: "Docs refresh", description: "Rewrite the onboarding guide" });
    const docsTask = await agentCall(agent, "start_task", {
      workflow_id: other.structured.workflow_id,
      name: "Guide",
      goal: "Rewrite docs",
    });
    await agentCall(agent, "complete_task", {
      task_id: docsTask.structured.task_id,
      status: "success",
      outcome: { summary: "Guide rewritten" },
      changes: { type: "checksum", transitions: [{ path: "docs/guide.md", before: null, after: { mode: "100644", blob: blob("d") } }] },
    });

    const wf = await agentCall(agent, "start_workflow", {
      name: "Sales tax rules",
      description: "Apply regional VAT on invoices",
      plan: [{ step: "Rates", goal: "Tax rate table" }],
    });
    workflowId = String(wf.structured.workflow_id);
    const task = await agentCall(agent, "start_task", {
      workflow_id: workflowId,
      name: "Rate table",
      goal: "Compute VAT per region",
      areas: ["src/billing/**"],
    });
    taskId = String(task.structured.task_id);
    await agentCall(agent, "log_decision", {
      task_id: taskId,
      category: "architecture",
      question: "Where do the rates live?",
      options_considered: ["database", "code"],
      chosen: "code",
      reasoning: "Rates change yearly; a reviewed table in code is enough",
    });
    const issue = await agentCall(agent, "log_issue", {
      task_id: taskId,
      type: "other",
      description: "Rounding differs from the accounting export",
      resolution: "Rounded half-even",
      requires_human_review: true,
    });
    issueId = String(issue.structured.id);
    await agentCall(agent, "complete_task", {
      task_id: taskId,
      status: "success",
      outcome: { summary: "Rates per region", manual_review_needed: true, manual_review_reason: "Money rounding" },
      metrics: { input_tokens: 12000, output_tokens: 3400, model: "claude", cost_usd: 0.42 },
      changes: {
        type: "checksum",
        transitions: [
          { path: "src/billing/tax.ts", before: null, after: { mode: "100644", blob: blob("a") } },
          { path: "src/billing/rates.json", before: null, after: { mode: "100644", blob: blob("b") } },
        ],
      },
    });
    const open = await agentCall(agent, "start_task", {
      workflow_id: workflowId,
      name: "Invoice totals",
      goal: "Use the rates in invoices",
    });
    openTaskId = String(open.structured.task_id);
    // The dashboard reads the account index, which takes these writes within ACCOUNT_PUSH_DELAY_MS.
    const { url, token } = env.server();
    await eventually(
      "the account index shows both tasks",
      async () => {
        const listed = await fetch(`${url}/api/workflows`, { headers: { Authorization: `Bearer ${token}` } });
        const body = (await listed.json()) as { rows: { id: string; tasks: number; open_tasks: number }[] };
        return body.rows.some((w) => w.id === workflowId && w.tasks === 2 && w.open_tasks === 1) ? body : null;
      },
      10_000,
    );
  });
  afterAll(async () => {
    await agent?.close();
  });

  async function submit(page: Page, button: Locator): Promise<number> {
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), button.click()]);
    await page.waitForLoadState("load");
    return response.status();
  }

  async function search(page: Page, fields: { q?: string; path?: string }): Promise<string[]> {
    await page.fill('input[name="q"]', fields.q ?? "");
    await page.fill('input[name="path"]', fields.path ?? "");
    await Promise.all([
      page.waitForResponse((r) => r.url().includes("/dashboard?")),
      page.click('form[role="search"] button[type="submit"]'),
    ]);
    await page.waitForLoadState("load");
    return page.locator("table.workflows tbody tr .wf-link strong").allInnerTexts();
  }

  it("sign in, search, open, share by choice, comment and request changes, sign out; the agent gets the comment next", async () => {
    const { url, token } = env.server();
    const context = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));

    // Sign in.
    await page.goto(`${url}/login`);
    await page.fill('input[name="token"]', token);
    expect(await submit(page, page.locator('button[type="submit"]'))).toBe(303);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await page.locator("#account-totals").innerText()).toMatch(/2\s*workflows/);
    const row = page.locator(`tr[id="${workflowId}"]`);
    expect(await row.innerText()).toMatch(/Sales tax rules[\s\S]*2 \(1 open\)[\s\S]*2[\s\S]*15,400[\s\S]*\$0\.42/);

    // Search by text, by exact path and by path prefix; filter by needs-review.
    expect(await search(page, { q: "VAT" })).toEqual(["Sales tax rules"]);
    expect(await search(page, { q: "onboarding" })).toEqual(["Docs refresh"]);
    expect(await search(page, { path: "src/billing/tax.ts" })).toEqual(["Sales tax rules"]);
    expect(await page.locator(`tr[id="${workflowId}"] .match`).innerText()).toContain("src/billing/tax.ts");
    expect(await search(page, { path: "src/billing/" })).toEqual(["Sales tax rules"]);
    expect(await search(page, { path: "docs/" })).toEqual(["Docs refresh"]);
    expect(await search(page, { path: "src/nothing/" })).toEqual([]);
    await page.check('input[name="review"]');
    expect(await search(page, {})).toEqual(["Sales tax rules"]);
    await page.goto(`${url}/dashboard`);
    await screenshot(page, "dashboard");
    await page.setViewportSize({ width: 375, height: 800 });
    await screenshot(page, "dashboard-375", false);
    await page.setViewportSize({ width: 1280, height: 900 });

    // The sharing setting: off, so a new workflow gets no share link.
    await page.goto(`${url}/dashboard`);
    await page.click("#settings summary");
    await page.uncheck('input[name="share_new_workflows"]');
    expect(await submit(page, page.locator('#settings button[type="submit"]'))).toBe(303);
    expect(await page.locator('input[name="share_new_workflows"]').isChecked()).toBe(false);
    const unshared = await agentCall(agent, "start_workflow", { name: "Private spike" });
    expect(unshared.structured.share_url).toBeUndefined();
    await page.reload();
    expect(await page.locator(`tr[id="${unshared.structured.workflow_id}"]`).innerText()).toContain("no link yet");

    // Open the workflow at its owner URL; revoke its link by clicking: the owner view still works, live.
    await Promise.all([page.waitForURL(`${url}/w/${workflowId}`), page.click(`tr[id="${workflowId}"] a.wf-link`)]);
    await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
    const shareUrl = String(await page.locator("#share-url").getAttribute("href"));
    expect((await fetch(shareUrl)).status).toBe(200);
    expect(await submit(page, page.locator('#share form:has(input[value="revoke"]) button'))).toBe(200);
    expect(await submit(page, page.locator("#confirm-form button"))).toBe(303);
    expect(await page.locator("#share-state").innerText()).toBe("revoked");
    expect((await fetch(shareUrl)).status).toBe(410);
    await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
    expect(await page.locator("#wf-tasks").innerText()).toContain("Rate table");

    // A second owner tab follows live; a new link can be made later, with an expiry.
    const watcher = await context.newPage();
    await watcher.goto(`${url}/w/${workflowId}`);
    await watcher.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
    await page.locator('#share form:has(input[value="rotate"]) select').selectOption("86400");
    expect(await submit(page, page.locator('#share form:has(input[value="rotate"]) button'))).toBe(303);
    expect(await page.locator("#share-state").innerText()).toMatch(/^active, expires /);
    const newLink = String(await page.locator("#share-url").getAttribute("href"));
    expect(newLink).not.toBe(shareUrl);
    expect((await fetch(newLink)).status).toBe(200);

    // Comment on the workflow with the form at the bottom, then request changes on the issue where it is listed.
    await page.fill('#feedback textarea[name="body"]', "Nice plan overall.");
    expect(await submit(page, page.locator('#feedback button[type="submit"]'))).toBe(303);
    await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
    const item = page.locator(`#wf-review li[id="nr-${issueId}"]`);
    await item.locator("summary").click();
    await item.locator("textarea").fill("Use banker's rounding only for the EU export.");
    await item.locator("button", { hasText: "Request changes" }).click();
    await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toBe("Request for changes recorded.");
    const list = page.locator("#feedback-list");
    await expect.poll(() => list.locator("> li").count()).toBe(2);
    expect(await list.innerText()).toMatch(/comment on the workflow[\s\S]*Nice plan overall[\s\S]*changes requested on issue Other/);
    expect(await page.locator("#wf-review").innerText()).toContain("changes requested");
    await watcher.waitForFunction(() => document.querySelectorAll("#feedback-list > li").length === 2);
    expect(await watcher.locator("#feedback-list").innerText()).toContain("banker's rounding");
    expect(await list.innerText()).toContain("waiting for the agent's next call");
    await screenshot(page, "owner-view");
    await page.setViewportSize({ width: 375, height: 800 });
    await screenshot(page, "owner-view-375", false);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Sign out: the owner URL now asks for the sign-in.
    expect(await submit(page, page.locator('form[action="/logout"] button'))).toBe(303);
    expect(new URL(page.url()).pathname).toBe("/login");
    // The other tab of the ended session stops following and says why.
    await watcher.waitForFunction(() => document.getElementById("wm")?.dataset.state === "gone");
    expect(await watcher.locator("main h1").innerText()).toBe("You are signed out");
    const afterSignOut = await page.goto(`${url}/w/${workflowId}`);
    expect(new URL(page.url()).pathname).toBe("/login");
    expect(afterSignOut?.status()).toBe(200);

    // The agent's next tool call on the workflow carries the feedback, once.
    const next = await agentCall(agent, "log_milestone", { task_id: openTaskId, message: "Halfway" });
    const digest = next.structured.reviewer_feedback as {
      items: { on: string; verdict: string; body: string }[];
      more: number;
      full: string;
    };
    expect(digest.items.map((i) => [i.on, i.verdict, i.body])).toEqual([
      [workflowId, "comment", "Nice plan overall."],
      [issueId, "changes_requested", "Use banker's rounding only for the EU export."],
    ]);
    expect(digest.full).toContain(workflowId);
    expect(next.text).toContain("CHANGES REQUESTED on");
    expect(Buffer.byteLength(next.text.slice(next.text.indexOf("Reviewer feedback")))).toBeLessThan(500);
    const again = await agentCall(agent, "log_milestone", { task_id: openTaskId, message: "Later" });
    expect(again.structured.reviewer_feedback).toBeUndefined();
    const resumed = await agentCall(agent, "get_workflow", { workflow_id: workflowId });
    expect((resumed.structured.feedback as unknown[]).length).toBe(2);
    expect(resumed.text).toContain("reviewer changes requested on");
    expect(errors).toEqual([]);
    await context.close();
  }, 120_000);

  async function screenshot(page: Page, name: string, readme = true): Promise<void> {
    const dir = process.env.SCREENSHOTS === "1" && readme ? resolve(import.meta.dirname, "../../docs/screenshots") : "/tmp/waymark-shots";
    mkdirSync(dir, { recursive: true });
    // Viewport-height crops of the top of the page keep the README images small.
    await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
    await page.screenshot({ path: `${dir}/${name}.png` });
  }
});
