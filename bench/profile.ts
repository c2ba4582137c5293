/**
 * Where a tool call's CPU goes on the server: a fresh `wrangler dev` whose Worker process runs
 * with V8's perf map, one SDK v2 client, an approved device. After a warm-up, for each call
 * shape (GET /health, log_milestone, a signed complete_task of 100 files on a task started with
 * a signed snapshot), the CPU time each server process spent per call (bench/lib/process-cpu.ts)
 * while `perf record -g` samples the Worker's process; its samples are sorted into the stages of
 * a tool call (bench/lib/perf-stacks.ts) and the Worker's CPU per call is split by their shares.
 * Then the wall time the Worker's thread spends in fsync per log_milestone (strace -T): each
 * write's commit waits for the local disk, which no CPU figure shows. Needs `perf` (linux-perf),
 * `strace` and permission to record the process.
 *
 *   npx node bench/profile.ts [--calls 300] [--signed 40] [--json out.json] [--keep dir]
 *
 * --keep: the perf recordings (one per shape, `<n>.data`) and V8's perf map are copied there, for
 * `perf report -i dir/1.data --no-children --sort symbol` (which functions, not only which stages).
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { healthRoundTrip } from "../test/support/agents.ts";
import { startDevServer, workerdPid } from "../test/support/dev-server.ts";
import { connect, ok } from "../test/support/mcp-client.ts";
import { summarize } from "../test/support/stats.ts";
import { approvedDevice, loadDeviceKeys } from "./lib/device-keys.ts";
import { recordPerf, stageShares } from "./lib/perf-stacks.ts";
import { cpuDuring } from "./lib/process-cpu.ts";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "300" },
    signed: { type: "string", default: "40" },
    json: { type: "string" },
    keep: { type: "string" },
  },
});
const calls = Number(values.calls);
const signedCount = Number(values.signed);
const HEAD = "c".repeat(40);
const WORKER = "worker (workerd)";

/** What the helper sends for `files` files added and left uncommitted during a task (git). */
function gitChanges(prefix: string, files: number) {
  const dirty = Array.from({ length: files }, (_, k) => ({
    path: `${prefix}/file-${k}.ts`,
    head: null,
    worktree: { mode: "100644", blob: (k + 1).toString(16).padStart(40, "a") },
  }));
  return { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty };
}

interface Shape {
  label: string;
  n: number;
  /** CPU ms per call by process. */
  cpu: Record<string, number>;
  /** The Worker process's CPU per call split by stage, ms. */
  stages: Record<string, number>;
}

const keys = await loadDeviceKeys();
const { nonceOf } = keys;
// V8 writes /tmp/perf-<pid>.map, which perf reads to name JavaScript frames.
// Its code-event log goes nowhere (V8 would write one isolate-*.log per isolate into the working directory).
process.env.MINIFLARE_WORKERD_V8_FLAGS = "--perf-basic-prof --logfile=/dev/null --no-logfile-per-isolate";
const server = await startDevServer();
const port = Number(new URL(server.url).port);
const scratch = mkdtempSync(join(tmpdir(), "waymark-profile-"));
const shapes: Shape[] = [];
let fsync: Record<string, unknown> | null = null;
let perfMap = "";
try {
  const client = await connect(server, { negotiation: "auto", name: "profile" });
  const device = await approvedDevice(server, keys);
  const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Profile" });
  const signedTask = async (i: number) => {
    const start = await device.signSnapshot({ type: "git", head: HEAD, branch: "main", dirty: [] }, wf.workflow_id);
    const task = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id: wf.workflow_id,
      name: `T${i}`,
      goal: "g",
      snapshot: start,
    });
    return { taskId: task.task_id, nonce: nonceOf(start) };
  };
  // Tasks are made before each measured loop: only the measured calls run while measuring.
  const logTasks = async (count: number) => {
    const tasks = [];
    for (let i = 0; i < Math.ceil(count / 150); i++) tasks.push((await signedTask(i)).taskId);
    return tasks;
  };
  const completions = async (count: number, from: number) => {
    const inputs = [];
    for (let i = 0; i < count; i++) {
      const task = await signedTask(from + i);
      const changes = await device.signChanges(gitChanges(`src/p${from + i}`, 100), null, task.taskId, task.nonce);
      inputs.push({ task_id: task.taskId, status: "success", outcome: { summary: "s" }, changes });
    }
    return inputs;
  };
  /** Runs `n` calls, each after its untimed `prepare`: CPU and perf samples count the calls only. */
  const measure = async <P>(label: string, n: number, prepare: (i: number) => Promise<P>, call: (prepared: P) => Promise<unknown>) => {
    const file = join(scratch, `${shapes.length}.data`);
    const perf = await recordPerf(port, file, scratch);
    perfMap = `/tmp/perf-${perf.pid}.map`;
    const totals: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const prepared = await prepare(i);
      await perf.sampling(true);
      const { cpuMs } = await cpuDuring(port, () => call(prepared));
      await perf.sampling(false);
      for (const [role, ms] of Object.entries(cpuMs)) totals[role] = (totals[role] ?? 0) + ms;
    }
    await perf.stop();
    const cpu = Object.fromEntries(Object.entries(totals).map(([role, ms]) => [role, ms / n]));
    const { shares } = await stageShares(file);
    const stages = Object.fromEntries(Object.entries(shares).map(([stage, share]) => [stage, share * (cpu[WORKER] ?? 0)]));
    shapes.push({ label, n, cpu, stages });
  };
  // Warm-up: the code compiled and optimized, the objects open.
  for (const taskId of await logTasks(150))
    for (let i = 0; i < 100; i++) await ok(client, "log_milestone", { task_id: taskId, message: "m", progress: 50 });
  for (const input of await completions(10, 1000)) await ok(client, "complete_task", input);

  const none = async () => null;
  await measure("GET /health", calls, none, () => healthRoundTrip(server));
  const tasks = await logTasks(calls);
  await measure(
    "log_milestone",
    calls,
    async (i) => tasks[Math.floor(i / 150)] as string,
    (task_id) => ok(client, "log_milestone", { task_id, message: "m", progress: 50 }),
  );
  // Each task started (signed) just before its completion, as an agent's are: no task is open beside it.
  await measure(
    "complete_task, signed, 100 files",
    signedCount,
    async (i) => (await completions(1, 2000 + i))[0] as Record<string, unknown>,
    (input) => ok(client, "complete_task", input),
  );
  // The wall time the Worker's thread spends in fsync per log_milestone (the commit's durability on
  // this disk; strace -T times each call), beside the calls' own latency.
  const fsyncTasks = await logTasks(calls);
  const fsyncFile = join(scratch, "fsync.txt");
  const workerPid = workerdPid(port);
  if (workerPid !== null) {
    const strace = spawn("strace", ["-f", "-T", "-e", "trace=fsync,fdatasync", "-p", String(workerPid), "-o", fsyncFile], {
      stdio: "ignore",
    });
    await new Promise((r) => setTimeout(r, 1000));
    const latencies: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await ok(client, "log_milestone", { task_id: fsyncTasks[Math.floor(i / 150)], message: "m", progress: 50 });
      latencies.push(performance.now() - t0);
    }
    strace.kill("SIGINT");
    await new Promise((r) => strace.once("exit", r));
    const durations = readFileSync(fsyncFile, "utf8")
      .split("\n")
      .flatMap((line) => {
        const match = /f(?:data)?sync\(.*<([\d.]+)>$/.exec(line);
        return match ? [Number(match[1]) * 1000] : [];
      });
    const s = summarize(durations);
    fsync = {
      calls,
      fsyncs_per_call: durations.length / calls,
      fsync_ms: { median: s.median, p95: s.p95, mean: s.mean },
      fsync_ms_per_call: durations.reduce((a, b) => a + b, 0) / calls,
      latency_ms: summarize(latencies),
    };
  }
  await client.close();
} finally {
  await server.stop();
  if (values.keep) {
    mkdirSync(values.keep, { recursive: true });
    for (const name of readdirSync(scratch).filter((n) => n.endsWith(".data"))) copyFileSync(join(scratch, name), join(values.keep, name));
    if (perfMap) copyFileSync(perfMap, join(values.keep, perfMap.replace("/tmp/", "")));
  }
  rmSync(scratch, { recursive: true, force: true });
  if (perfMap) rmSync(perfMap, { force: true });
}

const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
for (const shape of shapes) {
  console.log(
    `\n${shape.label} (n=${shape.n}): CPU per call ${Object.entries(shape.cpu)
      .map(([role, ms]) => `${role} ${us(ms)}`)
      .join(", ")}`,
  );
  for (const [stage, ms] of Object.entries(shape.stages).sort((a, b) => b[1] - a[1])) {
    console.log(`  ${us(ms).padStart(8)}  ${stage}`);
  }
}
if (fsync) {
  const f = fsync as {
    fsyncs_per_call: number;
    fsync_ms: { median: number; p95: number };
    fsync_ms_per_call: number;
    latency_ms: { median: number };
  };
  console.log(
    `\nlog_milestone under strace (n=${calls}): ${f.fsyncs_per_call.toFixed(2)} fsync per call, each ${f.fsync_ms.median.toFixed(2)} ms median ` +
      `(p95 ${f.fsync_ms.p95.toFixed(2)} ms): ${f.fsync_ms_per_call.toFixed(2)} ms of the thread's wall time per call, of a ${f.latency_ms.median.toFixed(2)} ms median call`,
  );
}
if (values.json)
  writeFileSync(values.json, `${JSON.stringify({ load_average: (await import("node:os")).loadavg(), shapes, fsync }, null, 2)}\n`);
