/**
 * The platform's own floor for a write, measured beside Waymark in one run: is "own cost per
 * `log_*` ≤ 0.25x `/health`" reachable by any implementation under `wrangler dev`? Two servers,
 * each started as the benches start Waymark (test/support/dev-server.ts: same flags, persistence on
 * disk, wrangler from node_modules): this build, and bench/floor-worker (a fetch handler and one
 * SQLite-backed Durable Object, no Waymark code). One call at a time, the measures taking turns
 * (each turn starts one measure later and every other turn runs backwards, as cost-ab alternates its
 * builds) so drift in machine load hits all alike and no measure always follows the same one:
 *
 *   1. Waymark's GET /health
 *   2. the floor's GET /health (no object)
 *   3. the floor's POST with one RPC into its object, which returns
 *   4. the floor's POST whose object INSERTs one row (a log entry's JSON text)
 *   5. the same as the one tool of a minimal MCP server (the same SDK as Waymark's, JSON responses),
 *      called by the SDK v2 client cost-ab uses
 *   5b. the same with its tools/call answered without the SDK's transport, as Waymark's lean path answers its own
 *   6. Waymark's log_milestone through that client
 *
 * and, for the signed 100-file completion's ≤ 2x target, 7. the floor's POST carrying 100 changed
 * files in one RPC that INSERTs one row, beside 8. Waymark's signed 100-file complete_task (as
 * cost-ab sends it). Own cost is a median minus its server's /health median. CPU per call of each
 * process (the Worker's workerd, wrangler's proxy workerd, wrangler's Node, this client) is read
 * from the kernel around each call (bench/lib/process-cpu.ts), so where the time goes is measured; each
 * measure's 10th percentile is printed too, the calls the machine's other load touched least.
 */
import { loadavg } from "node:os";
import { healthRoundTrip, timed } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { connect, ok } from "../../test/support/mcp-client.ts";
import { Recorder, type Summary } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { approvedDevice, loadDeviceKeys } from "../lib/device-keys.ts";
import { cpuNanos, serverProcesses } from "../lib/process-cpu.ts";
import { atMost, ms, percentiles, times } from "../lib/table.ts";
import { ENTRY, floorFiles, floorPost, gitChanges } from "../lib/write-calls.ts";

const OWN_COST_TARGET = 0.25;
const SIGNED_TARGET = 2;
const HEAD = "c".repeat(40);

const M = {
  health: "(1) Waymark GET /health",
  floorHealth: "(2) floor GET /health (no object)",
  rpc: "(3) floor POST, one RPC into the object",
  write: "(4) floor POST, the object INSERTs one row",
  mcpWrite: "(5) floor MCP tool writing one row (SDK's handler)",
  leanWrite: "(5b) the same, tools/call answered without the SDK's transport",
  milestone: "(6) Waymark log_milestone",
  complete: "(7) floor POST, 100 files in one RPC, one row",
  signed: "(8) Waymark complete_task, signed, 100 files",
} as const;
type Measure = keyof typeof M;

/** Reads every process of a server (and this client) before and after a call: CPU ns by role. */
function processMeter(port: number) {
  const watched = [...serverProcesses(port), { pid: process.pid, role: "client (this node)" }];
  return {
    /** null while the same processes still serve, else what changed (wrangler dev starts a new workerd when a watched file changes: the figures would be void). */
    changedSinceStart: () => {
      // Helpers such as esbuild's service come and go (role "other"); the workerds and wrangler's Node must not.
      const kept = (list: { pid: number; role: string }[]) =>
        list
          .filter((p) => p.role === "worker (workerd)" || p.role === "proxy (workerd)" || p.role === "wrangler (node)")
          .map((p) => p.pid)
          .sort()
          .join();
      const now = kept(serverProcesses(port));
      return now === kept(watched) ? null : `${kept(watched)} → ${now}`;
    },
    // This client's counter is read last before the call and first after it, so its figure leaves out the reading of the servers'.
    before: () => watched.map((p) => cpuNanos(p.pid)),
    after: () => {
      const mine = cpuNanos(process.pid);
      return watched.map((p) => (p.pid === process.pid ? mine : cpuNanos(p.pid)));
    },
    add(into: Record<string, number>, before: number[], after: number[]) {
      watched.forEach((p, i) => {
        into[p.role] = (into[p.role] ?? 0) + ((after[i] ?? 0) - (before[i] ?? 0)) / 1e6;
      });
    },
  };
}

/** The 10th percentile (nearest rank): the calls the machine's other load touched least. */
function p10(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length / 10) - 1)] ?? Number.NaN;
}

const ROLES = ["worker (workerd)", "proxy (workerd)", "wrangler (node)", "client (this node)"] as const;

export async function floor(context: BenchContext, vars: Record<string, string>): Promise<void> {
  const rounds = context.quick ? 60 : 200;
  const loadAtStart = loadavg();
  const keys = await loadDeviceKeys();
  const servers: DevServer[] = [];
  try {
    const waymark = await startDevServer({ vars });
    servers.push(waymark);
    const floorServer = await startDevServer({ config: "bench/floor-worker/wrangler.toml" });
    servers.push(floorServer);
    const port = (s: DevServer) => Number(new URL(s.url).port);
    const meters = { waymark: processMeter(port(waymark)), floor: processMeter(port(floorServer)) };

    const client = await connect(waymark, { negotiation: "auto", name: "floor" });
    const floorClient = await connect(floorServer, { negotiation: "auto", name: "floor" });
    const leanClient = await connect({ ...floorServer, url: `${floorServer.url}/lean` }, { negotiation: "auto", name: "floor" });
    const device = await approvedDevice(waymark, keys);
    const wf = await timed(client, null, "start_workflow", { name: "Floor" });
    const workflow_id = String(wf.workflow_id);
    let task_id = String((await timed(client, null, "start_task", { workflow_id, name: "T", goal: "g" })).task_id);
    const completions = String((await timed(client, null, "start_workflow", { name: "Floor completions" })).workflow_id);

    const post = (path: string, body: string) => floorPost(floorServer, path, body);

    const recorder = new Recorder();
    const cpu: Record<Measure, Record<string, number>> = Object.fromEntries(Object.keys(M).map((k) => [k, {}])) as Record<
      Measure,
      Record<string, number>
    >;
    /** One timed call, with the CPU its server's processes and this client spent around it. */
    const measure = async (key: Measure, on: "waymark" | "floor", record: boolean, call: () => Promise<unknown>) => {
      const meter = meters[on];
      const before = meter.before();
      const t0 = performance.now();
      await call();
      const elapsed = performance.now() - t0;
      const after = meter.after();
      if (!record) return;
      recorder.add(M[key], elapsed);
      meter.add(cpu[key], before, after);
    };

    const turn = async (index: number, record: boolean) => {
      // A task takes at most 200 logs of one kind: a fresh one (not timed) every 150 turns.
      if (index > 0 && index % 150 === 0) {
        task_id = String((await timed(client, null, "start_task", { workflow_id, name: `T${index}`, goal: "g" })).task_id);
      }
      // Started with a signed snapshot (untimed), as cost-ab does, before the measures take their turns.
      const snapshot = await device.signSnapshot({ type: "git", head: HEAD, branch: "main", dirty: [] }, completions);
      const started = await timed(client, null, "start_task", { workflow_id: completions, name: `C${index}`, goal: "g", snapshot });
      const changes = await device.signChanges(gitChanges(index), null, String(started.task_id), keys.nonceOf(snapshot));
      const files = floorFiles(index);
      const calls: [Measure, "waymark" | "floor", () => Promise<unknown>][] = [
        ["health", "waymark", () => healthRoundTrip(waymark)],
        ["floorHealth", "floor", () => healthRoundTrip(floorServer)],
        ["rpc", "floor", () => post("/rpc", "{}")],
        ["write", "floor", () => post("/write", ENTRY)],
        ["mcpWrite", "floor", () => ok(floorClient, "write", { task_id, message: "m", progress: 50 })],
        ["leanWrite", "floor", () => ok(leanClient, "write", { task_id, message: "m", progress: 50 })],
        ["milestone", "waymark", () => ok(client, "log_milestone", { task_id, message: "m", progress: 50 })],
        ["complete", "floor", () => post("/complete", files)],
        [
          "signed",
          "waymark",
          async () => {
            const done = await ok<{ files_changed: { source: { kind: string; reason?: string } } }>(client, "complete_task", {
              task_id: started.task_id,
              status: "success",
              outcome: { summary: "s" },
              changes,
            });
            // The device's signature must have been accepted, or this is not the call the target is about.
            const source = done.files_changed.source;
            if (source.kind !== "signed") throw new Error(`the signed change was recorded as ${source.kind}: ${source.reason}`);
          },
        ],
      ];
      // Each turn starts one measure later, and every other turn runs backwards, so no measure always follows the same
      // one (a measure that always came right after Waymark's /health was slower for it: 0.4 ms at load 2.5).
      const order = calls.map((_, k) => calls[(index + k) % calls.length] as (typeof calls)[number]);
      if (index % 2 === 1) order.reverse();
      for (const [key, on, call] of order) await measure(key, on, record, call);
    };

    context.log(`floor: ${rounds} turns of ${Object.keys(M).length} measures, taking turns`);
    for (let i = 0; i < 20 + rounds; i++) await turn(i, i >= 20);
    await client.close();
    await floorClient.close();
    await leanClient.close();
    const loadAtEnd = loadavg();
    for (const [name, meter] of Object.entries(meters)) {
      const changed = meter.changedSinceStart();
      if (changed !== null)
        throw new Error(`the ${name} server's processes changed during the run (${changed}; a reload?): its CPU figures are void`);
    }

    const summaries = recorder.summaries();
    const median = (key: Measure) => (summaries[M[key]] as Summary).median;
    const health = median("health");
    const floorHealth = median("floorHealth");
    const load = `load ${loadAtStart[0]?.toFixed(2)} → ${loadAtEnd[0]?.toFixed(2)}`;
    const cpuText = (key: Measure) => {
      const n = (summaries[M[key]] as Summary).n;
      const per = ROLES.map((role) => (cpu[key][role] ?? 0) / n);
      const [worker, proxy, wrangler, client] = per;
      const total = per.reduce((a, b) => a + b, 0);
      return `CPU/call ${total.toFixed(2)} ms: Worker ${worker?.toFixed(2)}, proxy ${proxy?.toFixed(2)}, wrangler ${wrangler?.toFixed(2)}, client ${client?.toFixed(2)}`;
    };

    context.table.add({
      area: "platform floor for a write, one run",
      measure: `${M.health}, n=${(summaries[M.health] as Summary).n} (${load})`,
      value: percentiles(summaries[M.health] as Summary),
      floor: cpuText("health"),
    });
    for (const key of ["floorHealth", "rpc", "write", "mcpWrite", "leanWrite", "milestone"] as const) {
      const s = summaries[M[key]] as Summary;
      const ownBase = key === "milestone" ? health : floorHealth;
      const own = s.median - ownBase;
      context.table.add({
        measure: `${M[key]}, n=${s.n}`,
        value: percentiles(s),
        floor: cpuText(key),
        ratio:
          key === "floorHealth"
            ? `${times(s.median, health)} of (1)`
            : `${times(s.median, health)} of (1), ${times(s.median, floorHealth)} of (2); own ${ms(own)} = ${times(own, ownBase)} of its /health`,
        target:
          key === "write" || key === "mcpWrite" || key === "leanWrite" || key === "milestone"
            ? atMost(own / ownBase, OWN_COST_TARGET, "x /health")
            : undefined,
      });
    }
    // What part of Waymark's own cost per log call is above the least an MCP write costs here (5b, the cheaper of the two floors).
    const waymarkOwn = median("milestone") - health;
    const floorOwn = median("leanWrite") - floorHealth;
    context.table.add({
      measure: "Waymark's own cost per log_milestone above the floor's lean MCP write (5b)",
      value: ms(waymarkOwn - floorOwn),
      floor: `floor (5b) own ${ms(floorOwn)}; Waymark's own ${ms(waymarkOwn)}`,
      ratio: `${((100 * (waymarkOwn - floorOwn)) / waymarkOwn).toFixed(0)}% of Waymark's own cost`,
    });
    // The same in the Worker process's CPU, which the machine's load moves far less than wall time.
    const workerCpu = (key: Measure) => (cpu[key]["worker (workerd)"] ?? 0) / (summaries[M[key]] as Summary).n;
    const waymarkCpu = workerCpu("milestone") - workerCpu("health");
    const floorCpu = workerCpu("leanWrite") - workerCpu("floorHealth");
    context.table.add({
      measure: "the same in the Worker process's CPU per call (each minus its /health's)",
      value: ms(waymarkCpu - floorCpu),
      floor: `floor (5b) own ${ms(floorCpu)}; Waymark's own ${ms(waymarkCpu)}`,
      ratio: `${((100 * (waymarkCpu - floorCpu)) / waymarkCpu).toFixed(0)}% of Waymark's own CPU`,
    });
    // A load-robust estimate of the same ratios on a machine shared with other work: each measure's 10th percentile,
    // the calls the load touched least. (A call's time less its processes' run-queue waits was tried and is no estimate:
    // threads of one process wait at once, so the sum of their waits exceeded the call's time.)
    const p10s: Record<string, number> = {};
    for (const key of ["health", "floorHealth", "rpc", "write", "mcpWrite", "leanWrite", "milestone"] as const) {
      p10s[key] = p10(recorder.samples.get(M[key]) ?? []);
      const base = key === "health" || key === "milestone" ? "health" : "floorHealth";
      const own = (p10s[key] ?? 0) - (p10s[base] ?? 0);
      context.table.add({
        area: key === "health" ? "the same at the 10th percentile" : "",
        measure: `${M[key]}, 10th percentile`,
        value: ms(p10s[key] ?? Number.NaN),
        ratio: key === base ? "" : `own ${ms(own)} = ${times(own, p10s[base] ?? 0)} of its /health`,
      });
    }

    for (const [key, over] of [
      ["complete", "write"],
      ["signed", "milestone"],
    ] as const) {
      const s = summaries[M[key]] as Summary;
      context.table.add({
        measure: `${M[key]}, n=${s.n}`,
        value: percentiles(s),
        floor: `${M[over]} ${ms(median(over))}; ${cpuText(key)}`,
        ratio: times(s.median, median(over)),
        target: key === "signed" ? atMost(s.median / median(over), SIGNED_TARGET, "x log_milestone") : undefined,
      });
    }

    const medians = Object.fromEntries(Object.keys(M).map((k) => [k, median(k as Measure)]));
    const cpuPerCall = Object.fromEntries(
      Object.keys(M).map((k) => {
        const n = (summaries[M[k as Measure]] as Summary).n;
        return [k, Object.fromEntries(Object.entries(cpu[k as Measure]).map(([role, total]) => [role, total / n]))];
      }),
    );
    context.results.floor = {
      rounds,
      load_start: loadAtStart,
      load_end: loadAtEnd,
      medians_ms: medians,
      cpu_ms_per_call: cpuPerCall,
      p10_ms: p10s,
    };
  } finally {
    for (const server of servers) await server.stop();
  }
}
