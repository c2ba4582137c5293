/**
 * Load against one fresh `wrangler dev` on 127.0.0.1:
 * 1. --agents concurrent agents (default 50), each running --workflows whole workflows of
 *     --tasks tasks (3 + 6 × tasks calls each; defaults give 50 × 2 × 21 = 2,100 calls): 0 errors,
 *     latency percentiles per tool, and every workflow read back consistent.
 * 2. --writers concurrent writers (default 50) on ONE workflow: milestones and decisions on two
 *     shared tasks, plus a subtask each: the event log is gap-free and every acknowledged write is there.
 * Bounded by its counts; stops by itself.
 *
 *   npx node bench/load.ts [--agents 50] [--workflows 2] [--tasks 3] [--writers 50] [--writes 8] [--json out.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadAgents, loadWriters } from "../test/support/agents.ts";
import { startDevServer } from "../test/support/dev-server.ts";

const { values } = parseArgs({
  options: {
    agents: { type: "string", default: "50" },
    workflows: { type: "string", default: "2" },
    tasks: { type: "string", default: "3" },
    writers: { type: "string", default: "50" },
    writes: { type: "string", default: "8" },
    json: { type: "string" },
  },
});
const server = await startDevServer();
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
const ms = (x: number) => `${x.toFixed(1)} ms`;
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
