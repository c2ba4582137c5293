/**
 * Shared pages under anonymous load: a workflow of 10 tasks × 20,000 files (the widest an agent
 * can record; 5 × 5,000 with --quick) read by 4 anonymous readers in parallel, each from its own
 * loopback address (4 clients to the limiter), looping over the page and its live blocks as fast
 * as they are answered for a fixed time, and waiting a 429's Retry-After as the live page does. Meanwhile another account calls get_workflow on its own workflow, one call at a
 * time; its median is compared with its idle median, measured just before on the same server.
 * Every page response's size is recorded. Its own `wrangler dev`, so the readers' rate-limit
 * budgets are this section's alone.
 */
import { toolCaller } from "../../test/pages/fixture.ts";
import { startDevServer } from "../../test/support/dev-server.ts";
import { getFrom } from "../../test/support/loopback-get.ts";
import { summarize } from "../../test/support/stats.ts";
import { recordWideWorkflow } from "../../test/support/wide-workflow.ts";
import type { BenchContext } from "../lib/context.ts";
import { atMost, bytes, count, ms, percentiles, times } from "../lib/table.ts";

const READERS = 4;
const MAX_PAGE_BYTES = 2 * 1024 * 1024;
const OTHER_TOKEN = "bench-other-account-token-0123456789";

export async function pagesUnderLoad(context: BenchContext): Promise<void> {
  const [tasks, files, seconds, calls] = context.quick ? [5, 5_000, 10, 20] : [10, 20_000, 30, 40];
  const server = await startDevServer({ vars: { WAYMARK_TOKENS: `other:${OTHER_TOKEN}` } });
  try {
    const owner = toolCaller(fetch, `${server.url}/mcp`, server.token);
    const other = toolCaller(fetch, `${server.url}/mcp`, OTHER_TOKEN);
    context.log(`pages: recording ${tasks} tasks × ${files} files`);
    const wide = await recordWideWorkflow(owner, tasks, files);
    const own = String((await other("start_workflow", { name: "Someone else's work" })).workflow_id);
    await other("start_task", { workflow_id: own, name: "Busy", goal: "g" });
    const getWorkflow = async () => {
      const started = performance.now();
      await other("get_workflow", { workflow_id: own });
      return performance.now() - started;
    };
    for (let i = 0; i < 5; i++) await getWorkflow(); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < calls; i++) idle.push(await getWorkflow());

    // The first read renders; the same state again is recalled.
    const first = performance.now();
    const firstPage = await getFrom(wide.shareUrl, "127.0.0.2");
    const firstMs = performance.now() - first;

    context.log(`pages: ${READERS} anonymous readers for ${seconds} s`);
    const deadline = Date.now() + seconds * 1000;
    const served: number[] = [];
    let refused = 0;
    let largest = firstPage.bytes;
    const errors: string[] = [];
    const reader = async (index: number) => {
      const from = `127.0.0.${10 + index}`;
      for (let i = 0; Date.now() < deadline; i++) {
        const started = performance.now();
        const got = await getFrom(i % 2 === 0 ? wide.shareUrl : `${wide.shareUrl}/blocks`, from);
        largest = Math.max(largest, got.bytes);
        if (got.status === 200) served.push(performance.now() - started);
        else if (got.status === 429) {
          refused++;
          // Refused: it waits what it is told, as the live page does (a flood that ignores 429s is
          // the edge's to stop, like any flood of requests).
          const wait = Math.min(Number(got.headers["retry-after"] ?? 10) * 1000, deadline - Date.now());
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        } else errors.push(`reader ${index}: status ${got.status}`);
      }
    };
    const loaded: number[] = [];
    const victim = async () => {
      while (Date.now() < deadline) loaded.push(await getWorkflow());
    };
    await Promise.all([...Array.from({ length: READERS }, (_, i) => reader(i)), victim()]);
    if (errors.length > 0) context.fail(`pages: ${errors.slice(0, 3).join("; ")}`);

    const idleSummary = summarize(idle);
    const loadedSummary = summarize(loaded);
    const servedSummary = summarize(served);
    const area = `shared pages, ${READERS} anonymous readers (${tasks} tasks × ${count(files)} files, ${seconds} s)`;
    context.table.add({ area, measure: `another account's get_workflow, idle, n=${idleSummary.n}`, value: percentiles(idleSummary) });
    context.table.add({
      measure: `another account's get_workflow, under the readers, n=${loadedSummary.n}`,
      value: percentiles(loadedSummary),
      floor: ms(idleSummary.median),
      ratio: times(loadedSummary.median, idleSummary.median),
      target: atMost(loadedSummary.median / idleSummary.median, 2, "x idle median"),
    });
    context.table.add({
      measure: "largest page or blocks response",
      value: bytes(largest),
      target: { label: "≤ 2 MiB", met: largest <= MAX_PAGE_BYTES },
    });
    context.table.add({
      measure: "first page (rendered), then the same state (recalled)",
      value: `${ms(firstMs)}, then ${ms(servedSummary.median)} median`,
    });
    context.table.add({
      measure: `readers' reads answered, n=${served.length}; refused by the rate limits (429)`,
      value: `${percentiles(servedSummary)}; ${count(refused)} refused`,
    });
    context.results.pages = {
      tasks,
      files,
      seconds,
      readers: READERS,
      idle: idleSummary,
      loaded: loadedSummary,
      served: servedSummary,
      refused,
      largest_bytes: largest,
      first_page_ms: firstMs,
      first_page_bytes: firstPage.bytes,
    };
  } finally {
    await server.stop();
  }
}
