/**
 * What serving a big workflow's reads costs the Worker's isolate: the JSON export, the Markdown
 * export and the `waymark://workflows/{id}` resource of a workflow of many tasks and events,
 * this build against an older one (the whole-view reads), on the same stored data. For each
 * read and build: the server restarts (a clean heap), one read of a small workflow loads the
 * code, then `--gets` reads of the big one while the isolate's V8 heap is sampled through
 * wrangler's inspector (bench/lib/isolate-heap.ts), then `--gets` timed reads without it.
 *
 *   npx node bench/pages.ts [--tasks 5000] [--milestones 2] [--gets 3] [--old-ref 06e740d] [--new-ref <ref>] [--only new|old]
 *
 * --old-ref: the build before paged reads (06e740d). --new-ref: serve "this build" from a ref's
 * tree instead of the checkout (so editing the checkout during a long run changes nothing).
 * Progress goes to stderr, the table to stdout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/client";
import { checksumChanges, pool, timed } from "../test/support/agents.ts";
import { type DevServer, startDevServer } from "../test/support/dev-server.ts";
import { connect } from "../test/support/mcp-client.ts";
import { summarize } from "../test/support/stats.ts";
import { Inspector } from "./lib/isolate-heap.ts";
import { checkOutOldBuild, type OldBuild } from "./lib/old-build.ts";
import { bytes, count, ms } from "./lib/table.ts";

const { values } = parseArgs({
  options: {
    tasks: { type: "string", default: "5000" },
    milestones: { type: "string", default: "2" },
    gets: { type: "string", default: "3" },
    "old-ref": { type: "string", default: "06e740d" },
    "new-ref": { type: "string" },
    only: { type: "string" },
  },
});
const tasks = Number(values.tasks);
const milestones = Number(values.milestones);
const gets = Number(values.gets);
if (![tasks, milestones, gets].every(Number.isInteger) || tasks < 1 || tasks > 5000 || milestones < 0 || milestones > 50 || gets < 1) {
  console.error("usage: npx node bench/pages.ts [--tasks 1..5000] [--milestones 0..50] [--gets ≥1] [--old-ref <git ref>] [--only new|old]");
  process.exit(2);
}
const log = (message: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

interface Built {
  workflowId: string;
  shareUrl: string;
  events: number;
}

/** A call that must succeed, retried once with the same arguments (and so the same idempotency key). */
async function must(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  try {
    return await timed(client, null, name, args);
  } catch {
    return await timed(client, null, name, args);
  }
}

async function build(server: DevServer, size: number, label: string): Promise<Built> {
  const clients = await Promise.all(Array.from({ length: 6 }, () => connect(server, { negotiation: "auto" })));
  const first = clients[0] as Client;
  const key = (what: string) => `${label}-${what}`;
  const wf = await must(first, "start_workflow", {
    name: `${size} tasks`,
    plan: [{ step: "1", goal: "many tasks" }],
    idempotency_key: key("wf"),
  });
  const workflowId = String(wf.workflow_id);
  const done = await pool(size, clients.length, async (i) => {
    const client = clients[i % clients.length] as Client;
    const task = await must(client, "start_task", {
      workflow_id: workflowId,
      name: `Task ${i}`,
      goal: `Goal ${i}`,
      areas: ["src/**"],
      idempotency_key: key(`start-${i}`),
    });
    for (let m = 0; m < milestones; m++) {
      await must(client, "log_milestone", {
        task_id: task.task_id,
        message: `step ${m} of task ${i}`,
        idempotency_key: key(`m-${i}-${m}`),
      });
    }
    if (i % 10 === 0) {
      await must(client, "log_decision", {
        task_id: task.task_id,
        category: "trade_off",
        question: `Which way for task ${i}?`,
        chosen: "the simple one",
        reasoning: "fewer moving parts",
        idempotency_key: key(`d-${i}`),
      });
    }
    await must(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: `Summary of task ${i}`, achievements: ["one", "two"] },
      changes: checksumChanges(`src/t${i}`, 2),
      idempotency_key: key(`complete-${i}`),
    });
    if ((i + 1) % 500 === 0) log(`built ${count(i + 1)} of ${count(size)} tasks`);
  });
  const failed = done.find((r) => r.status === "rejected");
  if (failed) throw new Error(`building failed: ${String((failed as PromiseRejectedResult).reason)}`);
  await Promise.all(clients.map((c) => c.close()));
  return { workflowId, shareUrl: String(wf.share_url), events: 1 + size * (2 + milestones) + Math.ceil(size / 10) };
}

type Read = "export.json" | "export.md" | "resource";
const READS: Read[] = ["export.json", "export.md", "resource"];

/** One read of `read` on `workflow`; returns the bytes received. */
async function readOnce(server: DevServer, read: Read, workflow: Built, client: Client): Promise<number> {
  if (read === "resource") {
    const result = await client.readResource({ uri: `waymark://workflows/${workflow.workflowId}` });
    const first = result.contents[0];
    return first && "text" in first ? Buffer.byteLength(first.text) : 0;
  }
  const response = await fetch(`${workflow.shareUrl.replace(/^https?:\/\/[^/]+/, server.url)}/${read}`, {
    signal: AbortSignal.timeout(300_000),
  });
  const body = await response.arrayBuffer();
  if (!response.ok) throw new Error(`${read} answered ${response.status}`);
  return body.byteLength;
}

interface Measured {
  build: string;
  read: Read;
  bytes: number;
  medianMs: number;
  heapBefore: number;
  heapPeak: number;
  committedPeak: number;
}

async function measure(server: DevServer, buildLabel: string, read: Read, big: Built, small: Built): Promise<Measured> {
  await server.restart();
  const client = await connect(server, { negotiation: "auto" });
  await readOnce(server, read, small, client);
  // The heap first, on the restarted server (the inspector's sampling slows the isolate: not timed).
  const inspector = await Inspector.open(server.inspectorUrl());
  let size = 0;
  let heapBefore = Number.POSITIVE_INFINITY;
  let heapPeak = 0;
  let committedPeak = 0;
  const durations: number[] = [];
  try {
    for (let i = 0; i < gets; i++) {
      const { value, heap } = await inspector.during(() => readOnce(server, read, big, client));
      size = value;
      heapBefore = Math.min(heapBefore, heap.before.usedSize);
      heapPeak = Math.max(heapPeak, heap.peakUsed);
      committedPeak = Math.max(committedPeak, heap.peakTotal);
    }
    inspector.close();
    for (let i = 0; i < gets; i++) {
      const t0 = performance.now();
      await readOnce(server, read, big, client);
      durations.push(performance.now() - t0);
    }
  } finally {
    inspector.close();
    await client.close();
  }
  const m = { build: buildLabel, read, bytes: size, medianMs: summarize(durations).median, heapBefore, heapPeak, committedPeak };
  log(`${buildLabel} ${read}: ${bytes(m.bytes)}, ${ms(m.medianMs)}, heap ${bytes(heapBefore)} → peak ${bytes(heapPeak)}`);
  return m;
}

const persistTo = mkdtempSync(join(tmpdir(), "waymark-pages-bench-"));
const token = `bench-token-${Math.random().toString(36).slice(2, 10)}`;
const results: Measured[] = [];
let old: OldBuild | null = null;
const current = values["new-ref"] ? checkOutOldBuild(values["new-ref"]) : null;
try {
  let server = await startDevServer({ persistTo, token, ...(current ? { root: current.dir } : {}) });
  log(`building a workflow of ${count(tasks)} tasks, ${milestones} milestone(s) each`);
  const small = await build(server, 3, `small-${Date.now().toString(36)}`);
  const big = await build(server, tasks, `big-${Date.now().toString(36)}`);
  const builds = values.only ? [values.only] : ["new", "old"];
  for (const label of builds) {
    if (label === "old") {
      await server.stop();
      old = checkOutOldBuild(values["old-ref"]);
      log(`serving the same data from ${values["old-ref"]} (${old.commit.slice(0, 10)})`);
      server = await startDevServer({ persistTo, token, root: old.dir });
    }
    for (const read of READS)
      results.push(
        await measure(
          server,
          label === "old" ? `old (${values["old-ref"]})` : `this build${values["new-ref"] ? ` (${values["new-ref"]})` : ""}`,
          read,
          big,
          small,
        ),
      );
  }
  await server.stop();

  console.log(`\n${count(tasks)}-task workflow, ~${count(big.events)} events; ${gets} read(s) each after a restart\n`);
  console.log("| read | build | size | median | isolate heap used: before → peak (growth) | committed peak |");
  console.log("|---|---|--:|--:|---|--:|");
  for (const r of results) {
    console.log(
      `| ${r.read} | ${r.build} | ${bytes(r.bytes)} | ${ms(r.medianMs)} | ${bytes(r.heapBefore)} → ${bytes(r.heapPeak)} (+${bytes(r.heapPeak - r.heapBefore)}) | ${bytes(r.committedPeak)} |`,
    );
  }
} finally {
  old?.remove();
  current?.remove();
  rmSync(persistTo, { recursive: true, force: true });
}
