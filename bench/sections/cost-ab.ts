/**
 * Waymark's own cost per tool call as an A/B in one run: this build and an old build served side
 * by side (fresh servers, empty data), one SDK v2 client each, one call at a time, the two sides
 * taking turns (A B, then B A) so drift in machine load hits both alike. Own cost is a tool's
 * median minus the /health median measured in the same turns. Separate bench runs of two builds
 * differ by more than the builds do (a fresh `wrangler dev` per run moves even the /health floor
 * by milliseconds): only this comparison says whether a change made calls dearer.
 *
 * A side's turn: its /health, the three log calls, get_workflow, then a task completed with a
 * 100-file change signed by an approved device (started, signed, just before, untimed), as a
 * helper with a paired device sends it; its median is held against log_milestone's. The three log
 * calls take each place in the turn equally often (the order rotates turn by turn): with one fixed
 * order the first of them, always log_decision, came out dearest in every run while the Worker's
 * CPU per call and the object requests per call were the same for the three kinds
 * (BENCHMARKS.md, "Own cost per log call against the platform's floor"); each kind's median by
 * place is kept in the JSON results and their means are a row. Targets (this build): own cost per
 * log_* ≤ 0.25x the /health median; complete_task with a signed 100-file change ≤ 2x a log_milestone.
 *
 * `--against-floor`: the other side is bench/floor-worker (no Waymark code) in the same turns:
 * its /health, then in the logs' three places (rotating the same way) the least an MCP tool call
 * that commits one row costs (its tools/call answered without the SDK's transport, as Waymark's
 * lean path answers its own), the same through the SDK's handler, and a plain POST whose object
 * commits one row, then a POST carrying the 100 files in one RPC in the completion's place. Its
 * own cost over its own /health says whether 0.25x is reachable here by any MCP server.
 */

import { loadavg } from "node:os";
import { healthRoundTrip, timed } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { connect, ok } from "../../test/support/mcp-client.ts";
import { Recorder, type Summary } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { approvedDevice, type DeviceKeys, loadDeviceKeys } from "../lib/device-keys.ts";
import { checkOutOldBuild, type OldBuild } from "../lib/old-build.ts";
import { atMost, ms, percentiles, times } from "../lib/table.ts";
import { ENTRY, floorFiles, floorPost, gitChanges } from "../lib/write-calls.ts";

const FLOOR = "GET /health (floor)";
const LOGS = ["log_decision", "log_issue", "log_milestone"] as const;
const TOOLS = [...LOGS, "get_workflow"] as const;
const SIGNED = "complete_task, signed, 100 files";
const OWN_COST_TARGET = 0.25;
const SIGNED_TARGET = 2;
const HEAD = "c".repeat(40);

/** The floor Worker's measures, in the places of Waymark's three logs and its completion. */
const FLOOR_WRITES = ["(5b) MCP write, lean", "(5) MCP write, SDK's handler", "(4) POST, one row"] as const;
const FLOOR_COMPLETE = "(7) POST, 100 files, one row";

/** One server's calls, taking turns with the other side's. */
interface Side {
  label: string;
  recorder: Recorder;
  /** Its /health first, then its calls; timed into the recorder when `record`. */
  turn(index: number, record: boolean): Promise<void>;
  close(): Promise<void>;
}

/** `items` starting at the turn's place: each takes each place equally often over the turns. */
const rotated = <T>(items: readonly T[], index: number): T[] => items.map((_, k) => items[(index + k) % items.length] as T);

/** A call timed into `rec` under its name and under its name and place in the turn (`@1` right after /health). */
async function placed(rec: Recorder | null, name: string, place: number, call: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await call();
  const elapsed = performance.now() - t0;
  rec?.add(name, elapsed);
  rec?.add(`${name} @${place}`, elapsed);
}

async function waymarkSide(label: string, server: DevServer, keys: DeviceKeys): Promise<Side> {
  const client = await connect(server, { negotiation: "auto", name: "cost-ab" });
  const device = await approvedDevice(server, keys);
  const wf = await timed(client, null, "start_workflow", { name: "Cost A/B" });
  const workflow_id = String(wf.workflow_id);
  let task_id = String((await timed(client, null, "start_task", { workflow_id, name: "T", goal: "g" })).task_id);
  // The completed tasks get a workflow of their own: the logs' workflow keeps one open task.
  const completions = String((await timed(client, null, "start_workflow", { name: "Cost A/B completions" })).workflow_id);
  const recorder = new Recorder();
  const logArgs = (tool: (typeof LOGS)[number]): Record<string, unknown> =>
    tool === "log_decision"
      ? { task_id, category: "trade_off", question: "q", chosen: "a", reasoning: "r" }
      : tool === "log_issue"
        ? { task_id, type: "bug_encountered", description: "d", resolution: "r" }
        : { task_id, message: "m", progress: 50 };
  return {
    label,
    recorder,
    close: () => client.close(),
    async turn(index, record) {
      // A task takes at most 200 logs of one kind: a fresh one (not timed) every 150 turns.
      if (index > 0 && index % 150 === 0) {
        task_id = String((await timed(client, null, "start_task", { workflow_id, name: `T${index}`, goal: "g" })).task_id);
      }
      const rec = record ? recorder : null;
      rec?.add(FLOOR, await healthRoundTrip(server));
      for (const [k, tool] of rotated(LOGS, index).entries()) await placed(rec, tool, k + 1, () => ok(client, tool, logArgs(tool)));
      await timed(client, rec, "get_workflow", { workflow_id });
      // Started with a signed snapshot just before (untimed); completed with a signed 100-file change.
      const snapshot = await device.signSnapshot({ type: "git", head: HEAD, branch: "main", dirty: [] }, completions);
      const started = await timed(client, null, "start_task", { workflow_id: completions, name: `C${index}`, goal: "g", snapshot });
      const changes = await device.signChanges(gitChanges(index), null, String(started.task_id), keys.nonceOf(snapshot));
      const t0 = performance.now();
      const done = await ok<{ files_changed: { source: { kind: string; reason?: string } } }>(client, "complete_task", {
        task_id: started.task_id,
        status: "success",
        outcome: { summary: "s" },
        changes,
      });
      rec?.add(SIGNED, performance.now() - t0);
      // The device's signature must have been accepted, or this is not the call the target is about.
      const source = done.files_changed.source;
      if (source.kind !== "signed") throw new Error(`${label}: the signed change was recorded as ${source.kind}: ${source.reason}`);
    },
  };
}

async function floorSide(server: DevServer): Promise<Side> {
  const sdkClient = await connect(server, { negotiation: "auto", name: "cost-ab" });
  const leanClient = await connect({ ...server, url: `${server.url}/lean` }, { negotiation: "auto", name: "cost-ab" });
  const args = { task_id: `tsk_${"2".repeat(26)}`, message: "m", progress: 50 };
  const calls: Record<(typeof FLOOR_WRITES)[number], () => Promise<unknown>> = {
    "(5b) MCP write, lean": () => ok(leanClient, "write", args),
    "(5) MCP write, SDK's handler": () => ok(sdkClient, "write", args),
    "(4) POST, one row": () => floorPost(server, "/write", ENTRY),
  };
  const recorder = new Recorder();
  return {
    label: "floor (bench/floor-worker)",
    recorder,
    close: async () => {
      await sdkClient.close();
      await leanClient.close();
    },
    async turn(index, record) {
      const rec = record ? recorder : null;
      rec?.add(FLOOR, await healthRoundTrip(server));
      for (const [k, name] of rotated(FLOOR_WRITES, index).entries()) await placed(rec, name, k + 1, calls[name]);
      const files = floorFiles(index);
      const t0 = performance.now();
      await floorPost(server, "/complete", files);
      rec?.add(FLOOR_COMPLETE, performance.now() - t0);
    },
  };
}

/** The 10th percentile (nearest rank): the calls the machine's other load touched least. */
function p10(samples: readonly number[] = []): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length / 10) - 1)] ?? Number.NaN;
}

/** Each kind's median by its place in the turn (`@1` right after /health), for the JSON results. */
function byPlace(summaries: Record<string, Summary>, names: readonly string[]): Record<string, number[]> {
  return Object.fromEntries(names.map((name) => [name, [1, 2, 3].map((k) => summaries[`${name} @${k}`]?.median ?? Number.NaN)]));
}

/** `other`: the old build's git ref, or "floor" for bench/floor-worker. */
export async function costAB(context: BenchContext, vars: Record<string, string>, other: string): Promise<void> {
  const rounds = context.quick ? 60 : 200;
  const keys = await loadDeviceKeys();
  const againstFloor = other === "floor";
  let old: OldBuild | null = null;
  if (!againstFloor) {
    context.log(`own cost A/B: checking out ${other}`);
    old = checkOutOldBuild(other);
  }
  const servers: DevServer[] = [];
  const loadAtStart = loadavg();
  try {
    servers.push(
      await startDevServer({ vars }),
      old ? await startDevServer({ root: old.dir, vars }) : await startDevServer({ config: "bench/floor-worker/wrangler.toml" }),
    );
    const [mine, theirs] = servers as [DevServer, DevServer];
    const sides = await Promise.all([
      waymarkSide("this build", mine, keys),
      old ? waymarkSide(`old build ${other} (${old.commit.slice(0, 7)})`, theirs, keys) : floorSide(theirs),
    ]);
    context.log(`own cost A/B: ${rounds} turns per side, alternating, against ${old ? other : "the floor Worker"}`);
    for (let i = 0; i < 20 + rounds; i++) {
      const order = i % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) await side.turn(i, i >= 20);
    }
    const load = `load ${loadAtStart[0]?.toFixed(2)} → ${loadavg()[0]?.toFixed(2)}`;
    const results: Record<string, Record<string, number>> = {};
    const places: Record<string, Record<string, number[]>> = {};
    const tenths: Record<string, Record<string, number>> = {};
    for (const [index, side] of sides.entries()) {
      await side.close();
      const summaries = side.recorder.summaries();
      const floor = summaries[FLOOR] as Summary;
      const thisBuild = index === 0;
      const isFloor = againstFloor && !thisBuild;
      context.table.add({
        area: thisBuild ? `own cost per call, A/B in one run (${load})` : "",
        measure: `${side.label}: GET /health, n=${floor.n}`,
        value: percentiles(floor),
      });
      const own: Record<string, number> = { floor_ms: floor.median };
      const floorP10 = p10(side.recorder.samples.get(FLOOR));
      const ownP10: Record<string, number> = { floor_ms: floorP10 };
      for (const tool of isFloor ? FLOOR_WRITES : TOOLS) {
        ownP10[tool] = p10(side.recorder.samples.get(tool)) - floorP10;
        if (isFloor || (LOGS as readonly string[]).includes(tool))
          context.table.add({
            measure: `${side.label}: ${tool} at the 10th percentile − /health's`,
            value: ms(ownP10[tool] ?? Number.NaN),
            floor: ms(floorP10),
            ratio: `${times(ownP10[tool] ?? Number.NaN, floorP10)} of /health`,
          });
      }
      tenths[side.label] = ownP10;
      for (const tool of isFloor ? FLOOR_WRITES : TOOLS) {
        const s = summaries[tool] as Summary;
        own[tool] = s.median - floor.median;
        const isLog = (LOGS as readonly string[]).includes(tool);
        context.table.add({
          measure: `${side.label}: ${tool} median − /health median`,
          value: ms(s.median - floor.median),
          floor: ms(floor.median),
          ratio: `${times(s.median - floor.median, floor.median)} of /health`,
          target:
            (thisBuild && isLog) || isFloor ? atMost((s.median - floor.median) / floor.median, OWN_COST_TARGET, "x /health") : undefined,
        });
      }
      const sidePlaces = byPlace(summaries, isFloor ? FLOOR_WRITES : LOGS);
      places[side.label] = sidePlaces;
      // Each place's median, averaged over the kinds that took it: what the place alone adds.
      const atPlace = [0, 1, 2].map((k) => Object.values(sidePlaces).reduce((sum, m) => sum + (m[k] ?? Number.NaN), 0) / 3);
      context.table.add({
        measure: `${side.label}: ${isFloor ? "writes" : "log calls"} by place in the turn, @1 right after /health (mean of the kinds' medians)`,
        value: atPlace.map((m, k) => `@${k + 1} ${ms(m)}`).join(" / "),
      });
      if (isFloor) {
        const complete = summaries[FLOOR_COMPLETE] as Summary;
        own[FLOOR_COMPLETE] = complete.median;
        context.table.add({
          measure: `${side.label}: ${FLOOR_COMPLETE}, n=${complete.n}`,
          value: percentiles(complete),
          floor: `(4) ${ms((summaries[FLOOR_WRITES[2]] as Summary).median)}`,
          ratio: times(complete.median, (summaries[FLOOR_WRITES[2]] as Summary).median),
        });
      } else {
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
      }
      results[side.label] = own;
    }
    if (againstFloor) {
      // How far Waymark's cheapest log is above the least an MCP write costs in the same turns.
      const [waymark, floorOwn] = Object.values(results) as [Record<string, number>, Record<string, number>];
      const lean = floorOwn[FLOOR_WRITES[0]] ?? Number.NaN;
      for (const tool of LOGS) {
        context.table.add({
          measure: `${tool}'s own cost above the floor's lean MCP write (5b)`,
          value: ms((waymark[tool] ?? Number.NaN) - lean),
          floor: `(5b) own ${ms(lean)}`,
        });
      }
    }
    context.results.cost_ab = {
      rounds,
      against: againstFloor ? "floor" : other,
      old_commit: old?.commit ?? null,
      load_start: loadAtStart,
      medians_ms: results,
      medians_by_place_ms: places,
      own_at_p10_ms: tenths,
    };
  } finally {
    for (const server of servers) await server.stop();
    old?.remove();
  }
}
