/**
 * `npm run screenshots`: the workflow page as a reviewer sees it, photographed in Chromium at
 * 1280 and 375 px wide, in the light and dark colour schemes, into docs/screenshots/ (PNG,
 * viewport-height crops, so they stay small). The workflow is recorded as an agent records one
 * (test/browser/review-workflow.ts: a real git repository, the real helper, `wrangler dev`), so
 * regenerating them after a change to the page is one command.
 *   --out <dir>   somewhere else than docs/screenshots/
 *   --html        also save the page's HTML next to them (page.html)
 *   --full        also whole-page shots (page-<width>-<scheme>-full.png; large, not for the README)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { recordReviewWorkflow } from "../test/browser/review-workflow.ts";
import { launchChromium } from "../test/support/chromium.ts";
import { startDevServer } from "../test/support/dev-server.ts";

const { values } = parseArgs({ options: { out: { type: "string" }, html: { type: "boolean" }, full: { type: "boolean" } } });
const out = resolve(values.out ?? join(import.meta.dirname, "../docs/screenshots"));
mkdirSync(out, { recursive: true });

const server = await startDevServer();
const browser = await launchChromium();
try {
  const recorded = await recordReviewWorkflow(server, { complete: true });
  if (values.html) writeFileSync(join(out, "page.html"), await (await fetch(recorded.shareUrl)).text());
  const shots: string[] = [];
  for (const colorScheme of ["light", "dark"] as const) {
    for (const width of [1280, 375]) {
      const context = await browser.newContext({
        viewport: { width, height: width > 600 ? 900 : 780 },
        colorScheme,
        timezoneId: "Europe/Paris",
      });
      const page = await context.newPage();
      await page.goto(recorded.shareUrl);
      await page.waitForFunction(() => (globalThis as unknown as { document: { readyState: string } }).document.readyState === "complete");
      const name = `page-${width}-${colorScheme}.png`;
      await page.screenshot({ path: join(out, name) });
      shots.push(name);
      if (values.full) await page.screenshot({ path: join(out, `page-${width}-${colorScheme}-full.png`), fullPage: true });
      // The timeline where a reviewer looks hardest: the subtask with a rename, a binary file, an out-of-scope and an uncommitted file, an issue flagged for review.
      await page
        .locator('li.task:has(> details > summary .task-name:text-is("Rounding rules"))')
        .evaluate((element) => (element as unknown as { scrollIntoView(): void }).scrollIntoView());
      const timeline = `timeline-${width}-${colorScheme}.png`;
      await page.screenshot({ path: join(out, timeline) });
      shots.push(timeline);
      await context.close();
    }
  }
  console.log(`screenshots of ${recorded.shareUrl} in ${out}: ${shots.join(", ")}`);
} finally {
  await browser.close();
  await server.stop();
}
