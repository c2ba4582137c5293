/**
 * Cost per write at any workflow size, and the bounded costs of a big workflow:
 * - log_milestone on workflows with 0 / 1,000 / 4,999 completed tasks (plus the one open task
 *   the milestones go to: 5,000 tasks is the per-workflow limit), interleaved in one run;
 *   target: the largest's median within 1.1x of the smallest's.
 * - the share page and the JSON export of the 5,000-task workflow: time, size, and the peak
 *   memory of the workerd process while serving it.
 * - the catch-up bytes one live socket receives from after=0, and after asking again ten times.
 * The workflows are built through the tools with idempotency keys (a failed call is retried
 * once with the same key, so a retry never doubles a task).
 */
import type { Client } from "@modelcontextprotocol/client";
import { checksumChanges, healthRoundTrip, pool, timed } from "../../test/support/agents.ts";
import { type DevServer, workerdPid } from "../../test/support/dev-server.ts";
import { connect } from "../../test/support/mcp-client.ts";
import { Recorder, type Summary, summarize } from "../../test/support/stats.ts";
import { type CatchUpBytes, measureCatchUp } from "../lib/catch-up.ts";
import type { BenchContext } from "../lib/context.ts";
import { Inspector, type IsolateHeap } from "../lib/isolate-heap.ts";
import { type PeakMemory, peakMemoryDuring } from "../lib/memory.ts";
import { atMost, bytes, count, ms, percentiles, times } from "../lib/table.ts";

const RATIO_TARGET = 1.1;

interface BuiltWorkflow {
  completed: number;
  workflowId: string;
  openTaskId: string;
  shareUrl: string;
}

/** A call that must succeed, retried once with the same arguments (and so the same idempotency key). */
async function must(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  try {
    return await timed(client, null, name, args);
  } catch {
    return await timed(client, null, name, args);
  }
}

async function buildWorkflow(context: BenchContext, clients: Client[], completed: number, runId: string): Promise<BuiltWorkflow> {
  const key = (what: string) => `${runId}-${completed}-${what}`;
  const first = clients[0] as Client;
  const wf = await must(first, "start_workflow", { name: `${completed} completed tasks`, idempotency_key: key("wf") });
  const workflowId = String(wf.workflow_id);
  const built = await pool(completed, clients.length, async (i) => {
    const client = clients[i % clients.length] as Client;
    const task = await must(client, "start_task", {
      workflow_id: workflowId,
      name: `Task ${i}`,
      goal: `Goal ${i}`,
      areas: ["src/**"],
      idempotency_key: key(`start-${i}`),
    });
    await must(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: `Done ${i}` },
      changes: checksumChanges(`src/t${i}`, 2),
      idempotency_key: key(`complete-${i}`),
    });
    if ((i + 1) % 500 === 0) context.log(`growth: ${count(i + 1)} of ${count(completed)} tasks built`);
  });
  const failed = built.find((r) => r.status === "rejected");
  if (failed) throw new Error(`building a workflow of ${completed} tasks failed: ${String((failed as PromiseRejectedResult).reason)}`);
  const open = await must(first, "start_task", {
    workflow_id: workflowId,
    name: "Open",
    goal: "takes the milestones",
    idempotency_key: key("open"),
  });
  return { completed, workflowId, openTaskId: String(open.task_id), shareUrl: String(wf.share_url) };
}

interface Serving {
  bytes: number;
  time: Summary;
  /** The Worker isolate's heap, sampled through the inspector (null when it could not be read). */
  isolate: IsolateHeap | null;
  isolateError?: string;
  /** The workerd process running the Worker: resident set before the first request, peak over all. */
  process: PeakMemory | null;
}

/**
 * `gets` timed GETs of `url` on a freshly restarted server (same data), after one GET of
 * `warmUrl` (a small workflow) has loaded the Worker's code: the memory figures then show
 * what serving the big workflow costs, not what the run before left behind.
 */
async function measureServing(server: DevServer, url: string, warmUrl: string, gets: number): Promise<Serving> {
  await server.restart();
  await (await fetch(warmUrl)).arrayBuffer();
  const pid = workerdPid(Number(new URL(server.url).port));
  let inspector: Inspector | null = null;
  let isolateError: string | undefined;
  try {
    inspector = await Inspector.open(server.inspectorUrl());
  } catch (error) {
    isolateError = error instanceof Error ? error.message : String(error);
  }
  const durations: number[] = [];
  let size = 0;
  let isolate = null as IsolateHeap | null;
  let workerd = null as PeakMemory | null;
  const fetchOnce = async () => {
    const t0 = performance.now();
    const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
    const body = await response.arrayBuffer();
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    return { ms: performance.now() - t0, size: body.byteLength };
  };
  const withHeap = async () => {
    if (!inspector) return await fetchOnce();
    const { value, heap } = await inspector.during(fetchOnce);
    if (!isolate) isolate = heap;
    else {
      isolate.peakUsed = Math.max(isolate.peakUsed, heap.peakUsed);
      isolate.peakTotal = Math.max(isolate.peakTotal, heap.peakTotal);
      isolate.samples += heap.samples;
    }
    return value;
  };
  try {
    for (let i = 0; i < gets; i++) {
      const measured = pid === null ? { value: await withHeap(), memory: null } : await peakMemoryDuring(pid, withHeap);
      durations.push(measured.value.ms);
      size = measured.value.size;
      if (measured.memory) {
        // Growth over what the restarted process held before the first big request.
        workerd = workerd ? { ...workerd, peak: Math.max(workerd.peak, measured.memory.peak) } : measured.memory;
      }
    }
  } finally {
    inspector?.close();
  }
  return { bytes: size, time: summarize(durations), isolate, isolateError, process: workerd };
}

export async function growth(context: BenchContext, server: DevServer): Promise<void> {
  const sizes = context.quick ? [0, 200, 1000] : [0, 1000, 4999];
  const samples = context.quick ? 30 : 100;
  const runId = `bench-${Date.now().toString(36)}`;
  const clients = await Promise.all(Array.from({ length: 6 }, () => connect(server, { negotiation: "auto" })));
  const started = performance.now();
  context.log(`growth: building workflows of ${sizes.join(" / ")} completed tasks${context.quick ? " (--quick sizes)" : ""}`);
  // The three are built side by side (each workflow is its own object); progress goes to stderr.
  const workflows = await Promise.all(sizes.map((n) => buildWorkflow(context, clients, n, runId)));
  const buildSeconds = (performance.now() - started) / 1000;
  context.log(`growth: built in ${buildSeconds.toFixed(0)} s`);

  // log_milestone on each, interleaved (the order rotates so no workflow always goes first).
  const client = clients[0] as Client;
  const recorder = new Recorder();
  for (let i = -5; i < samples; i++) {
    const health = await healthRoundTrip(server);
    if (i >= 0) recorder.add("health", health);
    for (let k = 0; k < workflows.length; k++) {
      const wf = workflows[(i + 5 + k) % workflows.length] as BuiltWorkflow;
      const t0 = performance.now();
      await timed(client, null, "log_milestone", { task_id: wf.openTaskId, message: `sample ${i}` });
      if (i >= 0) recorder.add(String(wf.completed), performance.now() - t0);
    }
  }
  const summaries = recorder.summaries();
  const health = summaries.health as Summary;
  const smallest = summaries[String(sizes[0])] as Summary;
  const largest = summaries[String(sizes.at(-1))] as Summary;
  for (const [i, n] of sizes.entries()) {
    const s = summaries[String(n)] as Summary;
    const last = i === sizes.length - 1;
    context.table.add({
      area: i === 0 ? `log_milestone vs workflow size${context.quick ? " (--quick sizes)" : ""}` : "",
      measure: `${count(n)} completed tasks, n=${s.n}${i === 0 ? " (floor: GET /health)" : ` (floor: ${count(sizes[0] ?? 0)} tasks)`}`,
      value: percentiles(s),
      floor: i === 0 ? ms(health.median) : ms(smallest.median),
      ratio: i === 0 ? times(s.median, health.median) : times(s.median, smallest.median),
      target: last ? atMost(largest.median / smallest.median, RATIO_TARGET, "x") : undefined,
    });
  }

  // The biggest workflow's page and export: time, size, and workerd's peak memory.
  const big = workflows.at(-1) as BuiltWorkflow;
  const gets = context.quick ? 3 : 5;
  const small = workflows[0] as BuiltWorkflow;
  const served: Record<string, Serving> = {};
  for (const [label, suffix] of [
    ["share page", ""],
    ["export.json", "/export.json"],
  ] as const) {
    context.log(`growth: restarting the server before measuring the ${label}`);
    const serving = await measureServing(server, `${big.shareUrl}${suffix}`, `${small.shareUrl}${suffix}`, gets);
    served[label] = serving;
    const s = serving.time;
    context.table.add({
      area: label === "share page" ? `${count(big.completed + 1)}-task workflow` : "",
      measure: `GET ${label} (${bytes(serving.bytes)}), n=${s.n}`,
      value: percentiles(s),
      floor: ms(health.median),
      ratio: times(s.median, health.median),
    });
    const heap = serving.isolate;
    context.table.add({
      measure: "  Worker isolate heap (V8, via inspector)",
      value: heap
        ? `used ${bytes(heap.before.usedSize)} → peak ${bytes(heap.peakUsed)}; committed ${bytes(heap.before.totalSize)} → ${bytes(heap.peakTotal)}`
        : `not measurable: ${serving.isolateError ?? "unknown"}`,
    });
    const proc = serving.process;
    context.table.add({
      measure: "  workerd process (VmHWM)",
      value: proc ? `+${bytes(proc.peak - proc.before)} above ${bytes(proc.before)} resident (${proc.method})` : "workerd not found",
    });
  }

  // One live socket: catch-up from 0, then ten {"after":0}. A failure here is reported in its
  // row; the figures above stay.
  let catchUp: CatchUpBytes | { error: string };
  try {
    catchUp = await measureCatchUp(big.shareUrl, { resends: 10, idleMs: 3000, deadlineMs: 120_000 });
    context.table.add({
      area: "live socket on that workflow",
      measure: `catch-up from after=0 (${count(catchUp.events)} events, ${catchUp.pages + 1} page(s))`,
      value: bytes(catchUp.first),
    });
    context.table.add({
      measure: `then ${catchUp.resends} × {"after":0} (${catchUp.resendCatchUps} caught_up answered)`,
      value: bytes(catchUp.afterResends),
      floor: bytes(catchUp.first),
      ratio: times(catchUp.afterResends, catchUp.first),
    });
  } catch (error) {
    catchUp = { error: error instanceof Error ? error.message : String(error) };
    context.fail(`catch-up: ${catchUp.error}`);
    context.table.add({ area: "live socket on that workflow", measure: "catch-up failed (see PROBLEM)", value: "" });
  }
  context.results.growth = {
    sizes,
    build_seconds: buildSeconds,
    log_milestone: summaries,
    ratio_largest_smallest: largest.median / smallest.median,
    ratio_target: RATIO_TARGET,
    big_workflow: served,
    catch_up: catchUp,
  };
  await Promise.all(clients.map((c) => c.close()));
}
