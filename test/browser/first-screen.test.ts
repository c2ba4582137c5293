import { diffLink } from "@waymark/protocol/diff-links";
import { type ReviewCounts, reviewCounts } from "@waymark/protocol/review-counts";
import type { ExportView } from "@waymark/protocol/views/export";
import type { BrowserContext, Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { ownerSession, skipBrowser, useServerAndBrowser } from "./browser";
import { EXPECTED, type RecordedReview, recordReviewWorkflow } from "./review-workflow";

/**
 * A reviewer's first screen, in Chromium against `wrangler dev`, on a workflow an agent recorded
 * through the real helper in a real git repository with a GitHub remote (a failed task, files
 * outside their areas, tests observed failing then passing through the agent's hooks, tests that
 * ran before a later edit): each answer (what needs me, did the checks pass, what is outside the
 * areas, what changed) and every count agree with the JSON export, whose `review` member is the
 * protocol's counting of its own records; the owner reviews an item by keyboard in place, without
 * the page navigating, and the counts follow everywhere (page, JSON, Markdown); the same form works
 * without script; revoking asks first; every page has a skip link and a focus style of its own;
 * no word breaks mid-word on a phone.
 */

type Win = { __stayed?: boolean; performance: { getEntriesByType(type: string): unknown[] } };
type El = {
  tagName: string;
  id: string;
  textContent: string | null;
  className: string;
  closest(s: string): El | null;
  getAttribute(n: string): string | null;
};
type Doc = { activeElement: El | null; body: unknown };

/** Words of a page's prose that wrap inside themselves (code and paths may: they are not words). */
function wordsBrokenMidWord(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type TextNode = { textContent: string | null; parentElement: { closest(s: string): unknown } | null };
    type Range = {
      setStart(n: unknown, o: number): void;
      setEnd(n: unknown, o: number): void;
      getClientRects(): ArrayLike<{ top: number; width: number }>;
    };
    const doc = (
      globalThis as unknown as {
        document: {
          body: unknown;
          createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null };
          createRange(): Range;
        };
      }
    ).document;
    const walker = doc.createTreeWalker(doc.body, 4);
    const found: string[] = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (
        node.parentElement?.closest(
          "code, pre, script, style, .sr-only, [hidden], template, .cmd, .path, .linkbox, .repo, .what, .fb-body, .description, summary .task-name",
        )
      )
        continue;
      const text = node.textContent ?? "";
      for (const match of text.matchAll(/[^\s\-/·–—]+/g)) {
        if (match[0].length < 3) continue;
        const range = doc.createRange();
        range.setStart(node, match.index ?? 0);
        range.setEnd(node, (match.index ?? 0) + match[0].length);
        const tops = new Set(
          Array.from(range.getClientRects())
            .filter((r) => r.width > 0)
            .map((r) => Math.round(r.top)),
        );
        if (tops.size > 1) found.push(match[0]);
      }
    }
    return found;
  });
}

describe.skipIf(skipBrowser)("the first screen answers a reviewer, and the review happens where the item is", () => {
  const env = useServerAndBrowser();
  let recorded: RecordedReview;
  let signedIn: Awaited<ReturnType<BrowserContext["storageState"]>>;

  beforeAll(async () => {
    recorded = await recordReviewWorkflow(env.server(), { complete: false });
    signedIn = await ownerSession(env.browser(), env.server());
  }, 300_000);

  const read = async (path: string) => {
    const response = await fetch(`${env.server().url}${path}`, { headers: { Authorization: `Bearer ${env.server().token}` } });
    expect(response.status, path).toBe(200);
    return response.text();
  };
  const exported = async () => JSON.parse(await read(`/api/workflows/${recorded.workflowId}/export.json`)) as ExportView;
  const markdown = () => read(`/api/workflows/${recorded.workflowId}/export.md`);

  async function ownerPage(options: { javaScript?: boolean; width?: number } = {}): Promise<Page> {
    const context = await env.browser().newContext({
      storageState: signedIn,
      viewport: { width: options.width ?? 1280, height: 900 },
      javaScriptEnabled: options.javaScript ?? true,
    });
    const page = await context.newPage();
    await page.goto(`${env.server().url}/w/${recorded.workflowId}`);
    if (options.javaScript ?? true)
      await page.waitForFunction(
        () =>
          (
            globalThis as unknown as { document: { getElementById(id: string): { dataset: { state?: string } } | null } }
          ).document.getElementById("wm")?.dataset.state === "live",
      );
    return page;
  }

  /** What the page says of the counts: the head's cell, the review box's heading and its open items. */
  async function shownCounts(page: Page) {
    const totals = await page.locator("#wf-totals").innerText();
    return {
      cell: Number(/(\d+)\s*open for review/.exec(totals)?.[1]),
      heading: await page.locator("#wf-review-title .count").innerText(),
      listed: await page.locator("#nr-open > li").count(),
    };
  }

  it("answers what needs me, did the checks pass, what is outside the areas and what changed, each count the JSON export's", async () => {
    const view = await exported();
    const review = view.review as ReviewCounts;
    // The export's counts are the protocol's function of its own records.
    expect(review).toEqual(reviewCounts(view, view.feedback ?? []));
    // A failed task, two tasks and a parent outside their areas, a task that asked, a flagged issue: five open items.
    expect(review.review).toEqual({ items: 5, open: 5, approved: 0, changes_requested: 0 });
    expect(review.failed_tasks).toBe(1);
    expect(view.totals.reviews_needed).toBe(review.review.open);

    const page = await ownerPage();
    expect(await shownCounts(page)).toEqual({ cell: 5, heading: "5 open items", listed: 5 });
    const needs = await page.locator("#wf-review").innerText();
    expect(needs).toContain("Update the PDF export: the agent reported it failed");
    expect(needs).toContain("it asked for review: Money: check the three sample invoices");
    expect(needs).toContain("Bug encountered in Rounding rules: Rounding differs from the accounting export");
    expect(needs).toMatch(/not computed and signed\s+the files of 5 tasks are claimed by the client/);

    // The checks: per kind, observed after each task's last edit next to the claims, and each task's line.
    const checks = await page.locator("#wf-checks").innerText();
    const tests = review.checks.test;
    expect(tests.observed).toEqual({ passed: 1, failed: 1, exit_unknown: 0, not_run: 3, not_observed: 0 });
    expect(checks).toContain(
      `Tests (5 tasks): observed ✓ 1 passed · ✕ 1 failed · ○ 3 not run after the last edit; claimed: 2 passed · 1 failed · 2 no claim`,
    );
    const parse = page.locator("#wf-checks li", { hasText: "Parse the rates CSV" });
    expect(await parse.innerText()).toMatch(
      /Tests: claimed: tests passed \(ran npm test\) · observed: npm test ✓ exit 0 \(passed\) at .* after the last edit/,
    );
    // The failing run before the fix is on the task's card, in order.
    const runs = page.locator(`li.task[id="${recorded.tasks["Parse the rates CSV"]}"] .check-lines ol.runs li`);
    expect(await runs.allInnerTexts()).toEqual([
      expect.stringMatching(/^npm test ✕ exit 1 \(failed\)/),
      expect.stringMatching(/^npm test ✓ exit 0 \(passed\)/),
    ]);
    expect(await page.locator("#wf-checks li", { hasText: "3. Invoice totals" }).innerText()).toContain(
      "Tests: claimed: tests passed (ran npm test) · no test run observed after the last edit (last before it: npm test ✓ exit 0 (passed)",
    );

    // Outside the declared areas: the same tasks and files as the export's verifications.
    const outside = await page.locator("#wf-outside").innerText();
    expect(outside).toContain(`${review.outside_areas.tasks} tasks, ${review.outside_areas.files} files`);
    for (const path of EXPECTED.outsideAreas) expect(outside).toContain(path);
    for (const task of view.tasks.filter((t) => (t.verification?.unexpected_files.length ?? 0) > 0)) expect(outside).toContain(task.name);

    // What changed: the head's line totals link to it (it sits below the first answers).
    expect(await page.locator("#wf-lines a").getAttribute("href")).toBe("#wf-changed");
    // One row per file each task changed itself, with its task and its diff on GitHub (or the command).
    const rows = await page.locator("#wf-changed tbody tr").evaluateAll((trs) =>
      trs.map((tr) => {
        const cells = (tr as unknown as { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> }).querySelectorAll("td");
        const link = (tr as unknown as { querySelector(s: string): { getAttribute(n: string): string | null } | null }).querySelector(
          "td.diff a",
        );
        return {
          file: cells[1]?.textContent ?? "",
          task: cells[cells.length - 2]?.textContent ?? "",
          diff: link?.getAttribute("href") ?? null,
          cmd: cells[cells.length - 1]?.textContent ?? "",
        };
      }),
    );
    const own = Object.entries(EXPECTED.files).flatMap(([task, files]) => Object.keys(files).map((file) => ({ task, file })));
    expect(
      rows.map((r) => ({
        task: r.task.replace(/Review.*$/, "").trim(),
        file: r.file.replace(/ ○ uncommitted| ⚠ outside declared areas/g, "").trim(),
      })),
    ).toEqual(expect.arrayContaining(own));
    expect(rows).toHaveLength(own.length);
    for (const task of view.tasks) {
      const repo = task.repository;
      for (const path of task.files_changed?.modified ?? []) {
        const row = rows.find((r) => r.file.startsWith(path) && r.task.startsWith(task.name));
        if (!row) continue;
        const uncommitted = task.files_changed?.uncommitted.includes(path) ?? false;
        const link = diffLink({
          remote: repo?.remote ?? null,
          start: repo?.start_commit ?? null,
          end: repo?.end_commit ?? null,
          path,
          uncommitted,
        });
        expect(row.diff, path).toBe(link.url ?? null);
        expect(row.cmd, path).toContain(link.command ?? "");
        if (!uncommitted)
          expect(row.diff, path).toMatch(
            new RegExp(`^https://github\\.com/acme/shop/compare/${repo?.start_commit}\\.\\.\\.${repo?.end_commit}#diff-[0-9a-f]{64}$`),
          );
      }
    }
    // The agent's own status is its claim, never a verdict.
    expect(await page.locator(`li.task[id="${recorded.tasks["3. Invoice totals"]}"] > details > summary .badge`).innerText()).toBe(
      "✓ success (claimed)",
    );
    // Provenance said once; a task's card says only where it differs.
    expect(await page.locator("#wf-provenance").innerText()).toMatch(/Files:\s*claimed by the client .* \(every task\)/);
    expect(await page.locator(`li.task[id="${recorded.tasks["3. Invoice totals"]}"] .provenance`).innerText()).not.toContain("Files:");

    // The Markdown export: the same counts, the open items only, the file outside its areas included.
    const md = await markdown();
    expect(md).toContain(`**Needs review:** ${review.review.open} open`);
    expect(md).toContain("changed 1 file outside its declared areas: `README.md`");
    expect(md).toContain("Task **Update the PDF export**: failed (as the agent reported it)");
    await page.context().close();
  }, 120_000);

  it("reviews an item by keyboard where it is, without a page load; the counts follow on the page and in both exports", async () => {
    const before = (await exported()).review as ReviewCounts;
    const page = await ownerPage();
    await page.evaluate(() => {
      (globalThis as unknown as Win).__stayed = true;
    });
    const invoice = recorded.tasks["3. Invoice totals"] ?? "";
    // Tab to the item's Review control (what it is about is in its name), open it with Enter.
    await page.locator("#wf-review").scrollIntoViewIfNeeded();
    let focused = "";
    for (let i = 0; i < 80 && !focused.includes("Review task 3. Invoice totals"); i++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => {
        const active = (globalThis as unknown as { document: Doc }).document.activeElement;
        return `${active?.tagName}:${active?.textContent?.replace(/\s+/g, " ").trim()}`;
      });
    }
    expect(focused).toBe("SUMMARY:Review task 3. Invoice totals");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Totals checked on the three sample invoices.");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => (globalThis as unknown as { document: Doc }).document.activeElement?.textContent)).toBe("Approve");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toBe("Approval recorded.");
    // In place: the same document, the item approved and focused, the counts one fewer.
    expect(
      await page.evaluate(
        () =>
          (globalThis as unknown as Win).__stayed === true &&
          (globalThis as unknown as Win).performance.getEntriesByType("navigation").length === 1,
      ),
    ).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { document: Doc }).document.activeElement?.id)).toBe(`nr-${invoice}`);
    expect(await page.locator(`#nr-settled li[id="nr-${invoice}"]`).count()).toBe(1);
    expect(await shownCounts(page)).toEqual({
      cell: before.review.open - 1,
      heading: `${before.review.open - 1} open items · 1 approved`,
      listed: before.review.open - 1,
    });
    const after = await exported();
    expect(after.review?.review).toEqual({ ...before.review, open: before.review.open - 1, approved: 1 });
    expect(after.totals.reviews_needed).toBe(before.review.open - 1);
    expect(after.feedback?.at(-1)).toMatchObject({
      target_id: invoice,
      verdict: "approved",
      channel: "page",
      body: "Totals checked on the three sample invoices.",
    });
    const md = await markdown();
    expect(md).toContain(`**Needs review:** ${before.review.open - 1} open · 1 approved`);
    expect(md).not.toContain("Task **3. Invoice totals**:");

    // A decision's Review link opens a form right there (Enter on the link), which comments in place too.
    const decision = page.locator("a.review-link", { hasText: "Review decision Where do the rates live?" });
    await decision.focus();
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => (globalThis as unknown as { document: Doc }).document.activeElement?.tagName)).toBe("TEXTAREA");
    await page.keyboard.type("Rates in code is fine for now.");
    await page.locator("form.rv-inline button", { hasText: "Comment" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#wf-announce").innerText(), { timeout: 20_000 }).toBe("Comment recorded.");
    expect(await page.locator("form.rv-inline").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as Win).__stayed === true)).toBe(true);
    expect((await exported()).feedback?.at(-1)).toMatchObject({ verdict: "comment", body: "Rates in code is fine for now." });
    // A refusal is said in the form, which keeps focus: a comment needs words.
    await decision.focus();
    await page.keyboard.press("Enter");
    await page.locator("form.rv-inline button", { hasText: "Comment" }).click();
    await expect.poll(() => page.locator("form.rv-inline .rv-status").innerText()).toBe("body: must not be empty for a comment");
    await page.keyboard.press("Escape");
    expect(await page.locator("form.rv-inline").count()).toBe(0);
    await page.context().close();
  }, 120_000);

  it("the same review form works without script: it posts and the page comes back with the item settled", async () => {
    const page = await ownerPage({ javaScript: false });
    const pdf = recorded.tasks["Update the PDF export"] ?? "";
    const item = page.locator(`li[id="nr-${pdf}"]`);
    await item.locator("summary").click();
    await item.locator("textarea").fill("Known: pdfkit is out of scope.");
    await Promise.all([page.waitForURL(/\/w\/wf_.*#fb_/), item.locator("button", { hasText: "Approve" }).click()]);
    expect(await page.locator(`#nr-settled li[id="nr-${pdf}"]`).count()).toBe(1);
    expect((await exported()).review?.review.approved).toBeGreaterThanOrEqual(1);
    await page.context().close();
  }, 60_000);

  it("revoking the share link asks first, with and without script; Cancel leaves it", async () => {
    for (const javaScript of [true, false]) {
      const page = await ownerPage({ javaScript });
      await Promise.all([page.waitForLoadState("load"), page.locator('#share form:has(input[value="revoke"]) button').click()]);
      expect(await page.locator("h1").innerText()).toBe(`Revoke the share link of workflow ${recorded.workflowId}?`);
      expect(await page.locator("#confirm-form button").innerText()).toBe("Revoke the link");
      await Promise.all([page.waitForURL(/#share$/), page.click("text=Cancel")]);
      expect(await page.locator("#share-state").innerText()).toBe("active");
      await page.context().close();
    }
    expect((await fetch(recorded.shareUrl)).status).toBe(200);
  }, 60_000);

  it("every page has a skip link first and a focus style of its own; no word breaks mid-word at 375 px", async () => {
    const { url } = env.server();
    const pages = [
      { path: "/login", signedIn: false },
      { path: recorded.shareUrl.replace(url, ""), signedIn: false },
      { path: `${recorded.shareUrl.replace(url, "")}/files/${recorded.tasks["Rounding rules"]}`, signedIn: false },
      { path: "/s/not-a-real-token", signedIn: false },
      { path: `/w/${recorded.workflowId}`, signedIn: true },
      { path: "/dashboard", signedIn: true },
      { path: "/dashboard/tokens", signedIn: true },
      { path: "/dashboard/devices", signedIn: true },
      { path: "/dashboard/insights", signedIn: true },
    ];
    for (const target of pages) {
      const context = await env
        .browser()
        .newContext({ viewport: { width: 375, height: 800 }, ...(target.signedIn ? { storageState: signedIn } : {}) });
      const page = await context.newPage();
      await page.goto(`${url}${target.path}`);
      await page.keyboard.press("Tab");
      const skip = await page.evaluate(() => {
        const active = (globalThis as unknown as { document: Doc }).document.activeElement;
        const style = (
          globalThis as unknown as { getComputedStyle(e: unknown): { outlineStyle: string; outlineWidth: string } }
        ).getComputedStyle(active);
        return {
          text: active?.textContent ?? "",
          href: active?.getAttribute("href") ?? "",
          outline: `${style.outlineWidth} ${style.outlineStyle}`,
        };
      });
      expect(skip.text, target.path).toMatch(/^Skip to /);
      expect(skip.outline, target.path).toBe("3px solid");
      await page.keyboard.press("Enter");
      const landed = await page.evaluate(() => (globalThis as unknown as { document: Doc }).document.activeElement?.id ?? "");
      expect(`#${landed}`, target.path).toBe(skip.href);
      // No word of the page's prose wraps inside itself.
      const broken = await wordsBrokenMidWord(page);
      expect(broken, target.path).toEqual([]);
      await context.close();
    }
  }, 180_000);
});
