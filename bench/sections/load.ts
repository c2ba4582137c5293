/**
 * Load as an A/B in one run: concurrent agents, each running whole workflows (start_workflow;
 * per task start_task, log_decision, log_issue, two log_milestone, complete_task with files;
 * get_workflow; complete_workflow), against this build and against an old build served side by
 * side from a temporary checkout, both on fresh servers with empty data. After a warm-up of both,
 * rounds alternate A B B A so drift in machine load hits both alike (A B B A A B B A at full size).
 * 0 errors and every workflow read back consistent; calls/s and p99 per side; targets: this
 * build ≥ 1.5x the old build's calls/s, and ≥ 500 calls/s with 0 errors. Both servers run as every
 * throughput bench runs wrangler (bench/lib/load-server.ts: no per-request log line, data on
 * tmpfs: two costs of `wrangler dev` that no deployment pays on the Worker's cores). Each agent is a wire client (bench/lib/wire-client.ts: an
 * SDK v2 client's requests at the cost of their bytes), so the bench's one client process is not
 * what limits the run; the CPU each process spent per call — the Worker's, wrangler's proxy's and
 * Node's, and the clients' — is reported per side (bench/lib/process-cpu.ts), with the share of a
 * core the client process took (near 1.0 would mean its one thread was the limit).
 */
import { cpus, loadavg } from "node:os";
import { type AgentConnect, type AgentsResult, loadAgents } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { LOAD_SERVER } from "../lib/load-server.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { cpuMeter } from "../lib/process-cpu.ts";
import { atLeast, count, percentiles, times } from "../lib/table.ts";
import { wireClient } from "../lib/wire-client.ts";

const TARGET = 1.5;
/** The absolute target for 50 agents on the machine's cores (full size only: the quick run has 10 agents). */
const TARGET_CALLS_PER_SECOND = 500;

interface Side {
  label: string;
  rounds: AgentsResult[];
  /** CPU ms each process spent over every round, by role, and the rounds' wall seconds. */
  cpuMs: Record<string, number>;
}

const CLIENT = "client (this node)";
const wireAgent: AgentConnect = (target, i) => wireClient(target, `agent-${i}`);

export async function loadAB(context: BenchContext, vars: Record<string, string>, oldRef: string): Promise<void> {
  const agents = context.quick ? 10 : 50;
  // Full size: 50 agents × 4 rounds × 21 calls = 4,200 calls per side; short alternating rounds
  // keep the load other processes put on the machine from favouring one side.
  const roundsPerSide = context.quick ? 2 : 4;
  const tasks = 3;
  context.log(`load A/B: checking out ${oldRef}`);
  const old = checkOutOldBuild(oldRef);
  let current: DevServer | null = null;
  let oldServer: DevServer | null = null;
  try {
    // Both sides on fresh servers with empty data: the server the other sections used holds a
    // 5,000-task workflow and an account index thousands of documents larger than the old
    // build's, which made every related-work query and account push of this build dearer.
    // Both as the throughput benches run wrangler (bench/lib/load-server.ts: no per-request log line, data on tmpfs).
    current = await startDevServer({ ...LOAD_SERVER, vars });
    oldServer = await startDevServer({ ...LOAD_SERVER, root: old.dir, vars });
    const a: Side = { label: "this build", rounds: [], cpuMs: {} };
    const b: Side = { label: `old build ${oldRef} (${old.commit.slice(0, 7)})`, rounds: [], cpuMs: {} };
    // Both servers warm (first requests compile the Worker and open its storage) before any round counts.
    for (const server of [current, oldServer])
      await loadAgents(server, { agents: Math.max(2, agents / 5), workflows: 1, tasks: 1, connectAgent: wireAgent });
    const order = Array.from({ length: roundsPerSide }, (_, r) => (r % 2 === 0 ? [a, b] : [b, a])).flat();
    for (const side of order) {
      const server = side === a ? current : oldServer;
      context.log(`load A/B: ${agents} agents on ${side.label}`);
      const port = Number(new URL(server.url).port);
      const spent = cpuMeter(port);
      let cpuMs: Record<string, number> = {};
      side.rounds.push(
        await loadAgents(server, { agents, workflows: 1, tasks, connectAgent: wireAgent, afterCalls: () => ({ cpuMs } = spent()) }),
      );
      for (const [role, cpu] of Object.entries(cpuMs)) side.cpuMs[role] = (side.cpuMs[role] ?? 0) + cpu;
    }
    const summary = (side: Side) => {
      const calls = side.rounds.reduce((n, r) => n + r.calls, 0);
      const seconds = side.rounds.reduce((n, r) => n + r.seconds, 0);
      const errors = side.rounds.flatMap((r) => r.errors);
      const problems = side.rounds.flatMap((r) => r.problems);
      // Percentiles over every call of every round (each round's samples are kept by tool).
      const latency = summarize(side.rounds.flatMap((r) => r.samples));
      // CPU per call by process (while the agents called: the read-back after each round apart), and the client's share of one core.
      const cpuPerCall = Object.fromEntries(Object.entries(side.cpuMs).map(([role, cpu]) => [role, cpu / calls]));
      const clientCores = (side.cpuMs[CLIENT] ?? 0) / 1000 / seconds;
      return { label: side.label, calls, seconds, callsPerSecond: calls / seconds, errors, problems, latency, cpuPerCall, clientCores };
    };
    const sa = summary(a);
    const sb = summary(b);
    for (const s of [sa, sb]) {
      for (const problem of [...s.errors, ...s.problems].slice(0, 5)) context.fail(`load on ${s.label}: ${problem}`);
    }
    context.table.add({
      area: `load A/B, ${agents} concurrent agents`,
      measure: `this build: ${count(sa.calls)} calls, ${sa.callsPerSecond.toFixed(0)} calls/s, errors ${sa.errors.length}, inconsistent ${sa.problems.length}`,
      value: percentiles(sa.latency),
      floor: `${sb.callsPerSecond.toFixed(0)} calls/s`,
      ratio: times(sa.callsPerSecond, sb.callsPerSecond),
      target: atLeast(sa.callsPerSecond / sb.callsPerSecond, TARGET, "x calls/s"),
    });
    context.table.add({
      measure: `${sb.label}: ${count(sb.calls)} calls, ${sb.callsPerSecond.toFixed(0)} calls/s, errors ${sb.errors.length}, inconsistent ${sb.problems.length}`,
      value: percentiles(sb.latency),
      ratio: `p99 ${times(sa.latency.p99, sb.latency.p99)}`,
    });
    if (!context.quick) {
      context.table.add({
        measure: `this build, ${agents} agents: calls/s with 0 errors and 0 inconsistent (load average ${loadavg()[0]?.toFixed(1)} after)`,
        value: `${sa.callsPerSecond.toFixed(0)} calls/s`,
        target: atLeast(
          sa.errors.length + sa.problems.length === 0 ? sa.callsPerSecond : 0,
          TARGET_CALLS_PER_SECOND,
          ` calls/s on ${cpus().length} cores, 0 errors`,
        ),
      });
    }
    for (const s of [sa, sb]) {
      context.table.add({
        measure: `${s.label}: CPU per call by process; the client process took ${s.clientCores.toFixed(2)} of a core`,
        value: Object.entries(s.cpuPerCall)
          .map(([role, cpu]) => `${role} ${cpu.toFixed(2)} ms`)
          .join(", "),
      });
    }
    context.results.load_ab = {
      agents,
      rounds_per_side: roundsPerSide,
      tasks_per_workflow: tasks,
      old_ref: oldRef,
      old_commit: old.commit,
      this_build: { ...sa, p99_ms: sa.latency.p99 },
      old_build: { ...sb, p99_ms: sb.latency.p99 },
      ratio_calls_per_second: sa.callsPerSecond / sb.callsPerSecond,
      target: TARGET,
      order: order.map((side) => side.label),
    };
  } finally {
    await current?.stop();
    await oldServer?.stop();
    old.remove();
  }
}
