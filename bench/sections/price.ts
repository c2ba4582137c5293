/**
 * The price of a million tool calls at Cloudflare's published prices (bench/lib/prices.ts), from
 * what the deployment counts itself (src/meter.ts, on with WAYMARK_METER=1): Worker requests,
 * requests to each kind of Durable Object, the rows SQLite reports read and written per
 * statement, the objects' database sizes, their active time (an upper bound: the callers' waits
 * plus the time the objects' own timers held them), and the Worker process's CPU time from the
 * kernel (an upper bound: under `wrangler dev` the objects and wrangler's entry worker share it).
 *
 * The mix is one agent session through the helper with a paired device: start_workflow; four
 * tasks of start_task (signed git snapshot), log_decision, two log_milestone, complete_task
 * (20 files, signed), with a log_issue on every other task; one get_workflow; complete_workflow
 * (25 calls). Calls are spaced as an agent's are (seconds apart, never inside one push window):
 * after each call the bench waits until the meter stops moving, so what a call set off (its
 * account push, an alarm) is charged to it. The same session runs on an old build that meters
 * itself (--old-ref), on its own server, for the before/after.
 */
import { healthRoundTrip } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { connect, ok } from "../../test/support/mcp-client.ts";
import type { BenchContext } from "../lib/context.ts";
import { approvedDevice, loadDeviceKeys } from "../lib/device-keys.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { type CallCost, PRICES, pricePerMillion, storagePerMillionPerMonth } from "../lib/prices.ts";
import { cpuNanos, serverProcesses } from "../lib/process-cpu.ts";
import { atMost } from "../lib/table.ts";

const TARGET_DOLLARS = 2;
const HEAD = "c".repeat(40);
const FILES_PER_TASK = 20;

interface ObjectReading {
  requests: number;
  rows_read: number;
  rows_written: number;
  /** Builds before the meter named tables have none. */
  written_by_table?: Record<string, number>;
  call_ms: number;
  /** Builds before timers were removed: the time the outbox's timer held the workflow object awake. */
  held_ms?: number;
  database_bytes: number;
}

interface Reading {
  worker_requests: number;
  objects: Record<"workflow" | "account", ObjectReading>;
}

interface CallRecord {
  tool: string;
  cost: CallCost;
  /** Rows written in each kind of object. */
  written: Record<string, number>;
  /** Rows written per "kind.table", when the build names tables. */
  byTable?: Record<string, number>;
}

/** GET /meter requests made so far: each is a Worker request the meter counts too. */
let meterReads = 0;

async function readMeter(server: DevServer): Promise<Reading | null> {
  meterReads++;
  const response = await fetch(`${server.url}/meter`);
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`/meter answered ${response.status}`);
  return (await response.json()) as Reading;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What the last call set off has run: after the longest a push may wait (ACCOUNT_PUSH_DELAY_MS,
 * 2 s, with room), the meter is read until two readings 400 ms apart agree (at most 15 s).
 */
async function settled(server: DevServer): Promise<Reading> {
  await sleep(2_500);
  let last = JSON.stringify({ ...(await readMeter(server)), worker_requests: 0 });
  for (let waited = 0; waited < 15_000; waited += 400) {
    await sleep(400);
    const reading = (await readMeter(server)) as Reading;
    // Each reading is a Worker request of its own: compare without that count.
    const comparable = JSON.stringify({ ...reading, worker_requests: 0 });
    if (comparable === last) return reading;
    last = comparable;
  }
  throw new Error("the meter did not settle within 15 s");
}

function difference(before: Reading, after: Reading, readings: number, cpuMs: number, tool: string): CallRecord {
  const kinds = ["workflow", "account"] as const;
  const sum = (field: Exclude<keyof ObjectReading, "written_by_table">) =>
    kinds.reduce((n, k) => n + (after.objects[k][field] ?? 0) - (before.objects[k][field] ?? 0), 0);
  return {
    tool,
    cost: {
      worker_requests: after.worker_requests - before.worker_requests - readings,
      worker_cpu_ms: cpuMs,
      object_requests: sum("requests"),
      object_active_s: (sum("call_ms") + sum("held_ms")) / 1000,
      rows_read: sum("rows_read"),
      rows_written: sum("rows_written"),
      stored_bytes: sum("database_bytes"),
    },
    written: Object.fromEntries(kinds.map((k) => [k, after.objects[k].rows_written - before.objects[k].rows_written])),
    byTable: tableDifference(before, after),
  };
}

function tableDifference(before: Reading, after: Reading): Record<string, number> | undefined {
  if (!after.objects.workflow.written_by_table) return undefined;
  const out: Record<string, number> = {};
  for (const kind of ["workflow", "account"] as const) {
    const was = before.objects[kind].written_by_table ?? {};
    for (const [table, n] of Object.entries(after.objects[kind].written_by_table ?? {})) {
      const added = n - (was[table] ?? 0);
      if (added > 0) out[`${kind}.${table}`] = added;
    }
  }
  return out;
}

/** Rows written per call of the session mix by table, most first; undefined when the build names none. */
function writtenByTable(records: readonly CallRecord[]): [string, number][] | undefined {
  if (records.some((r) => !r.byTable)) return undefined;
  const sums = new Map<string, number>();
  for (const r of records) for (const [table, n] of Object.entries(r.byTable ?? {})) sums.set(table, (sums.get(table) ?? 0) + n);
  return [...sums].map(([table, n]): [string, number] => [table, n / records.length]).sort((a, b) => b[1] - a[1]);
}

/** One agent session (the module's mix), each call measured once what it set off has run. */
async function session(server: DevServer, label: string): Promise<CallRecord[]> {
  const keys = await loadDeviceKeys();
  const { nonceOf } = keys;
  const device = await approvedDevice(server, keys);
  const client = await connect(server, { negotiation: "auto", name: "price" });
  const worker = serverProcesses(Number(new URL(server.url).port)).find((p) => p.role === "worker (workerd)");
  if (!worker) throw new Error("no Worker process found");
  // Warm: the first requests compile the Worker.
  for (let i = 0; i < 5; i++) await healthRoundTrip(server);
  const records: CallRecord[] = [];
  let before = await settled(server);
  let readsBefore = meterReads;
  const call = async <T extends Record<string, unknown>>(tool: string, args: Record<string, unknown>): Promise<T> => {
    const cpuBefore = cpuNanos(worker.pid);
    const result = await ok<T>(client, tool, args);
    // The Worker process's CPU during the call itself: the meter's own reads below would add theirs.
    const cpuMs = (cpuNanos(worker.pid) - cpuBefore) / 1e6;
    const after = await settled(server);
    records.push(difference(before, after, meterReads - readsBefore, cpuMs, tool));
    before = after;
    readsBefore = meterReads;
    return result;
  };
  const wf = await call<{ workflow_id: string }>("start_workflow", { name: `Price ${label}`, description: "one agent session" });
  for (let t = 0; t < 4; t++) {
    const snapshot = await device.signSnapshot({ type: "git", head: HEAD, branch: "main", dirty: [] }, wf.workflow_id);
    const task = await call<{ task_id: string }>("start_task", {
      workflow_id: wf.workflow_id,
      name: `Task ${t}`,
      goal: "a change of 20 files",
      areas: [`src/t${t}/**`],
      snapshot,
    });
    await call("log_decision", {
      task_id: task.task_id,
      category: "trade_off",
      question: `Which way for ${t}?`,
      chosen: "left",
      reasoning: "shorter",
    });
    if (t % 2 === 1)
      await call("log_issue", { task_id: task.task_id, type: "bug_encountered", description: `Bug in ${t}`, resolution: "fixed" });
    for (const progress of [40, 80]) await call("log_milestone", { task_id: task.task_id, message: `at ${progress}%`, progress });
    const dirty = Array.from({ length: FILES_PER_TASK }, (_, k) => ({
      path: `src/t${t}/file-${k}.ts`,
      head: null,
      worktree: { mode: "100644", blob: (t * 100 + k + 1).toString(16).padStart(40, "b") },
    }));
    const changes = await device.signChanges(
      { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty },
      null,
      task.task_id,
      nonceOf(snapshot),
    );
    await call("complete_task", { task_id: task.task_id, status: "success", outcome: { summary: `Task ${t} done` }, changes });
  }
  await call("get_workflow", { workflow_id: wf.workflow_id });
  await call("complete_workflow", { workflow_id: wf.workflow_id, status: "success", summary: "done" });
  await client.close();
  return records;
}

/** The mean cost per call over `records`. */
function mean(records: readonly CallRecord[]): CallCost {
  const keys = Object.keys(records[0]?.cost ?? {}) as (keyof CallCost)[];
  return Object.fromEntries(
    keys.map((k) => [k, records.reduce((n, r) => n + r.cost[k], 0) / Math.max(1, records.length)]),
  ) as unknown as CallCost;
}

const dollars = (x: number) => `$${x.toFixed(x < 1 ? 3 : 2)}`;
const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

export async function price(context: BenchContext, vars: Record<string, string>, oldRef: string): Promise<void> {
  const old = checkOutOldBuild(oldRef);
  const sides: { label: string; root?: string }[] = [
    { label: "this build" },
    { label: `old build ${oldRef} (${old.commit.slice(0, 7)})`, root: old.dir },
  ];
  const results: Record<string, unknown> = {};
  try {
    for (const side of sides) {
      const server = await startDevServer({ vars: { ...vars, WAYMARK_METER: "1" }, ...(side.root ? { root: side.root } : {}) });
      try {
        if (!(await readMeter(server))) {
          context.table.add({ area: "price", measure: `${side.label}: does not meter itself (no GET /meter)`, value: "" });
          continue;
        }
        context.log(`price: one agent session on ${side.label}, each call measured once settled`);
        const records = await session(server, side.label);
        const perCall = mean(records);
        const items = pricePerMillion(perCall);
        const total = Object.values(items).reduce((a, b) => a + b, 0);
        const first = side === sides[0];
        for (const tool of [...new Set(records.map((r) => r.tool))]) {
          const of = records.filter((r) => r.tool === tool);
          const m = mean(of);
          const written = Object.entries(of[0]?.written ?? {})
            .map(([kind]) => `${kind} ${num(of.reduce((n, r) => n + (r.written[kind] ?? 0), 0) / of.length)}`)
            .join(", ");
          context.table.add({
            area: first && tool === records[0]?.tool ? "price: per tool call (counted by the storage)" : "",
            measure: `${side.label}: ${tool} (n=${of.length})`,
            value: `rows written ${num(m.rows_written)} (${written}), read ${num(m.rows_read)}; object requests ${num(m.object_requests)}`,
            ratio: `${dollars(Object.values(pricePerMillion(m)).reduce((a, b) => a + b, 0))} per million`,
          });
        }
        context.table.add({
          area: first ? `price per million tool calls (prices of ${PRICES.read_on})` : "",
          measure: `${side.label}: session mix, ${records.length} calls: ${Object.entries(items)
            .map(([item, cost]) => `${item} ${dollars(cost)}`)
            .join(", ")}`,
          value: dollars(total),
          floor: `stored ${Math.round(perCall.stored_bytes)} B per call: ${dollars(storagePerMillionPerMonth(perCall))} per month kept`,
          ratio: `rows written ${num(perCall.rows_written)} per call`,
          target: first ? atMost(total, TARGET_DOLLARS, " per million") : undefined,
        });
        const byTable = writtenByTable(records);
        if (byTable)
          context.table.add({
            measure: `${side.label}: rows written per call, by table (kind.table)`,
            value: byTable.map(([table, n]) => `${table} ${num(n)}`).join(", "),
          });
        results[side.label] = { per_call: perCall, dollars_per_million: items, total, records, written_by_table: byTable };
      } finally {
        await server.stop();
      }
    }
  } finally {
    old.remove();
  }
  context.table.add({ measure: `prices read ${PRICES.read_on}: ${PRICES.sources.join("; ")}`, value: "" });
  context.results.price = { prices: PRICES, target_dollars: TARGET_DOLLARS, sides: results };
}
