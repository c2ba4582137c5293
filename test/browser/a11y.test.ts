import type { BrowserContext, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { axeViolations, COLOUR_RULES, MODES, type Mode, violationsInEveryMode } from "../support/axe";
import { testDevice } from "../support/device-keys";
import { ownerSession, skipBrowser, useServerAndBrowser } from "./browser";
import { type RecordedReview, recordReviewWorkflow } from "./review-workflow";

/**
 * Every page for every reader, in real Chromium against `wrangler dev`, on a workflow recorded
 * the way an agent records one (a real repository and the real helper): axe-core's WCAG 2.1
 * A/AA rules (and the 24×24 px target size) find nothing on any page, in the light and dark
 * colour schemes, at 1280 and 375 px, also after live updates and review verdicts; Tab walks the
 * owner view and the shared page in reading order; a live update keeps keyboard focus on the
 * task card it was on while the page's live region says what happened.
 */

/** The accessible name of the focused element, or its tag and text when it has none. */
async function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    type El = {
      tagName: string;
      textContent: string | null;
      getAttribute(n: string): string | null;
      id: string;
      closest(s: string): El | null;
    };
    const active = (globalThis as unknown as { document: { activeElement: El | null } }).document.activeElement;
    if (!active) return "";
    const text = (active.textContent ?? "").replace(/\s+/g, " ").trim();
    const task = active.tagName === "SUMMARY" ? active.closest("li.task") : null;
    return `${active.tagName.toLowerCase()}${task ? `#${task.id}` : ""}:${active.getAttribute("aria-label") ?? text}`.slice(0, 160);
  });
}

/** Tab from the top of the page `count` times, recording what has focus after each. */
async function tabWalk(page: Page, count: number): Promise<string[]> {
  await page.evaluate(() =>
    (globalThis as unknown as { document: { activeElement: { blur?: () => void } | null } }).document.activeElement?.blur?.(),
  );
  await page.keyboard.press("Tab");
  const seen = [await focusedName(page)];
  for (let i = 1; i < count; i++) {
    await page.keyboard.press("Tab");
    seen.push(await focusedName(page));
  }
  return seen;
}

/** Where each pattern's stop is, each found after the one before: the walk meets them in this order (else it fails, showing the walk). */
function inOrder(walk: string[], patterns: RegExp[]): number[] {
  const at: number[] = [];
  for (const pattern of patterns) {
    const from = (at.at(-1) ?? -1) + 1;
    const found = walk.findIndex((name, i) => i >= from && pattern.test(name));
    if (found < 0)
      throw new Error(`no focus stop after #${from - 1} matches ${pattern}; the walk was:\n${walk.map((n, i) => `${i} ${n}`).join("\n")}`);
    at.push(found);
  }
  return at;
}

describe.skipIf(skipBrowser)("accessibility of every page in Chromium (axe-core, keyboard, live region)", () => {
  const env = useServerAndBrowser();
  let review: RecordedReview;
  let signedIn: Awaited<ReturnType<BrowserContext["storageState"]>>;
  let createdTokenPage = "";

  beforeAll(async () => {
    review = await recordReviewWorkflow(env.server(), { complete: false });
    signedIn = await ownerSession(env.browser(), env.server());
  }, 300_000);

  async function contextFor(mode: Mode, signedInAs: boolean): Promise<BrowserContext> {
    return env.browser().newContext({
      viewport: { width: mode.width, height: 900 },
      colorScheme: mode.colorScheme,
      ...(signedInAs ? { storageState: signedIn } : {}),
    });
  }

  /** An OAuth client's authorization request, as a remote MCP client sends the owner to it. */
  async function consentUrl(): Promise<string> {
    const { url } = env.server();
    const redirect = "http://127.0.0.1:9/callback";
    const registered = (await (
      await fetch(`${url}/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ client_name: "Axe Test Client", redirect_uris: [redirect], token_endpoint_auth_method: "none" }),
      })
    ).json()) as { client_id: string };
    const query = new URLSearchParams({
      response_type: "code",
      client_id: registered.client_id,
      redirect_uri: redirect,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      scope: "read write",
      state: "axe",
    });
    return `${url}/oauth/authorize?${query}`;
  }

  it("finds no WCAG 2.1 A/AA violation on any page, in light and dark, at 1280 and 375 px", async () => {
    const { url } = env.server();
    const firstTask = review.tasks["1. Tax rate table"] ?? "";
    const authorize = await consentUrl();
    const pages: { name: string; url: string; signedIn: boolean; prepare?: (page: Page) => Promise<void> }[] = [
      { name: "sign-in", url: `${url}/login`, signedIn: false },
      {
        name: "sign-in refused",
        url: `${url}/login`,
        signedIn: false,
        prepare: async (page) => {
          await page.fill('input[name="token"]', "not-a-token");
          await Promise.all([page.waitForLoadState("load"), page.click('button[type="submit"]')]);
        },
      },
      { name: "dashboard", url: `${url}/dashboard`, signedIn: true },
      { name: "dashboard with a link shown", url: `${url}/dashboard?shown=${review.workflowId}#${review.workflowId}`, signedIn: true },
      { name: "dashboard searched", url: `${url}/dashboard?q=VAT&review=1`, signedIn: true },
      {
        name: "tokens with a new secret",
        url: `${url}/dashboard/tokens`,
        signedIn: true,
        prepare: async (page) => {
          await page.fill('input[name="name"]', "axe check");
          await Promise.all([page.waitForLoadState("load"), page.click('#create-token button[type="submit"]')]);
          await page.locator("#new-token-secret").waitFor();
          createdTokenPage = page.url();
        },
      },
      {
        name: "devices, a device to approve",
        url: `${url}/dashboard/devices`,
        signedIn: true,
        prepare: async (page) => {
          // A helper asked to pair (as waymark device pair does); the owner enters its code.
          const paired = await fetch(`${url}/api/devices/pairings`, {
            method: "POST",
            headers: { Authorization: `Bearer ${env.server().token}`, "Content-Type": "application/json" },
            body: JSON.stringify(await (await testDevice()).pairing("axe box")),
          });
          const { code } = (await paired.json()) as { code: string };
          await page.fill('#pair-device input[name="code"]', code);
          await Promise.all([page.waitForLoadState("load"), page.click('#pair-device button[type="submit"]')]);
          await page.locator("#pending-device").waitFor();
        },
      },
      { name: "insights", url: `${url}/dashboard/insights`, signedIn: true },
      { name: "consent", url: authorize, signedIn: true },
      { name: "owner view", url: `${url}/w/${review.workflowId}`, signedIn: true },
      {
        name: "owner view, comment chosen",
        url: `${url}/w/${review.workflowId}?on=${review.issueForReview}#feedback`,
        signedIn: true,
      },
      {
        name: "owner view, a review form open in place",
        url: `${url}/w/${review.workflowId}`,
        signedIn: true,
        prepare: async (page) => {
          await page.locator("#wf-review details.rv summary").first().click();
          await page.locator("a.review-link", { hasText: "Review decision" }).first().click();
          await page.locator("form.rv-inline").waitFor();
        },
      },
      {
        name: "confirming a revocation",
        url: `${url}/w/${review.workflowId}`,
        signedIn: true,
        prepare: async (page) => {
          await Promise.all([page.waitForLoadState("load"), page.locator('#share form:has(input[value="revoke"]) button').click()]);
          await page.locator("#confirm-form").waitFor();
        },
      },
      { name: "shared page", url: review.shareUrl, signedIn: false },
      { name: "shared page at a task", url: `${review.shareUrl}#${firstTask}`, signedIn: false },
      { name: "a task's files page", url: `${review.shareUrl}/files/${review.tasks["Rounding rules"]}`, signedIn: false },
      { name: "link no longer shared", url: `${url}/s/not-a-real-token`, signedIn: false },
    ];
    // The check itself can fail: a grey-on-white paragraph and a nameless button are found.
    const probe = await (await contextFor(MODES[0], false)).newPage();
    await probe.goto(`${url}/login`);
    await probe.evaluate(() => {
      type El = { textContent: string; style: Record<string, string> };
      const doc = (globalThis as unknown as { document: { createElement(tag: string): El; body: { append(...nodes: El[]): void } } })
        .document;
      const faint = doc.createElement("p");
      faint.textContent = "faint";
      faint.style.color = "#aaa";
      faint.style.background = "#fff";
      doc.body.append(faint, doc.createElement("button"));
    });
    const probed = (await axeViolations(probe)).join("\n");
    expect(probed).toMatch(/^color-contrast /m);
    expect(probed).toMatch(/^button-name /m);
    // The colour rules alone, in the dark scheme, still find the faint paragraph.
    await probe.emulateMedia({ colorScheme: "dark" });
    expect((await axeViolations(probe, COLOUR_RULES)).join("\n")).toMatch(/^color-contrast /m);
    await probe.context().close();

    const found: string[] = [];
    const contexts = { anonymous: await contextFor(MODES[0], false), owner: await contextFor(MODES[0], true) };
    for (const target of pages) {
      const page = await (target.signedIn ? contexts.owner : contexts.anonymous).newPage();
      await page.goto(target.url);
      await target.prepare?.(page);
      found.push(...(await violationsInEveryMode(page, target.name)));
      await page.close();
    }
    await contexts.anonymous.close();
    await contexts.owner.close();
    expect(createdTokenPage).not.toBe("");
    expect(found).toEqual([]);
  }, 600_000);

  it("walks the shared page and the owner view by Tab in reading order", async () => {
    const { url } = env.server();
    const context = await contextFor({ colorScheme: "light", width: 1280 }, true);
    const page = await context.newPage();
    const rounding = review.tasks["Rounding rules"] ?? "";
    const first = review.tasks["1. Tax rate table"] ?? "";
    const invoice = review.tasks["3. Invoice totals"] ?? "";
    const pdf = review.tasks["Update the PDF export"] ?? "";

    await page.goto(review.shareUrl);
    const shared = await tabWalk(page, 80);
    inOrder(shared, [
      /^a:Skip to the workflow$/,
      /^a:Markdown export$/,
      /^a:JSON export$/,
      /^a:3\. Invoice totals$/, // what needs you: the task asking for manual review
      /^a:Update the PDF export$/, // a failed task
      /^a:Parse the rates CSV$/, // did the checks pass
      /^a:diff on GitHub of /, // what changed
      /^a:Update the PDF export$/, // the plan: the task named after step 4
      new RegExp(`^summary#${first}:`),
      new RegExp(`^summary#${rounding}:`), // a subtask, inside its parent
      new RegExp(`^summary#${invoice}:`),
      new RegExp(`^summary#${pdf}:`),
    ]);

    await page.goto(`${url}/w/${review.workflowId}`);
    const owner = await tabWalk(page, 160);
    inOrder(owner, [
      /^a:Skip to the workflow$/,
      /^a:Markdown export$/,
      /^a:← All workflows$/,
      /^a:Feedback form$/,
      /^a:Share link$/,
      /^button:Sign out$/,
      /^summary:Review task 3\. Invoice totals$/, // what needs you: its review form in place
      /^a:Review README\.md in task 3\. Invoice totals$/, // what changed: each file's review link
      /^a:Update the PDF export$/, // plan
      new RegExp(`^summary#${first}:`),
      /^a:Review task 1\. Tax rate table$/,
      new RegExp(`^summary#${invoice}:`),
      /^select:/, // the feedback form: what the feedback is about
      /^input:/, // its verdicts
      /^textarea:/,
      /^button:Send feedback$/,
      /^select:/, // the share link's forms
      /^button:Rotate link$/,
    ]);
    // Every Review link says what it is about, so no two share a name.
    const names = await page
      .locator("a.review-link")
      .evaluateAll((links) => links.map((l) => (l as unknown as { textContent: string }).textContent.replace(/\s+/g, " ").trim()));
    expect(names.length).toBeGreaterThan(5);
    expect(new Set(names).size).toBe(names.length);
    await context.close();
  }, 180_000);

  it("keeps focus on a task card across a live update, announces the event, and stays clean after verdicts and completion", async () => {
    const { url } = env.server();
    const invoice = review.tasks["3. Invoice totals"] ?? "";
    const agent = env.callTool;
    const followUp = String(
      (await agent("start_task", { workflow_id: review.workflowId, name: "Credit notes", goal: "Apply VAT to credit notes" })).task_id,
    );
    const context = await contextFor({ colorScheme: "dark", width: 375 }, true);
    const page = await context.newPage();
    await page.goto(review.shareUrl);
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { getElementById(id: string): { dataset: { state?: string } } | null } }
        ).document.getElementById("wm")?.dataset.state === "live",
    );
    const summary = page.locator(`li.task[id="${followUp}"] > details > summary`);
    await summary.focus();
    const focusedTask = () =>
      page.evaluate(() => {
        type El = { tagName: string; closest(s: string): { id: string } | null };
        const active = (globalThis as unknown as { document: { activeElement: El | null } }).document.activeElement;
        return active?.tagName === "SUMMARY" ? (active.closest("li.task")?.id ?? null) : (active?.tagName ?? null);
      });
    expect(await focusedTask()).toBe(followUp);

    // The agent logs an issue on that very task: its card is re-rendered around the focus.
    await agent("log_issue", {
      task_id: followUp,
      type: "other",
      description: "Totals drift by a cent on credit notes",
      resolution: "Flagged for the reviewer",
      requires_human_review: true,
    });
    await expect
      .poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 })
      .toContain("Totals drift by a cent on credit notes");
    expect(await page.locator(`li.task[id="${followUp}"]`).innerText()).toContain("Totals drift by a cent on credit notes");
    expect(await focusedTask()).toBe(followUp);
    // The keyboard goes on from the card (to the task before it), not from the top of the page.
    await page.keyboard.press("Shift+Tab");
    expect(await focusedName(page)).toMatch(/^(summary|a)[#:]/);
    expect(await focusedName(page)).not.toMatch(/Markdown export/);

    // The owner approves one review item and asks for changes on another, by clicking the form.
    const owner = await context.newPage();
    await owner.goto(`${url}/w/${review.workflowId}?on=${invoice}#feedback`);
    await owner.check('#feedback input[name="verdict"][value="approved"]');
    await owner.fill('#feedback textarea[name="body"]', "Totals checked on the three sample invoices.");
    await Promise.all([owner.waitForLoadState("load"), owner.click('button:text("Send feedback")')]);
    await owner.goto(`${url}/w/${review.workflowId}?on=${review.issueForReview}#feedback`);
    await owner.check('#feedback input[name="verdict"][value="changes_requested"]');
    await owner.fill('#feedback textarea[name="body"]', "Round half-even everywhere, please.");
    await Promise.all([owner.waitForLoadState("load"), owner.click('button:text("Send feedback")')]);
    await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toMatch(/New feedback/);

    // The task and the workflow complete: said too, and the live pages are still clean.
    await agent("complete_task", { task_id: followUp, status: "success", outcome: { summary: "Credit notes use regional VAT." } });
    await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toMatch(/Task Credit notes finished: ✓ success/);
    await agent("complete_workflow", {
      workflow_id: review.workflowId,
      status: "partial_success",
      summary: "VAT applied; the PDF export is left.",
    });
    await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toContain("Workflow completed");
    await owner.goto(`${url}/w/${review.workflowId}`);
    const found = [
      ...(await violationsInEveryMode(page, "shared page after live updates")),
      ...(await violationsInEveryMode(owner, "owner view after verdicts")),
    ];
    expect(found).toEqual([]);
    await context.close();
  }, 180_000);
});
