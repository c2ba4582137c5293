/**
 * Load against one fresh `wrangler dev` on 127.0.0.1:
 * 1. --agents concurrent agents (default 50), each running --workflows whole workflows of
 *     --tasks tasks (3 + 6 × tasks calls each; defaults give 50 × 2 × 21 = 2,100 calls): 0 errors,
 *     latency percentiles per tool, and every workflow read back consistent.
 * 2. --writers concurrent writers (default 50) on ONE workflow: milestones and decisions on two
 *     shared tasks, plus a subtask each: the event log is gap-free and every acknowledged write is there.
 * With --seconds N instead: one account driven by --agents agents, each in a workflow of its own
 *     running tasks back to back for N seconds (bench/lib/team-load.ts), on a server that meters
 *     itself: calls/s, latency, errors, and the account object's own throughput beside the
 *     workflow objects'.
 * Servers run as every throughput bench runs wrangler (bench/lib/load-server.ts: `--log-level warn`,
 * data on tmpfs); --log-level and --data disk|memory change either, to measure what each costs.
 * Bounded by its counts or its deadline; stops by itself.
 *
 *   npx node bench/load.ts [--agents 50] [--workflows 2] [--tasks 3] [--writers 50] [--writes 8] [--json out.json]
 *   npx node bench/load.ts --agents 1000 --seconds 180 [--perf] [--client wire|sdk] [--json out.json]
 *
 * --client (with --seconds): each agent a wire client (default: bench/lib/wire-client.ts, an SDK v2
 * client's requests at the cost of their bytes) or an SDK v2 client; the CPU per call of every
 * process is printed either way.
 *
 * --perf (needs linux-perf): the Worker process's CPU time during the run (bench/lib/process-cpu.ts),
 * and the share of it spent inside the account object's methods (perf samples,
 * bench/lib/perf-stacks.ts): the work one account object does for that load, which on Cloudflare
 * runs on the one thread of that object; and that CPU by method, per call of each.
 * With --seconds, the account pushes the outbox's rules predict from the agents' replies
 * (bench/lib/push-model.ts) are printed beside the metered ones.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type AgentConnect, loadAgents, loadWriters } from "../test/support/agents.ts";
import { type DevServerOptions, startDevServer } from "../test/support/dev-server.ts";
import { LOAD_SERVER } from "./lib/load-server.ts";
import { ACCOUNT_METHOD_STAGES, recordPerf, stageShares } from "./lib/perf-stacks.ts";
import { cpuDuring } from "./lib/process-cpu.ts";
import { teamLoad } from "./lib/team-load.ts";
import { wireClient } from "./lib/wire-client.ts";

const { values } = parseArgs({
  options: {
    agents: { type: "string", default: "50" },
    workflows: { type: "string", default: "2" },
    tasks: { type: "string", default: "3" },
    writers: { type: "string", default: "50" },
    writes: { type: "string", default: "8" },
    seconds: { type: "string" },
    /** With --seconds: record the Worker's process with perf, for the account object's share of its CPU. */
    perf: { type: "boolean", default: false },
    client: { type: "string", default: "wire" },
    /** wrangler's --log-level (`log` is `npm start`'s: a terminal line per request). */
    "log-level": { type: "string", default: LOAD_SERVER.logLevel },
    /** Where the server's throwaway data lives: `memory` (tmpfs) or `disk` (the system's temporary directory, as `npm start` keeps its data on disk). */
    data: { type: "string", default: "memory" },
    json: { type: "string" },
  },
});
const ms = (x: number) => `${x.toFixed(1)} ms`;
const LOG_LEVELS = ["debug", "info", "log", "warn", "error", "none"] as const;
const logLevel = LOG_LEVELS.find((level) => level === values["log-level"]);
if (logLevel === undefined) throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, not "${values["log-level"]}"`);
if (values.data !== "memory" && values.data !== "disk") throw new Error(`--data must be memory or disk, not "${values.data}"`);
const serverOptions: DevServerOptions = { logLevel, dataInMemory: values.data === "memory" };
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ");

if (values.seconds !== undefined) {
  if (values.perf) process.env.MINIFLARE_WORKERD_V8_FLAGS = "--perf-basic-prof --logfile=/dev/null --no-logfile-per-isolate";
  const server = await startDevServer({ ...serverOptions, vars: { WAYMARK_METER: "1" } });
  const port = Number(new URL(server.url).port);
  const before = load();
  const scratch = mkdtempSync(join(tmpdir(), "waymark-load-perf-"));
  let result: Awaited<ReturnType<typeof teamLoad>>;
  let accountCpu: { workerCpuMsPerSecond: number; accountShare: number; methodShares: Record<string, number> } | null = null;
  let cpuPerCall: Record<string, number> = {};
  try {
    const perf = values.perf ? await recordPerf(port, join(scratch, "load.data"), scratch, 199) : null;
    await perf?.sampling(true);
    const connectAgent: AgentConnect | undefined = values.client === "sdk" ? undefined : (target, i) => wireClient(target, `agent-${i}`);
    const run = await cpuDuring(port, () =>
      teamLoad(server, { agents: Number(values.agents), seconds: Number(values.seconds), connectAgent }),
    );
    cpuPerCall = Object.fromEntries(Object.entries(run.cpuMs).map(([role, cpu]) => [role, cpu / Math.max(1, run.value.calls)]));
    await perf?.sampling(false);
    await perf?.stop();
    result = run.value;
    if (perf) {
      // By method: a sample is the method's whose frame it holds; the account object's share is their sum.
      const { "other workerd (event loop, I/O, allocation)": _notAccount, ...methodShares } = (
        await stageShares(join(scratch, "load.data"), ACCOUNT_METHOD_STAGES)
      ).shares;
      accountCpu = {
        workerCpuMsPerSecond: (run.cpuMs["worker (workerd)"] ?? 0) / result.seconds,
        accountShare: Object.values(methodShares).reduce((sum, share) => sum + share, 0),
        methodShares,
      };
      rmSync(`/tmp/perf-${perf.pid}.map`, { force: true });
    }
  } finally {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
  console.log(
    `team: ${result.agents} agents, one account, ${result.calls} calls in ${result.seconds.toFixed(1)} s ` +
      `(${result.calls_per_second.toFixed(0)} calls/s), errors ${result.errors.length}, ` +
      `${result.checked} workflows read back, inconsistencies ${result.problems.length}; load average ${before} before, ${load()} after`,
  );
  console.log(
    `  CPU per call (read-back included): ${Object.entries(cpuPerCall)
      .map(([role, cpu]) => `${role} ${ms(cpu)}`)
      .join(", ")}`,
  );
  console.log(
    `  all calls: median ${ms(result.latency.median)}, p95 ${ms(result.latency.p95)}, p99 ${ms(result.latency.p99)}, max ${ms(result.latency.max)}`,
  );
  for (const [tool, s] of Object.entries(result.by_tool)) {
    console.log(`  ${tool.padEnd(18)} n=${String(s.n).padStart(6)} median ${ms(s.median)} p95 ${ms(s.p95)} p99 ${ms(s.p99)}`);
  }
  for (const [kind, t] of [
    ["account object", result.account],
    ["workflow objects", result.workflow],
  ] as const) {
    if (!t) continue;
    const methods = Object.entries(t.methods_per_second)
      .map(([name, n]) => `${name} ${n.toFixed(1)}/s`)
      .join(", ");
    console.log(
      `  ${kind}: ${t.requests_per_second.toFixed(1)} requests/s, ${t.rows_written_per_second.toFixed(0)} rows written/s, ` +
        `a call waited on ${ms(t.mean_call_ms)} on average (${methods})`,
    );
  }
  if (result.account && result.expected_pushes_per_second) {
    const metered = result.account.methods_per_second.recordWorkflow ?? 0;
    const { loop, window } = result.expected_pushes_per_second;
    const perCall = (n: number) => (n / result.calls_per_second).toFixed(2);
    console.log(
      `  account pushes: metered ${metered.toFixed(1)}/s (${perCall(metered)} a call); the outbox's rules on the agents' replies ` +
        `predict ${loop.toFixed(1)}/s (${perCall(loop)}) when a push ending with new events pushes again at once, ` +
        `${window.toFixed(1)}/s (${perCall(window)}) when the window's alarm takes them`,
    );
  }
  if (accountCpu) {
    const accountMs = accountCpu.workerCpuMsPerSecond * accountCpu.accountShare;
    const pushes = result.account?.methods_per_second.recordWorkflow ?? 0;
    console.log(
      `  CPU: the Worker process ${accountCpu.workerCpuMsPerSecond.toFixed(0)} ms/s, of which the account object's methods ` +
        `${(100 * accountCpu.accountShare).toFixed(1)}% (${accountMs.toFixed(1)} ms/s: ${(accountMs / 10).toFixed(1)}% of one thread` +
        `${pushes > 0 ? `; ${(accountMs / (result.account?.requests_per_second ?? 1)).toFixed(2)} ms per account request` : ""})`,
    );
    // Each method's CPU per call: its samples' share of the process's CPU over its calls from the meter.
    const perMethod = Object.entries(accountCpu.methodShares)
      .sort(([, a], [, b]) => b - a)
      .map(([method, share]) => {
        const cpuMsPerSecond = accountCpu.workerCpuMsPerSecond * share;
        const calls = result.account?.methods_per_second[method] ?? 0;
        return `${method} ${cpuMsPerSecond.toFixed(1)} ms/s${calls > 0 ? ` (${(cpuMsPerSecond / calls).toFixed(2)} ms a call)` : ""}`;
      });
    console.log(`  the account object's CPU by method: ${perMethod.join(", ")}`);
  }
  for (const p of [...result.errors, ...result.problems].slice(0, 20)) console.log(`  ${p}`);
  if (values.json) writeFileSync(values.json, `${JSON.stringify({ ...result, account_cpu: accountCpu }, null, 2)}\n`);
  process.exitCode = result.errors.length + result.problems.length > 0 ? 1 : 0;
} else {
  const server = await startDevServer(serverOptions);
  let result: { agents: Awaited<ReturnType<typeof loadAgents>>; writers: Awaited<ReturnType<typeof loadWriters>> };
  try {
    const agents = await loadAgents(server, {
      agents: Number(values.agents),
      workflows: Number(values.workflows),
      tasks: Number(values.tasks),
    });
    const writers = await loadWriters(server, { writers: Number(values.writers), writes: Number(values.writes) });
    result = { agents, writers };
  } finally {
    await server.stop();
  }
  const { agents, writers } = result;
  console.log(
    `agents: ${agents.agents} × ${agents.workflows} workflows → ${agents.calls} calls in ${agents.seconds.toFixed(1)} s ` +
      `(${(agents.calls / agents.seconds).toFixed(0)} calls/s), errors ${agents.errors.length}, inconsistencies ${agents.problems.length}`,
  );
  console.log(
    `  all calls: median ${ms(agents.latency.median)}, p95 ${ms(agents.latency.p95)}, p99 ${ms(agents.latency.p99)}, max ${ms(agents.latency.max)}`,
  );
  for (const [tool, s] of Object.entries(agents.byTool)) {
    console.log(`  ${tool.padEnd(18)} n=${String(s.n).padStart(5)} median ${ms(s.median)} p95 ${ms(s.p95)} p99 ${ms(s.p99)}`);
  }
  console.log(
    `writers: ${writers.writers} on one workflow → ${writers.calls} calls in ${writers.seconds.toFixed(1)} s, errors ${writers.errors.length}, ` +
      `events ${writers.events} (gap-free: ${writers.problems.length === 0 ? "yes" : "NO"}), median ${ms(writers.latency.median)}, p95 ${ms(writers.latency.p95)}, p99 ${ms(writers.latency.p99)}`,
  );
  for (const p of [...agents.errors, ...agents.problems, ...writers.errors, ...writers.problems].slice(0, 20)) console.log(`  ${p}`);
  if (values.json) writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
  process.exitCode = agents.errors.length + agents.problems.length + writers.errors.length + writers.problems.length > 0 ? 1 : 0;
}
