/**
 * Waymark's own cost per tool call as an A/B in one run: this build and an old build served side
 * by side (fresh servers, empty data), one SDK v2 client each, one call at a time, the two sides
 * taking turns call by call (A B, then B A) so drift in machine load hits both alike. Own cost is a
 * tool's median minus the /health median measured in the same turns. Separate bench runs of two
 * builds differ by more than the builds do (a fresh `wrangler dev` per run moves even the
 * /health floor by milliseconds): only this comparison says whether a change made calls dearer.
 */

import { healthRoundTrip, timed } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { connect } from "../../test/support/mcp-client.ts";
import { Recorder, type Summary } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { ms, percentiles } from "../lib/table.ts";

const FLOOR = "GET /health (floor)";
const TOOLS = ["log_decision", "log_issue", "log_milestone", "get_workflow"] as const;

export async function costAB(context: BenchContext, vars: Record<string, string>, oldRef: string): Promise<void> {
  const rounds = context.quick ? 60 : 200;
  context.log(`own cost A/B: checking out ${oldRef}`);
  const old = checkOutOldBuild(oldRef);
  const servers: DevServer[] = [];
  try {
    servers.push(await startDevServer({ vars }), await startDevServer({ root: old.dir, vars }));
    const sides = await Promise.all(
      servers.map(async (server, index) => {
        const client = await connect(server, { negotiation: "auto", name: "cost-ab" });
        const wf = await timed(client, null, "start_workflow", { name: "Cost A/B" });
        const task = await timed(client, null, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g" });
        return {
          label: index === 0 ? "this build" : `old build ${oldRef} (${old.commit.slice(0, 7)})`,
          server,
          client,
          ids: { workflow_id: String(wf.workflow_id), task_id: String(task.task_id) },
          recorder: new Recorder(),
        };
      }),
    );
    const turn = async (side: (typeof sides)[number], index: number, record: boolean) => {
      // A task takes at most 200 logs of one kind: a fresh one (not timed) every 150 turns.
      if (index > 0 && index % 150 === 0) {
        side.ids.task_id = String(
          (await timed(side.client, null, "start_task", { workflow_id: side.ids.workflow_id, name: `T${index}`, goal: "g" })).task_id,
        );
      }
      const rec = record ? side.recorder : null;
      rec?.add(FLOOR, await healthRoundTrip(side.server));
      const { task_id, workflow_id } = side.ids;
      await timed(side.client, rec, "log_decision", { task_id, category: "trade_off", question: "q", chosen: "a", reasoning: "r" });
      await timed(side.client, rec, "log_issue", { task_id, type: "bug_encountered", description: "d", resolution: "r" });
      await timed(side.client, rec, "log_milestone", { task_id, message: "m", progress: 50 });
      await timed(side.client, rec, "get_workflow", { workflow_id });
    };
    context.log(`own cost A/B: ${rounds} turns per side, alternating`);
    for (let i = 0; i < 20 + rounds; i++) {
      const order = i % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) await turn(side, i, i >= 20);
    }
    const results: Record<string, Record<string, number>> = {};
    for (const [index, side] of sides.entries()) {
      await side.client.close();
      const summaries = side.recorder.summaries();
      const floor = summaries[FLOOR] as Summary;
      context.table.add({
        area: index === 0 ? "own cost per call, A/B in one run" : "",
        measure: `${side.label}: GET /health, n=${floor.n}`,
        value: percentiles(floor),
      });
      results[side.label] = { floor_ms: floor.median };
      for (const tool of TOOLS) {
        const s = summaries[tool] as Summary;
        (results[side.label] as Record<string, number>)[tool] = s.median - floor.median;
        context.table.add({
          measure: `${side.label}: ${tool} median − /health median`,
          value: ms(s.median - floor.median),
          floor: ms(floor.median),
        });
      }
    }
    context.results.cost_ab = { rounds, old_ref: oldRef, old_commit: old.commit, own_cost_ms: results };
  } finally {
    for (const server of servers) await server.stop();
    old.remove();
  }
}
