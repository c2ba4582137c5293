/**
 * The per-workflow byte quota (LIMITS.WORKFLOW_BYTES) against what it protects: on a server of its
 * own that meters itself, a workflow is filled with tasks of 20,000 files with long paths until
 * start_task is refused (test/support/wide-workflow.ts, as test/e2e/workflow-quota.test.ts does);
 * then the task it left open completes with 20,000 files, and its share page and its whole JSON
 * export are read, each timed with the Worker process's CPU (bench/lib/process-cpu.ts: an upper
 * bound of the request's own, the objects' included). The export is the heaviest read of a
 * workflow and grows with it: its CPU time at the quota, against the platform's CPU limit per
 * request (30 s by default), is the measured limit the quota is held to.
 */

import { toolCaller } from "../../test/pages/fixture.ts";
import { startDevServer } from "../../test/support/dev-server.ts";
import { fillToQuota, longPathChanges } from "../../test/support/wide-workflow.ts";
import type { BenchContext } from "../lib/context.ts";
import { cpuDuring } from "../lib/process-cpu.ts";
import { bytes, ms } from "../lib/table.ts";

const WORKER = "worker (workerd)";
/** Cloudflare Workers' default CPU time limit per request (configurable up to 5 minutes). */
const CPU_LIMIT_MS = 30_000;

async function readMeterBytes(url: string): Promise<number> {
  const meter = (await (await fetch(`${url}/meter`)).json()) as { objects: { workflow: { database_bytes: number } } };
  return meter.objects.workflow.database_bytes;
}

export async function quota(context: BenchContext, vars: Record<string, string>): Promise<void> {
  const files = context.quick ? 5_000 : 20_000;
  const pathBytes = 200;
  const server = await startDevServer({ vars: { ...vars, WAYMARK_METER: "1" } });
  const port = Number(new URL(server.url).port);
  try {
    const callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
    context.log(`quota: filling a workflow with tasks of ${files} files (paths of ~${pathBytes} bytes) until start_task is refused`);
    const fillStarted = performance.now();
    const full = await fillToQuota(callTool, files, pathBytes);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const completion = await cpuDuring(port, async () => {
      const t0 = performance.now();
      await callTool("complete_task", {
        task_id: full.openTaskId,
        status: "success",
        outcome: { summary: "past the quota" },
        changes: longPathChanges(999, files, pathBytes),
      });
      return performance.now() - t0;
    });
    const databaseBytes = await readMeterBytes(server.url);
    const page = await cpuDuring(port, async () => {
      const t0 = performance.now();
      const response = await fetch(full.shareUrl);
      const body = await response.arrayBuffer();
      if (!response.ok) throw new Error(`share page answered ${response.status}`);
      return { ms: performance.now() - t0, bytes: body.byteLength };
    });
    const exported = await cpuDuring(port, async () => {
      const t0 = performance.now();
      const response = await fetch(`${full.shareUrl}/export.json`);
      const body = await response.arrayBuffer();
      if (!response.ok) throw new Error(`export answered ${response.status}`);
      return { ms: performance.now() - t0, bytes: body.byteLength };
    });
    const exportCpu = exported.cpuMs[WORKER] ?? Number.NaN;
    // The quota as the refusal names it (src/limits.ts cannot be loaded here: it imports the protocol package).
    const quotaBytes = Number(/at most (\d+) bytes stored per workflow/.exec(full.refusal)?.[1] ?? Number.NaN);
    context.table.add({
      area: `workflow byte quota (${bytes(quotaBytes).replace(".0", "")} per workflow)`,
      measure: `filled with tasks of ${files.toLocaleString("en")} files, paths of ~${pathBytes} bytes: ${full.taskIds.length} tasks fit (${fillSeconds.toFixed(0)} s), then start_task refused`,
      value: `database ${bytes(databaseBytes)}`,
    });
    context.table.add({
      measure: `the open task completes past the quota (${files.toLocaleString("en")} files)`,
      value: ms(completion.value),
      ratio: `Worker CPU ${ms(completion.cpuMs[WORKER] ?? Number.NaN)}`,
    });
    context.table.add({
      measure: `share page at the quota (${bytes(page.value.bytes)})`,
      value: ms(page.value.ms),
      ratio: `Worker CPU ${ms(page.cpuMs[WORKER] ?? Number.NaN)}`,
    });
    context.table.add({
      measure: `whole JSON export at the quota (${bytes(exported.value.bytes)})`,
      value: ms(exported.value.ms),
      floor: `CPU limit ${ms(CPU_LIMIT_MS)}`,
      ratio: `Worker CPU ${ms(exportCpu)}: ${((100 * exportCpu) / CPU_LIMIT_MS).toFixed(0)}% of the limit`,
    });
    context.results.quota = {
      quota_bytes: quotaBytes,
      files_per_task: files,
      path_bytes: pathBytes,
      tasks_fitting: full.taskIds.length,
      fill_seconds: fillSeconds,
      database_bytes: databaseBytes,
      completion_ms: completion.value,
      completion_cpu_ms: completion.cpuMs[WORKER],
      page: { ...page.value, cpu_ms: page.cpuMs[WORKER] },
      export: { ...exported.value, cpu_ms: exportCpu },
      cpu_limit_ms: CPU_LIMIT_MS,
    };
  } finally {
    await server.stop();
  }
}
