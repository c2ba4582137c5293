/**
 * Waymark's own cost per tool call as an A/B in one run: this build and an old build served side
 * by side (fresh servers, empty data), one SDK v2 client each, one call at a time, the two sides
 * taking turns call by call (A B, then B A) so drift in machine load hits both alike. Own cost is a
 * tool's median minus the /health median measured in the same turns. Separate bench runs of two
 * builds differ by more than the builds do (a fresh `wrangler dev` per run moves even the
 * /health floor by milliseconds): only this comparison says whether a change made calls dearer.
 *
 * Each turn also completes a task with a 100-file change signed by an approved device (started,
 * signed, just before, untimed), as a helper with a paired device sends it; its median is held
 * against log_milestone's. Targets (this build): own cost per log_* ≤ 0.25x the /health median;
 * complete_task with a signed 100-file change ≤ 2x a log_milestone.
 */

import { healthRoundTrip, timed } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { connect, ok } from "../../test/support/mcp-client.ts";
import { Recorder, type Summary } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { approvedDevice, loadDeviceKeys } from "../lib/device-keys.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { atMost, ms, percentiles, times } from "../lib/table.ts";

const FLOOR = "GET /health (floor)";
const LOGS = ["log_decision", "log_issue", "log_milestone"] as const;
const TOOLS = [...LOGS, "get_workflow"] as const;
const SIGNED = "complete_task, signed, 100 files";
const OWN_COST_TARGET = 0.25;
const SIGNED_TARGET = 2;
const HEAD = "c".repeat(40);

/** What a helper sends for 100 files added and left uncommitted during task `t` (the floor section sends the same). */
export function gitChanges(t: number) {
  const dirty = Array.from({ length: 100 }, (_, k) => ({
    path: `src/t${t}/file-${k}.ts`,
    head: null,
    worktree: { mode: "100644", blob: (t * 1000 + k + 1).toString(16).padStart(40, "a") },
  }));
  return { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty };
}

export async function costAB(context: BenchContext, vars: Record<string, string>, oldRef: string): Promise<void> {
  const rounds = context.quick ? 60 : 200;
  const keys = await loadDeviceKeys();
  const { nonceOf } = keys;
  context.log(`own cost A/B: checking out ${oldRef}`);
  const old = checkOutOldBuild(oldRef);
  const servers: DevServer[] = [];
  try {
    servers.push(await startDevServer({ vars }), await startDevServer({ root: old.dir, vars }));
    const sides = await Promise.all(
      servers.map(async (server, index) => {
        const client = await connect(server, { negotiation: "auto", name: "cost-ab" });
        const device = await approvedDevice(server, keys);
        const wf = await timed(client, null, "start_workflow", { name: "Cost A/B" });
        const task = await timed(client, null, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g" });
        // The completed tasks get a workflow of their own: the logs' workflow keeps one open task.
        const done = await timed(client, null, "start_workflow", { name: "Cost A/B completions" });
        return {
          label: index === 0 ? "this build" : `old build ${oldRef} (${old.commit.slice(0, 7)})`,
          server,
          client,
          device,
          ids: { workflow_id: String(wf.workflow_id), task_id: String(task.task_id), completions: String(done.workflow_id) },
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
      const { task_id, workflow_id, completions } = side.ids;
      await timed(side.client, rec, "log_decision", { task_id, category: "trade_off", question: "q", chosen: "a", reasoning: "r" });
      await timed(side.client, rec, "log_issue", { task_id, type: "bug_encountered", description: "d", resolution: "r" });
      await timed(side.client, rec, "log_milestone", { task_id, message: "m", progress: 50 });
      await timed(side.client, rec, "get_workflow", { workflow_id });
      // Started with a signed snapshot just before (untimed); completed with a signed 100-file change.
      const snapshot = await side.device.signSnapshot({ type: "git", head: HEAD, branch: "main", dirty: [] }, completions);
      const started = await timed(side.client, null, "start_task", { workflow_id: completions, name: `C${index}`, goal: "g", snapshot });
      const changes = await side.device.signChanges(gitChanges(index), null, String(started.task_id), nonceOf(snapshot));
      const t0 = performance.now();
      const done = await ok<{ files_changed: { source: { kind: string; reason?: string } } }>(side.client, "complete_task", {
        task_id: started.task_id,
        status: "success",
        outcome: { summary: "s" },
        changes,
      });
      rec?.add(SIGNED, performance.now() - t0);
      // The device's signature must have been accepted, or this is not the call the target is about.
      const source = done.files_changed.source;
      if (source.kind !== "signed") throw new Error(`${side.label}: the signed change was recorded as ${source.kind}: ${source.reason}`);
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
      const thisBuild = index === 0;
      context.table.add({
        area: thisBuild ? "own cost per call, A/B in one run" : "",
        measure: `${side.label}: GET /health, n=${floor.n}`,
        value: percentiles(floor),
      });
      const own: Record<string, number> = { floor_ms: floor.median };
      for (const tool of TOOLS) {
        const s = summaries[tool] as Summary;
        own[tool] = s.median - floor.median;
        const isLog = (LOGS as readonly string[]).includes(tool);
        context.table.add({
          measure: `${side.label}: ${tool} median − /health median`,
          value: ms(s.median - floor.median),
          floor: ms(floor.median),
          ratio: `${times(s.median - floor.median, floor.median)} of /health`,
          target: thisBuild && isLog ? atMost((s.median - floor.median) / floor.median, OWN_COST_TARGET, "x /health") : undefined,
        });
      }
      const signed = summaries[SIGNED] as Summary;
      const milestone = summaries.log_milestone as Summary;
      own[SIGNED] = signed.median;
      context.table.add({
        measure: `${side.label}: ${SIGNED} (started signed just before), n=${signed.n}`,
        value: percentiles(signed),
        floor: `log_milestone ${ms(milestone.median)}`,
        ratio: times(signed.median, milestone.median),
        target: thisBuild ? atMost(signed.median / milestone.median, SIGNED_TARGET, "x log_milestone") : undefined,
      });
      results[side.label] = own;
    }
    context.results.cost_ab = { rounds, old_ref: oldRef, old_commit: old.commit, medians_ms: results };
  } finally {
    for (const server of servers) await server.stop();
    old.remove();
  }
}
