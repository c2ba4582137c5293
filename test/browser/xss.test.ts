import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { revealBidiControls as shown } from "../../src/pages/format";
import { type CallTool, recordFullWorkflow } from "../pages/fixture";
import { asRepoPath, XSS_PAYLOADS } from "../pages/xss-corpus";
import { lastSeqOf, skipBrowser, useServerAndBrowser } from "./browser";
import type { DomDocument, DomWindow } from "./dom";

declare const document: DomDocument;
declare const window: DomWindow;

/**
 * Every agent-written field carries a payload; the page is watched while the workflow is
 * recorded (so the live client renders everything) and then reloaded (server rendering).
 * Nothing may run: no window.__xss, no dialog, and not even a CSP violation — the
 * payloads must be inert because they are escaped, not merely because the CSP blocks them.
 */
describe.skipIf(skipBrowser)("XSS corpus stays inert in Chromium", () => {
  const env = useServerAndBrowser();
  const callTool: CallTool = (name, args) => env.callTool(name, args);

  async function trapped(page: Page): Promise<{ xss: unknown; violations: string[]; dialogs: string[] }> {
    return page.evaluate(() => {
      const w = window as unknown as { __xss?: unknown; __violations: string[] };
      return { xss: w.__xss, violations: w.__violations, dialogs: [] };
    });
  }

  async function newTrappedPage(dialogs: string[]): Promise<Page> {
    const page = await env.browser().newPage();
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.addInitScript(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener("securitypolicyviolation", (e) => w.__violations.push(`${e.violatedDirective}: ${e.sample}`));
    });
    return page;
  }

  it.each(XSS_PAYLOADS.map((p, i) => [i, p] as const))("payload %i", async (_index, payload) => {
    const dialogs: string[] = [];
    const page = await newTrappedPage(dialogs);
    // The page opens right after start_workflow: every later entity is rendered by the live client first.
    const recorded = await recordFullWorkflow(callTool, {
      text: () => payload,
      path: (label) => asRepoPath(payload, label),
      complete: true,
      onStarted: async (shareUrl) => {
        await page.goto(shareUrl);
        await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
      },
    });
    const lastSeq = await lastSeqOf(recorded.shareUrl);
    await page.waitForFunction((seq) => Number(document.getElementById("wm")?.dataset.seq) === seq, lastSeq);

    for (const phase of ["live", "reloaded"]) {
      if (phase === "reloaded") {
        await page.reload();
        await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
      }
      const trap = await trapped(page);
      expect(trap.xss, phase).toBeUndefined();
      expect(trap.violations, phase).toEqual([]);
      expect(dialogs, phase).toEqual([]);
      const name = await page.locator(".wf-name").textContent();
      // Shown as written, except that bidi controls are revealed as code points.
      expect(name).toBe(shown(payload));
      expect(await page.locator(`[id="${recorded.childTaskId}"] .task-name`).textContent()).toBe(shown(payload));
      expect(await page.locator(".decision strong").first().textContent()).toBe(shown(payload));
      const codes = await page.locator("table.files .path code").allTextContents();
      expect(codes).toContain(shown(asRepoPath(payload, "README.md")));
      // No element, attribute or URL came from the payload.
      const injected = await page.evaluate(() => ({
        scripts: document.scripts.length,
        frames: document.querySelectorAll("iframe, svg, img, details[ontoggle]").length,
        handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => a.name.startsWith("on"))).length,
        jsLinks: [...document.querySelectorAll("a")].filter(
          (a) => !a.getAttribute("href")?.startsWith("#") && !a.getAttribute("href")?.startsWith("/s/"),
        ).length,
      }));
      expect(injected).toEqual({ scripts: 1, frames: 0, handlers: 0, jsLinks: 0 });
    }
    await page.close();
  });

  it("a page open while every field is written stays inert (live rendering)", async () => {
    const dialogs: string[] = [];
    const page = await newTrappedPage(dialogs);
    const all = XSS_PAYLOADS.join(" ").slice(0, 190);
    const wf = await callTool("start_workflow", { name: "live xss" });
    await page.goto(String(wf.share_url));
    await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
    let n = 0;
    const text = () => XSS_PAYLOADS[n++ % XSS_PAYLOADS.length] ?? all;
    const task = await callTool("start_task", { workflow_id: wf.workflow_id, name: text(), goal: text(), areas: [text()] });
    await callTool("log_decision", {
      task_id: task.task_id,
      category: "other",
      question: text(),
      options_considered: [text(), text()],
      chosen: text(),
      reasoning: text(),
      trade_offs: text(),
    });
    await callTool("log_issue", {
      task_id: task.task_id,
      type: "other",
      description: text(),
      resolution: text(),
      requires_human_review: true,
    });
    await callTool("log_milestone", { task_id: task.task_id, message: text(), progress: 10, metadata: { [text()]: text() } });
    await callTool("complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: {
        summary: text(),
        achievements: [text()],
        limitations: [text()],
        next_steps: [text()],
        manual_review_needed: true,
        manual_review_reason: text(),
      },
      metadata: { packages_added: [text()], commands_executed: [text()] },
      changes: {
        type: "checksum",
        transitions: XSS_PAYLOADS.map((p, i) => ({
          path: asRepoPath(p, `f${i}`),
          before: null,
          after: { mode: "100644", blob: "a".repeat(40) },
        })),
      },
    });
    await callTool("complete_workflow", {
      workflow_id: wf.workflow_id,
      status: "success",
      summary: text(),
      achievements: [text()],
      limitations: [text()],
    });
    // The live update's arrival, not its speed (test/browser/live.test.ts holds that): Playwright's default wait.
    await page.waitForFunction(() => document.querySelectorAll("table.files .path code").length > 0);
    await page.waitForFunction(() => document.querySelector(".wf-outcome") !== null);
    const trap = await trapped(page);
    expect(trap.xss).toBeUndefined();
    expect(trap.violations).toEqual([]);
    expect(dialogs).toEqual([]);
    const files = await page.locator("table.files .path code").allTextContents();
    expect(files.sort()).toEqual(XSS_PAYLOADS.map((p, i) => shown(asRepoPath(p, `f${i}`))).sort());
    await page.close();
  });
});
