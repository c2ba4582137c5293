/**
 * Per-tool latency through `wrangler dev` with the official SDK v2 client, one call at a
 * time, against a GET /health round trip through the same server (interleaved, so drift hits
 * both). Waymark's own cost per log_* call is the tool's median minus the /health median.
 */
import { checksumChanges, healthRoundTrip, timed } from "../../test/support/agents.ts";
import { connect, type McpTarget } from "../../test/support/mcp-client.ts";
import { Recorder, type Summary } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { atMost, ms, percentiles, times } from "../lib/table.ts";

const FLOOR = "GET /health (floor)";
const OWN_COST_TARGET_MS = 5;

/** Returns the per-tool summaries (the live-update section compares with log_milestone). */
export async function toolLatency(context: BenchContext, server: McpTarget): Promise<Record<string, Summary>> {
  const calls = context.quick ? 50 : 200;
  context.log(`tool latency: ${calls} calls per tool`);
  const client = await connect(server, { negotiation: "auto" });
  const cycle = async (rec: Recorder | null) => {
    rec?.add(FLOOR, await healthRoundTrip(server));
    const wf = await timed(client, rec, "start_workflow", { name: "Bench", plan: [{ step: "1", goal: "g" }] });
    const task = await timed(client, rec, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g", areas: ["src/**"] });
    await timed(client, rec, "log_decision", { task_id: task.task_id, category: "trade_off", question: "q", chosen: "a", reasoning: "r" });
    await timed(client, rec, "log_issue", { task_id: task.task_id, type: "bug_encountered", description: "d", resolution: "r" });
    await timed(client, rec, "log_milestone", { task_id: task.task_id, message: "m", progress: 50 });
    await timed(client, rec, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "s" },
      changes: checksumChanges("src/bench", 3),
    });
    await timed(client, rec, "get_workflow", { workflow_id: wf.workflow_id });
    await timed(client, rec, "complete_workflow", { workflow_id: wf.workflow_id, status: "success", summary: "s" });
  };
  for (let i = 0; i < 10; i++) await cycle(null); // warm-up
  const recorder = new Recorder();
  for (let i = 0; i < calls; i++) await cycle(recorder);
  await client.close();

  const summaries = recorder.summaries();
  const floor = summaries[FLOOR] as Summary;
  const ownCost: Record<string, number> = {};
  context.table.add({ area: "tool call (SDK v2, wrangler dev)", measure: `GET /health floor, n=${floor.n}`, value: percentiles(floor) });
  for (const [tool, s] of Object.entries(summaries)) {
    if (tool === FLOOR) continue;
    context.table.add({
      measure: `${tool}, n=${s.n}`,
      value: percentiles(s),
      floor: ms(floor.median),
      ratio: times(s.median, floor.median),
    });
  }
  for (const tool of ["log_decision", "log_issue", "log_milestone"]) {
    const s = summaries[tool] as Summary;
    ownCost[tool] = s.median - floor.median;
    context.table.add({
      area: tool === "log_decision" ? "Waymark's own cost per log_* call" : "",
      measure: `${tool}: median − /health median`,
      value: ms(s.median - floor.median),
      floor: ms(floor.median),
      ratio: times(s.median, floor.median),
      target: atMost(s.median - floor.median, OWN_COST_TARGET_MS, " ms"),
    });
  }
  context.results.tools = { summaries, own_cost_ms: ownCost, own_cost_target_ms: OWN_COST_TARGET_MS };
  return summaries;
}
