/**
 * What migrating an existing workflow to this build's schema costs: the build before the last
 * workflow migration (bench/lib/old-build.ts) fills workflows on a `wrangler dev` persisted to a
 * directory (one at its byte quota, as the quota section fills it; one of a typical size), then
 * this build's `wrangler dev` starts on the same directory and each workflow's first request (its
 * share page) is timed: wall time, the Worker process's CPU (bench/lib/process-cpu.ts, an upper
 * bound of the object's own) and the rows the migration wrote (the meter's "schema" rows). The
 * migration runs inside that first request (the object's constructor), so its CPU is held to the
 * platform's CPU limit per request; a second request of the same page is the baseline.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toolCaller } from "../../test/pages/fixture.ts";
import { startDevServer } from "../../test/support/dev-server.ts";
import { type FilledWorkflow, fillToQuota, recordWideWorkflow } from "../../test/support/wide-workflow.ts";
import type { BenchContext } from "../lib/context.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { cpuDuring } from "../lib/process-cpu.ts";
import { ms } from "../lib/table.ts";

const WORKER = "worker (workerd)";
/** Cloudflare Workers' default CPU time limit per request (wrangler.toml sets no other). */
const CPU_LIMIT_MS = 30_000;
/** The build before workflow migration 24 (main's first parent of the merge that added it). */
export const BEFORE_MIGRATION_24 = "bf7bc19";

interface MeterReading {
  objects: { workflow: { rows_written: number; written_by_table: Record<string, number> } };
}

async function readMeter(url: string): Promise<MeterReading> {
  return (await (await fetch(`${url}/meter`)).json()) as MeterReading;
}

/** A share page fetched whole; throws unless it answered 200. */
async function fetchPage(url: string): Promise<{ ms: number; bytes: number; html: string }> {
  const t0 = performance.now();
  const response = await fetch(url);
  const html = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return { ms: performance.now() - t0, bytes: html.length, html };
}

export async function migration(context: BenchContext, vars: Record<string, string>, oldRef = BEFORE_MIGRATION_24): Promise<void> {
  const files = context.quick ? 5_000 : 20_000;
  const typical = { tasks: 50, files: 20 };
  const old = checkOutOldBuild(oldRef);
  const persistTo = mkdtempSync(join(tmpdir(), "waymark-migration-"));
  try {
    const token = `dev-token-${Math.random().toString(36).slice(2, 12)}`;
    context.log(`migration: filling workflows on ${oldRef} (${old.commit.slice(0, 7)})`);
    const before = await startDevServer({ root: old.dir, persistTo, token, vars });
    const filled: { shape: string; pathBytes: number; workflow: FilledWorkflow }[] = [];
    let small: Awaited<ReturnType<typeof recordWideWorkflow>>;
    try {
      const callTool = toolCaller(fetch, `${before.url}/mcp`, before.token);
      // The quota bench's shape (long paths), and short paths: the most file rows the quota holds.
      for (const pathBytes of [200, 40]) {
        const fillStarted = performance.now();
        const workflow = await fillToQuota(callTool, files, pathBytes);
        await callTool("complete_task", { task_id: workflow.openTaskId, status: "success", outcome: { summary: "Left open" } });
        // Completed, so the next fill's start_workflow (same name) starts a workflow instead of resuming this one.
        await callTool("complete_workflow", { workflow_id: workflow.workflowId, status: "success", summary: "Full" });
        filled.push({
          shape: `${workflow.taskIds.length} tasks of ${files.toLocaleString("en")} files, paths of ~${pathBytes} bytes`,
          pathBytes,
          workflow,
        });
        context.log(
          `migration: ${workflow.taskIds.length} tasks of ${files} files of ~${pathBytes}-byte paths fit (${((performance.now() - fillStarted) / 1000).toFixed(0)} s)`,
        );
      }
      small = await recordWideWorkflow(callTool, typical.tasks, typical.files);
      // The account pushes the old build scheduled (ACCOUNT_PUSH_DELAY_MS) done before it stops:
      // otherwise their alarms start (and migrate) the objects on this build before anything is timed.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
    } finally {
      await before.stop();
    }

    context.log("migration: this build on the same data");
    const after = await startDevServer({ persistTo, token, vars: { ...vars, WAYMARK_METER: "1" } });
    try {
      const port = Number(new URL(after.url).port);
      // The isolate warmed up first, so the first page's time is the object's.
      await fetch(`${after.url}/health`);
      const measure = async (oldShareUrl: string, expected: string) => {
        // The link as the old server made it, on this server's port.
        const shareUrl = new URL(new URL(oldShareUrl).pathname, after.url).href;
        const meterBefore = await readMeter(after.url);
        const first = await cpuDuring(port, () => fetchPage(shareUrl));
        const meterAfter = await readMeter(after.url);
        const second = await cpuDuring(port, () => fetchPage(shareUrl));
        if (!first.value.html.includes(expected)) context.fail(`migration: the migrated page of ${shareUrl} lacks "${expected}"`);
        const schemaRows =
          (meterAfter.objects.workflow.written_by_table.schema ?? 0) - (meterBefore.objects.workflow.written_by_table.schema ?? 0);
        return {
          first_ms: first.value.ms,
          first_cpu_ms: first.cpuMs[WORKER] ?? Number.NaN,
          second_ms: second.value.ms,
          second_cpu_ms: second.cpuMs[WORKER] ?? Number.NaN,
          schema_rows_written: schemaRows,
          rows_written: meterAfter.objects.workflow.rows_written - meterBefore.objects.workflow.rows_written,
        };
      };
      const share = (cpu: number) => `${((100 * cpu) / CPU_LIMIT_MS).toFixed(0)}% of the limit`;
      const atQuota: Record<string, Awaited<ReturnType<typeof measure>> & { shape: string }> = {};
      for (const [n, { shape, pathBytes, workflow }] of filled.entries()) {
        const measured = await measure(workflow.shareUrl, `Files changed (${files.toLocaleString("en-US")})`);
        atQuota[`paths_${pathBytes}`] = { shape, ...measured };
        context.table.add({
          area: n === 0 ? `workflow migration to this build's schema (from ${oldRef})` : undefined,
          measure: `first request of a workflow at the quota (${shape}): ${measured.schema_rows_written.toLocaleString("en")} rows written`,
          value: ms(measured.first_ms),
          floor: `CPU limit ${ms(CPU_LIMIT_MS)}; next request ${ms(measured.second_ms)}, CPU ${ms(measured.second_cpu_ms)}`,
          ratio: `Worker CPU ${ms(measured.first_cpu_ms)}: ${share(measured.first_cpu_ms)}`,
        });
      }
      const atTypical = await measure(small.shareUrl, `Files changed (${typical.files})`);
      // Nothing lost: the migrated typical workflow's export has every task with every file.
      const exported = (await (await fetch(new URL(`${new URL(small.shareUrl).pathname}/export.json`, after.url))).json()) as {
        tasks: { id: string; files_changed: { added: string[] } }[];
      };
      const complete = exported.tasks.filter((task) => task.files_changed.added.length === typical.files).length;
      if (complete !== typical.tasks)
        context.fail(`migration: ${complete} of ${typical.tasks} migrated tasks exported with all ${typical.files} files`);
      context.table.add({
        measure: `first request of a typical workflow (${typical.tasks} tasks of ${typical.files} files): ${atTypical.schema_rows_written.toLocaleString("en")} rows written`,
        value: ms(atTypical.first_ms),
        floor: `next request ${ms(atTypical.second_ms)}, CPU ${ms(atTypical.second_cpu_ms)}`,
        ratio: `Worker CPU ${ms(atTypical.first_cpu_ms)}: ${share(atTypical.first_cpu_ms)}`,
      });
      context.results.migration = {
        old_ref: oldRef,
        old_commit: old.commit,
        files_per_task: files,
        at_quota: atQuota,
        typical: { ...typical, ...atTypical },
        cpu_limit_ms: CPU_LIMIT_MS,
      };
      context.log(`migration: ${JSON.stringify(context.results.migration)}`);
    } finally {
      await after.stop();
    }
  } finally {
    rmSync(persistTo, { recursive: true, force: true });
    old.remove();
  }
}
