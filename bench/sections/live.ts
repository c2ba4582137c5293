/**
 * Live update in a real browser: Chromium (playwright-core) has a share page open and live;
 * the clock starts when log_milestone is sent and stops when its text is in the page's DOM
 * (the call, the WebSocket push and the render, plus a CDP round trip of about 1 ms).
 */
import { timed } from "../../test/support/agents.ts";
import { browserMissing, launchChromium } from "../../test/support/chromium.ts";
import { callTool, connect, type McpTarget } from "../../test/support/mcp-client.ts";
import { summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { ms, times } from "../lib/table.ts";

export async function liveUpdate(context: BenchContext, server: McpTarget, logMilestoneMedianMs: number): Promise<void> {
  if (browserMissing) {
    context.table.add({ area: "live update (Chromium)", measure: "skipped: no /usr/bin/chromium", value: "" });
    return;
  }
  const count = context.quick ? 10 : 25;
  context.log(`live update: ${count} samples`);
  const client = await connect(server, { negotiation: "auto" });
  const browser = await launchChromium();
  try {
    const live = await timed(client, null, "start_workflow", { name: "Live" });
    const task = await timed(client, null, "start_task", { workflow_id: live.workflow_id, name: "Live task", goal: "g" });
    const tab = await browser.newPage();
    await tab.goto(String(live.share_url));
    await tab.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live", undefined, { timeout: 30_000 });
    const samples: number[] = [];
    for (let i = 0; i < count + 2; i++) {
      const message = `live-sample-${i}-${Math.random().toString(36).slice(2, 8)}`;
      // The observer is installed before the call is sent: CDP runs evaluations in order, so once
      // the second one returns, the first has set up its observer.
      const seen = tab.evaluate(
        (text) =>
          new Promise<boolean>((resolve) => {
            const has = () => document.body.textContent?.includes(text) ?? false;
            if (has()) return resolve(true);
            const observer = new MutationObserver(() => {
              if (has()) {
                observer.disconnect();
                resolve(true);
              }
            });
            observer.observe(document.body, { childList: true, subtree: true, characterData: true });
          }),
        message,
      );
      await tab.evaluate(() => 0);
      const t0 = performance.now();
      const sent = await callTool(client, "log_milestone", { task_id: task.task_id, message });
      if (sent.isError) throw new Error(sent.text);
      await seen;
      if (i >= 2) samples.push(performance.now() - t0); // the first two warm up
    }
    const s = summarize(samples);
    context.results.live = s;
    context.table.add({
      area: "live update (Chromium)",
      measure: `log_milestone sent → text in DOM, n=${s.n}`,
      value: `${ms(s.median)} / ${ms(s.p95)} (median / p95)`,
      floor: ms(logMilestoneMedianMs),
      ratio: times(s.median, logMilestoneMedianMs),
    });
  } finally {
    await browser.close();
    await client.close();
  }
}
