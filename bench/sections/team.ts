/**
 * One account under many agents (bench/lib/team-load.ts), each on a server of its own that meters
 * itself: 50 agents for a minute (target: ≥ 500 calls/s on the machine's cores, 0 errors), then
 * 1,000 agents, each in a workflow of its own, for three minutes: calls/s, p99, errors, and the
 * account object's own throughput (its requests and rows written per second, the mean wait on it,
 * beside the workflow objects'). Where linux-perf is there, the Worker process is sampled during
 * the 1,000-agent run and the share of its CPU inside the account object's methods is reported:
 * the work one account's object does for that load, which on Cloudflare runs on that object's one
 * thread (docs/storage.md, "The account object's ceiling"). Each agent is a wire client
 * (bench/lib/wire-client.ts: an SDK v2 client's requests at the cost of their bytes), as each real
 * agent's client runs in a process of its own; the clients' CPU per call is reported beside the
 * servers'.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentConnect } from "../../test/support/agents.ts";
import { startDevServer } from "../../test/support/dev-server.ts";
import type { BenchContext } from "../lib/context.ts";
import { LOAD_SERVER } from "../lib/load-server.ts";
import { ACCOUNT_OBJECT_STAGES, recordPerf, stageShares } from "../lib/perf-stacks.ts";
import { cpuDuring } from "../lib/process-cpu.ts";
import { atLeast, count, ms, percentiles } from "../lib/table.ts";
import { type TeamLoadResult, teamLoad } from "../lib/team-load.ts";
import { wireClient } from "../lib/wire-client.ts";

const TARGET_CALLS_PER_SECOND = 500;
const WORKER = "worker (workerd)";

function hasPerf(): boolean {
  try {
    execFileSync("perf", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

interface Run {
  result: TeamLoadResult;
  load: string;
  workerCpuMsPerSecond: number;
  /** CPU ms per call of every process: the Worker's, wrangler's proxy and Node process, the clients' (read-back included). */
  cpuPerCall: Record<string, number>;
  /** Milliseconds per second the Worker's threads were ready to run and waited for a core (other load on the machine). */
  workerWaitMsPerSecond: number;
  accountShare: number | null;
}

async function run(context: BenchContext, vars: Record<string, string>, agents: number, seconds: number, withPerf: boolean): Promise<Run> {
  const perfOn = withPerf && hasPerf();
  const flags = process.env.MINIFLARE_WORKERD_V8_FLAGS;
  if (perfOn) process.env.MINIFLARE_WORKERD_V8_FLAGS = "--perf-basic-prof --logfile=/dev/null --no-logfile-per-isolate";
  const server = await startDevServer({ ...LOAD_SERVER, vars: { ...vars, WAYMARK_METER: "1" } });
  if (perfOn) process.env.MINIFLARE_WORKERD_V8_FLAGS = flags;
  const port = Number(new URL(server.url).port);
  const scratch = mkdtempSync(join(tmpdir(), "waymark-team-"));
  try {
    context.log(`team: ${agents} agents on one account for ${seconds} s (load average ${loadavg()[0]?.toFixed(1)})`);
    const perf = perfOn ? await recordPerf(port, join(scratch, "team.data"), scratch, 199) : null;
    await perf?.sampling(true);
    const connectAgent: AgentConnect = (target, i) => wireClient(target, `agent-${i}`);
    const measured = await cpuDuring(port, () => teamLoad(server, { agents, seconds, connectAgent }));
    await perf?.sampling(false);
    await perf?.stop();
    const result = measured.value;
    const accountShare = perf
      ? ((await stageShares(join(scratch, "team.data"), ACCOUNT_OBJECT_STAGES)).shares["account object"] ?? 0)
      : null;
    if (perf) rmSync(`/tmp/perf-${perf.pid}.map`, { force: true });
    for (const problem of [...result.errors, ...result.problems].slice(0, 5)) context.fail(`team load of ${agents} agents: ${problem}`);
    return {
      result,
      load: loadavg()
        .map((x) => x.toFixed(1))
        .join(" "),
      workerCpuMsPerSecond: (measured.cpuMs[WORKER] ?? 0) / result.seconds,
      cpuPerCall: Object.fromEntries(Object.entries(measured.cpuMs).map(([role, cpu]) => [role, cpu / Math.max(1, result.calls)])),
      workerWaitMsPerSecond: (measured.waitMs[WORKER] ?? 0) / result.seconds,
      accountShare,
    };
  } finally {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export async function team(context: BenchContext, vars: Record<string, string>): Promise<void> {
  const small = await run(context, vars, 50, context.quick ? 20 : 60, false);
  const large = await run(context, vars, context.quick ? 200 : 1000, context.quick ? 30 : 180, true);
  const cores = cpus().length;
  for (const [index, r] of [small, large].entries()) {
    const { result } = r;
    context.table.add({
      area: index === 0 ? "one account, many agents (a workflow each)" : "",
      measure: `${result.agents} agents for ${result.seconds.toFixed(0)} s: ${count(result.calls)} calls, ${result.calls_per_second.toFixed(0)} calls/s, errors ${result.errors.length}, ${result.checked} workflows read back, inconsistent ${result.problems.length}; load average after ${r.load}`,
      value: percentiles(result.latency),
      ratio: `CPU per call: ${Object.entries(r.cpuPerCall)
        .map(([role, cpu]) => `${role} ${ms(cpu)}`)
        .join(", ")}`,
      // The server's own capacity: the Worker process's CPU per call (the objects' included; wrangler's proxy and the clients apart).
      floor: `Worker process ${r.workerCpuMsPerSecond.toFixed(0)} ms CPU/s (${ms(r.workerCpuMsPerSecond / result.calls_per_second)} per call), waited ${r.workerWaitMsPerSecond.toFixed(0)} ms/s for a core`,
      target:
        index === 0
          ? atLeast(
              result.errors.length === 0 ? result.calls_per_second : 0,
              TARGET_CALLS_PER_SECOND,
              ` calls/s on ${cores} cores, 0 errors`,
            )
          : undefined,
    });
    for (const [kind, t] of [
      ["account object", result.account],
      ["workflow objects", result.workflow],
    ] as const) {
      if (!t) continue;
      const cpu =
        kind === "account object" && r.accountShare !== null
          ? `; its methods ${(r.accountShare * r.workerCpuMsPerSecond).toFixed(1)} ms CPU/s (${((100 * r.accountShare * r.workerCpuMsPerSecond) / 1000).toFixed(1)}% of one thread)`
          : "";
      context.table.add({
        measure: `  ${kind}: ${t.requests_per_second.toFixed(1)} requests/s, ${t.rows_written_per_second.toFixed(0)} rows written/s${cpu}`,
        value: `mean wait ${ms(t.mean_call_ms)}`,
        ratio: Object.entries(t.methods_per_second)
          .map(([name, n]) => `${name} ${n.toFixed(1)}/s`)
          .join(", "),
      });
    }
  }
  context.results.team = {
    target_calls_per_second: TARGET_CALLS_PER_SECOND,
    runs: [small, large].map((r) => ({ ...r, result: { ...r.result, by_tool: r.result.by_tool } })),
  };
}
