import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { skipBrowser, useServerAndBrowser } from "./browser";
import type { DomNode } from "./dom";
import { EXPECTED, type RecordedReview, recordReviewWorkflow } from "./review-workflow";

declare const document: { getElementById(id: string): DomNode | null; documentElement: { scrollWidth: number } };
declare const window: { innerWidth: number };
declare function getComputedStyle(element: unknown): { color: string };

/**
 * The page as a reviewer's tool, in Chromium against `wrangler dev`, on a workflow an agent
 * recorded through the real helper in a real git repository (nested tasks, commits, a rename,
 * a binary file, reviews): the timeline's order, the per-file counts, the badges, the review
 * box above the timeline, plan steps tied to tasks, local times, the live indicator, collapsing
 * that survives live updates, and print.
 */
describe.skipIf(skipBrowser)("the workflow page as a reviewer's tool", () => {
  const env = useServerAndBrowser();
  let recorded: RecordedReview;

  beforeAll(async () => {
    recorded = await recordReviewWorkflow(env.server(), { complete: false });
  }, 120_000);

  /** What a timeline list shows, in order: task names, milestone messages, decision questions, issue descriptions. */
  const timeline = (page: Page, listId: string) =>
    page.evaluate((id) => {
      const list = document.getElementById(id);
      return Array.from(list?.children ?? [], (item) => item.querySelector(".what")?.textContent ?? "");
    }, listId);

  async function open(width = 1280, timezoneId = "Asia/Tokyo"): Promise<Page> {
    const context = await env.browser().newContext({ viewport: { width, height: 900 }, timezoneId });
    const page = await context.newPage();
    await page.goto(recorded.shareUrl);
    await page.waitForFunction(
      () => document.getElementById("wm")?.textContent !== null && document.getElementById("live")?.className === "live on",
    );
    return page;
  }

  const task = (name: string) => `[id="${recorded.tasks[name]}"]`;

  it("shows the timeline in order, nested, with each task's logs in time order", async () => {
    const page = await open();
    expect(await timeline(page, "tl-root")).toEqual(EXPECTED.roots);
    for (const [name, items] of Object.entries(EXPECTED.timelineOf)) {
      expect(await timeline(page, `tl-${recorded.tasks[name]}`), name).toEqual(items);
    }
    // The review box and the plan come before the timeline on screen.
    const top = async (selector: string) => (await page.locator(selector).boundingBox())?.y ?? Number.NaN;
    expect(await top("#wf-review")).toBeLessThan(await top("#wf-plan"));
    expect(await top("#wf-plan")).toBeLessThan(await top("#wf-tasks"));
    const review = await page.locator("#wf-review").innerText();
    expect(review).toContain("Rounding differs from the accounting export");
    expect(review).toContain("Money: check the three sample invoices");
    await page.context().close();
  });

  it("shows status by badges (shape and word), and per-file line counts, renames once, binary files, labels in words", async () => {
    const page = await open();
    for (const [name, status] of Object.entries(EXPECTED.badges)) {
      const badge = page.locator(`${task(name)} > details > summary .badge`);
      expect(await badge.innerText(), name).toBe(`${status === "success" ? "✓" : "✕"} ${status} (claimed)`);
      // The card itself is not coloured by its status: only the badge is.
      expect(
        await page
          .locator(`${task(name)} .task-name`)
          .first()
          .evaluate((e) => getComputedStyle(e).color),
      ).toBe(await page.locator("h1 .wf-name").evaluate((e) => getComputedStyle(e).color));
    }
    expect(await page.locator("#wf-header .badge").innerText()).toBe("◔ in progress");
    for (const [name, files] of Object.entries(EXPECTED.files)) {
      const rows = page.locator(`${task(name)} > details > .task-body table.files tbody tr`);
      const shown: Record<string, string> = {};
      for (const row of await rows.all()) {
        const path = await row.locator(".path code").innerText();
        const cells = await row.locator("td.num").allInnerTexts();
        shown[path] = cells.join(" ");
      }
      expect(shown, name).toEqual(files);
    }
    for (const path of EXPECTED.outsideAreas) {
      expect(await page.locator(`tr.out-of-scope:has(code:text-is("${path}")) .tag.warn`).first().innerText()).toBe(
        "⚠ outside declared areas",
      );
    }
    for (const path of EXPECTED.uncommitted) {
      expect(await page.locator(`tr:has(code:text-is("${path}")) .tag`).first().innerText()).toBe("○ uncommitted");
    }
    // Bars in proportion: the task's largest change has the widest bar.
    expect(
      await page.locator(`${task("Parse the rates CSV")} tr:has(code:text-is("src/billing/rates.ts")) .b-add`).getAttribute("class"),
    ).toBe("b-add w20");
    expect(
      await page.locator(`${task("Parse the rates CSV")} tr:has(code:text-is("src/billing/rates.csv")) .b-add`).getAttribute("class"),
    ).toBe("b-add w5");
    // A parent lists its own files; its subtasks' are counted and listed under them.
    expect(await page.locator(`${task("1. Tax rate table")} > details > summary`).innerText()).toContain("5 files in subtasks");
    // Commits, humanised counts.
    expect(await page.locator(`${task("Rounding rules")} .commits`).innerText()).toMatch(
      /branch main · 2 commits during this task[\s\S]*Move the rounding notes[\s\S]*Round half-even/,
    );
    // A rounded figure says its exact value beside its label, for every reader (not only on hover).
    expect(await page.locator("#wf-totals").innerText()).toMatch(/195k\s*tokens \(195,350\)/);
    await page.context().close();
  });

  it("ties plan steps to the tasks that did them, shows times in the viewer's zone with UTC on hover", async () => {
    const page = await open();
    for (const [step, name] of Object.entries(EXPECTED.plan)) {
      const item = page.locator("#wf-plan li.step").filter({ has: page.locator(`strong:text-is("${step}")`) });
      expect(await item.locator("a").allInnerTexts(), step).toEqual([name]);
      expect(await item.getAttribute("class"), step).toBe("step done");
    }
    // The failed task named after step 4 did not do it.
    expect(await page.locator("#wf-plan li.step").nth(3).innerText()).toContain("failed: Update the PDF export");
    expect(await page.locator("#wf-plan li.step.done").count()).toBe(3);
    const time = page.locator("#wf-header time").first();
    expect(await time.innerText()).toMatch(/GMT\+9/);
    expect(await time.getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    // At 375 px the page still fits its width.
    await page.setViewportSize({ width: 375, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await page.context().close();
  });

  it("keeps a task the viewer closed closed across live updates; says completed, not live, once the workflow ends; prints everything", async () => {
    const page = await open();
    expect(await page.locator("#live").isVisible()).toBe(true);
    await page.click(`${task("1. Tax rate table")} > details > summary`);
    expect(await page.locator(`${task("1. Tax rate table")} > details`).getAttribute("open")).toBeNull();
    await env.callTool("complete_workflow", {
      workflow_id: recorded.workflowId,
      status: "partial_success",
      summary: "VAT applied; the PDF export is left.",
    });
    await page.waitForFunction(
      () => document.getElementById("wf-header")?.querySelector(".badge")?.textContent?.includes("partial success") === true,
    );
    expect(await page.locator("#live").isVisible()).toBe(false);
    expect(await page.locator("#wf-header .times").innerText()).toMatch(/completed .*GMT\+9/);
    expect(await page.locator(`${task("1. Tax rate table")} > details`).getAttribute("open")).toBeNull();
    // A link to the issue inside it opens the closed task.
    await page.goto(`${recorded.shareUrl}#${recorded.issueForReview}`);
    await page.waitForFunction(
      (id) => document.getElementById(id)?.querySelector("details")?.open === true,
      recorded.tasks["1. Tax rate table"] ?? "",
    );
    await page.click(`${task("1. Tax rate table")} > details > summary`);
    // On paper: every task's content, no live indicator or export links.
    const closedBody = page.locator(`${task("1. Tax rate table")} > details > .task-body`);
    expect(await closedBody.isVisible()).toBe(false);
    await page.emulateMedia({ media: "print" });
    expect(await closedBody.isVisible()).toBe(true);
    expect(await page.locator(".topbar").isVisible()).toBe(false);
    await page.context().close();
  });
});
