/**
 * Shared by the benches (bench/*.mjs, run by Node 22 with type stripping) and the bounded
 * end-to-end tests (test/e2e/{load,faults,fuzz}.test.ts): MCP clients against a running
 * `wrangler dev`, latency statistics, a seeded PRNG, full agent workflows that remember every
 * acknowledged write, and a consistency check of a workflow read back through its share link.
 *
 * It imports packages, Node built-ins and the import-free test/support/tool-outcome.ts (with its
 * extension, which Node's type stripping needs); the benches import it as `harness.ts`, the tests
 * without an extension.
 * Every request goes to the `url` it is given, which callers take from a local dev server.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { callToolOutcome } from "../../test/support/tool-outcome.ts";

export interface Target {
  /** http://127.0.0.1:<port> */
  url: string;
  token: string;
}

// ── statistics ───────────────────────────────────────────────────────────────

export interface Summary {
  n: number;
  min: number;
  median: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted samples. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Latency samples per label (tool name, "health", …). */
export class Recorder {
  readonly samples = new Map<string, number[]>();
  add(label: string, ms: number): void {
    const list = this.samples.get(label) ?? [];
    list.push(ms);
    this.samples.set(label, list);
  }
  all(): number[] {
    return [...this.samples.values()].flat();
  }
  summaries(): Record<string, Summary> {
    return Object.fromEntries([...this.samples].map(([label, xs]) => [label, summarize(xs)]));
  }
}

// ── seeded randomness (failures reproduce from the seed) ─────────────────────

export type Random = () => number;

/** mulberry32: small, fast, good enough to pick cases. */
export function prng(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

// ── MCP ──────────────────────────────────────────────────────────────────────

/** The official SDK v2 client over Streamable HTTP, as an agent connects. */
export async function connect(target: Target, token = target.token): Promise<Client> {
  const client = new Client({ name: "waymark-bench", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${target.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
  );
  return client;
}

export const callTool = callToolOutcome;

/** Calls a tool that must succeed, timing it into `recorder` under the tool's name. */
export async function timed(
  client: Client,
  recorder: Recorder | null,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const started = performance.now();
  const outcome = await callTool(client, name, args);
  recorder?.add(name, performance.now() - started);
  if (outcome.isError) throw new Error(`${name} failed: ${outcome.text.slice(0, 300)}`);
  return outcome.structured;
}

export async function healthRoundTrip(target: Target): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${target.url}/health`);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`/health answered ${response.status}`);
  return performance.now() - started;
}

// ── agent workflows that remember what was acknowledged ─────────────────────

/** Ids the server acknowledged; every one must be readable afterwards. */
export interface Acked {
  workflowId: string;
  shareUrl: string;
  tasks: string[];
  decisions: string[];
  issues: string[];
  milestones: string[];
  /** task id → number of files its complete_task sent (all distinct, all added). */
  completed: Map<string, number>;
  workflowCompleted: boolean;
}

export function newAcked(workflowId: string, shareUrl: string): Acked {
  return { workflowId, shareUrl, tasks: [], decisions: [], issues: [], milestones: [], completed: new Map(), workflowCompleted: false };
}

const blob = (seed: string) => {
  let hash = 0x811c9dc5;
  for (const ch of seed) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0").repeat(5);
};

/** Helper-style checksum changes: `files` new files under a path unique to the task. */
export function checksumChanges(prefix: string, files: number) {
  return {
    type: "checksum",
    transitions: Array.from({ length: files }, (_, k) => ({
      path: `${prefix}/file-${k}.ts`,
      before: null,
      after: { mode: "100644", blob: blob(`${prefix}/${k}`) },
    })),
  };
}

export interface AgentOptions {
  label: string;
  tasks: number;
  filesPerTask?: number;
  recorder?: Recorder | null;
  /** Called with every acknowledged write as soon as it is acknowledged (the faults bench keeps them across a crash). */
  onAcked?: (acked: Acked) => void;
}

/**
 * One agent's whole workflow: start_workflow; per task start_task, log_decision, log_issue,
 * two log_milestone, complete_task with files; get_workflow; complete_workflow.
 * 3 + 6 × tasks calls. Throws on the first failure, with `acked` holding what was acknowledged.
 */
export async function runAgentWorkflow(client: Client, options: AgentOptions, acked?: { current: Acked | null }): Promise<Acked> {
  const rec = options.recorder ?? null;
  const files = options.filesPerTask ?? 2;
  const wf = await timed(client, rec, "start_workflow", {
    name: `Load ${options.label}`,
    description: "bench workflow",
    plan: [{ step: "1", goal: "work" }],
  });
  const state = newAcked(String(wf.workflow_id), String(wf.share_url));
  if (acked) acked.current = state;
  options.onAcked?.(state);
  for (let t = 0; t < options.tasks; t++) {
    const task = await timed(client, rec, "start_task", {
      workflow_id: state.workflowId,
      name: `Task ${t}`,
      goal: `Goal ${t}`,
      areas: [`src/${options.label}/**`],
    });
    const taskId = String(task.task_id);
    state.tasks.push(taskId);
    const decision = await timed(client, rec, "log_decision", {
      task_id: taskId,
      category: "trade_off",
      question: `Which way for ${t}?`,
      options_considered: ["left", "right"],
      chosen: "left",
      reasoning: "shorter",
    });
    state.decisions.push(String(decision.id));
    const issue = await timed(client, rec, "log_issue", {
      task_id: taskId,
      type: "bug_encountered",
      description: `Bug in ${t}`,
      resolution: "fixed",
      requires_human_review: t % 2 === 0,
    });
    state.issues.push(String(issue.id));
    for (const progress of [30, 70]) {
      const ms = await timed(client, rec, "log_milestone", { task_id: taskId, message: `Task ${t} at ${progress}%`, progress });
      state.milestones.push(String(ms.id));
    }
    await timed(client, rec, "complete_task", {
      task_id: taskId,
      status: "success",
      outcome: { summary: `Task ${t} done`, next_steps: ["next"] },
      changes: checksumChanges(`src/${options.label}/t${t}`, files),
    });
    state.completed.set(taskId, files);
  }
  await timed(client, rec, "get_workflow", { workflow_id: state.workflowId });
  await timed(client, rec, "complete_workflow", { workflow_id: state.workflowId, status: "success", summary: "all done" });
  state.workflowCompleted = true;
  return state;
}

/** Runs `count` jobs with at most `width` at a time. */
export async function pool<T>(count: number, width: number, job: (index: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(count);
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, count) }, async () => {
    for (let i = next++; i < count; i = next++) {
      try {
        results[i] = { status: "fulfilled", value: await job(i) };
      } catch (reason) {
        results[i] = { status: "rejected", reason };
      }
    }
  });
  await Promise.all(lanes);
  return results;
}

// ── the two load shapes (bench/load.mjs at full size, bench/run.mjs, test/e2e/load.test.ts smaller) ──

export interface AgentsResult {
  agents: number;
  workflows: number;
  calls: number;
  seconds: number;
  latency: Summary;
  byTool: Record<string, Summary>;
  errors: string[];
  problems: string[];
}

export interface WritersResult {
  writers: number;
  calls: number;
  seconds: number;
  events: number;
  latency: Summary;
  errors: string[];
  problems: string[];
}

export async function loadAgents(target: Target, options: { agents: number; workflows: number; tasks: number }): Promise<AgentsResult> {
  const recorder = new Recorder();
  const started = performance.now();
  const done: Acked[] = [];
  const results = await pool(options.agents, options.agents, async (i) => {
    const client = await connect(target);
    for (let w = 0; w < options.workflows; w++) {
      done.push(await runAgentWorkflow(client, { label: `agent${i}-w${w}`, tasks: options.tasks, recorder }));
    }
    await client.close();
  });
  const seconds = (performance.now() - started) / 1000;
  const errors = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
  const problems: string[] = [];
  for (const acked of done) problems.push(...(await verifyWorkflow(acked)));
  return {
    agents: options.agents,
    workflows: options.workflows,
    calls: recorder.all().length,
    seconds,
    latency: summarize(recorder.all()),
    byTool: recorder.summaries(),
    errors,
    problems,
  };
}

export async function loadWriters(target: Target, options: { writers: number; writes: number }): Promise<WritersResult> {
  const owner = await connect(target);
  const wf = await timed(owner, null, "start_workflow", { name: "Many writers" });
  const acked = newAcked(String(wf.workflow_id), String(wf.share_url));
  const shared: string[] = [];
  for (const name of ["Shared A", "Shared B"]) {
    shared.push(
      String((await timed(owner, null, "start_task", { workflow_id: acked.workflowId, name, goal: "take many writes" })).task_id),
    );
  }
  acked.tasks.push(...shared);
  const recorder = new Recorder();
  const started = performance.now();
  const results = await pool(options.writers, options.writers, async (w) => {
    const client = await connect(target);
    for (let i = 0; i < options.writes; i++) {
      const taskId = shared[(w + i) % 2] as string;
      if (i % 4 === 3) {
        const d = await timed(client, recorder, "log_decision", {
          task_id: taskId,
          category: "trade_off",
          question: `w${w} #${i}?`,
          chosen: "y",
          reasoning: "r",
        });
        acked.decisions.push(String(d.id));
      } else {
        const m = await timed(client, recorder, "log_milestone", { task_id: taskId, message: `writer ${w} #${i}`, progress: i });
        acked.milestones.push(String(m.id));
      }
    }
    const own = await timed(client, recorder, "start_task", {
      workflow_id: acked.workflowId,
      parent_task_id: shared[0],
      name: `Writer ${w}`,
      goal: "own",
    });
    acked.tasks.push(String(own.task_id));
    await timed(client, recorder, "complete_task", {
      task_id: own.task_id,
      status: "success",
      outcome: { summary: `writer ${w}` },
      changes: checksumChanges(`src/writer${w}`, 1),
    });
    acked.completed.set(String(own.task_id), 1);
    await client.close();
  });
  const seconds = (performance.now() - started) / 1000;
  const events = await readEvents(acked.shareUrl);
  const view = await exportView(acked.shareUrl);
  return {
    writers: options.writers,
    calls: recorder.all().length,
    seconds,
    events: events.length,
    latency: summarize(recorder.all()),
    errors: results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : [])),
    problems: checkConsistency(view, events, acked),
  };
}

// ── reading a workflow back through its share link ───────────────────────────

export interface EventLite {
  seq: number;
  type: string;
  task_id: string | null;
  data: Record<string, unknown>;
}

interface TaskLite {
  id: string;
  status: string;
  outcome: unknown;
  completed_at: string | null;
  files_changed: { added: string[]; modified: string[]; deleted: string[] } | null;
  verification: unknown;
}

export interface ViewLite {
  workflow: { id: string; status: string };
  tasks: TaskLite[];
  decisions: { id: string }[];
  issues: { id: string }[];
  milestones: { id: string }[];
  totals: { tasks: number; open_tasks: number; files_changed: number; decisions: number; issues: number };
  last_seq: number;
}

export async function exportView(shareUrl: string): Promise<ViewLite> {
  const response = await fetch(`${shareUrl}/export.json`, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`${shareUrl}/export.json answered ${response.status}`);
  return (await response.json()) as ViewLite;
}

/** The whole event log from the workflow object's live feed (catch-up from `after`, until "caught_up"). */
export function readEvents(shareUrl: string, after = 0, timeoutMs = 30_000): Promise<EventLite[]> {
  const wsUrl = `${shareUrl.replace(/^http/, "ws")}/ws?after=${after}`;
  return new Promise((resolve, reject) => {
    const events: EventLite[] = [];
    const socket = new WebSocket(wsUrl);
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no caught_up from ${wsUrl} within ${timeoutMs} ms`));
    }, timeoutMs);
    // addEventListener: the one shape both Node's WebSocket and the workers types (which type-check this file) agree on.
    socket.addEventListener("message", (message) => {
      const body = JSON.parse(String(message.data)) as { type: string; event?: EventLite };
      if (body.type === "event" && body.event) events.push(body.event);
      if (body.type === "caught_up") {
        clearTimeout(timer);
        socket.close();
        resolve(events);
      }
    });
    socket.addEventListener("error", () => {
      clearTimeout(timer);
      reject(new Error(`WebSocket ${wsUrl} failed`));
    });
  });
}

/**
 * Everything that must hold for a workflow after any run, crash or not: the event log is
 * 1..last_seq without a gap or a repeat; rows and events agree (a task.completed event means
 * the task row has its outcome and files; counts match); and every acknowledged id is there.
 * Returns the problems found (empty = consistent).
 */
export function checkConsistency(view: ViewLite, events: readonly EventLite[], acked?: Acked): string[] {
  const problems: string[] = [];
  const seqs = events.map((e) => e.seq);
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i + 1) {
      problems.push(`event seq not gap-free: position ${i} has seq ${seqs[i]}`);
      break;
    }
  }
  if (seqs.length !== view.last_seq) problems.push(`${seqs.length} events but last_seq ${view.last_seq}`);
  const count = (type: string) => events.filter((e) => e.type === type).length;
  const expect = (label: string, actual: number, wanted: number) => {
    if (actual !== wanted) problems.push(`${label}: ${actual} ≠ ${wanted}`);
  };
  expect("workflow.started events", count("workflow.started"), 1);
  expect("task.started events vs tasks", count("task.started"), view.tasks.length);
  expect("decision.logged events vs decisions", count("decision.logged"), view.decisions.length);
  expect("issue.logged events vs issues", count("issue.logged"), view.issues.length);
  expect("milestone.logged events vs milestones", count("milestone.logged"), view.milestones.length);
  expect("workflow.completed events", count("workflow.completed"), view.workflow.status === "active" ? 0 : 1);
  expect("totals.tasks", view.totals.tasks, view.tasks.length);
  expect("totals.decisions", view.totals.decisions, view.decisions.length);
  expect("totals.issues", view.totals.issues, view.issues.length);
  const completedEvents = new Map<string, number>();
  for (const e of events)
    if (e.type === "task.completed" && e.task_id) completedEvents.set(e.task_id, (completedEvents.get(e.task_id) ?? 0) + 1);
  const tasks = new Map(view.tasks.map((t) => [t.id, t]));
  for (const [taskId, n] of completedEvents) {
    if (n !== 1) problems.push(`task ${taskId}: ${n} task.completed events`);
    const task = tasks.get(taskId);
    if (!task) problems.push(`task ${taskId}: completed event but no task row`);
    else if (
      task.status === "in_progress" ||
      task.outcome === null ||
      task.completed_at === null ||
      !task.files_changed ||
      !task.verification
    ) {
      problems.push(`task ${taskId}: completed event but half-written row (status ${task.status})`);
    }
  }
  for (const task of view.tasks) {
    if (task.status !== "in_progress" && !completedEvents.has(task.id)) problems.push(`task ${task.id}: ${task.status} without an event`);
  }
  expect("totals.open_tasks", view.totals.open_tasks, view.tasks.filter((t) => t.status === "in_progress").length);
  const paths = new Set(
    view.tasks.flatMap((t) => (t.files_changed ? [...t.files_changed.added, ...t.files_changed.modified, ...t.files_changed.deleted] : [])),
  );
  expect("totals.files_changed vs distinct paths", view.totals.files_changed, paths.size);
  for (const [label, list] of [
    ["decision", view.decisions],
    ["issue", view.issues],
    ["milestone", view.milestones],
    ["task", view.tasks],
  ] as const) {
    if (new Set(list.map((x) => x.id)).size !== list.length) problems.push(`duplicate ${label} ids`);
  }
  if (acked) {
    const has = (list: { id: string }[], ids: string[], label: string) => {
      const present = new Set(list.map((x) => x.id));
      const missing = ids.filter((id) => !present.has(id));
      if (missing.length) problems.push(`${missing.length} acknowledged ${label}(s) missing, e.g. ${missing[0]}`);
    };
    has(view.tasks, acked.tasks, "task");
    has(view.decisions, acked.decisions, "decision");
    has(view.issues, acked.issues, "issue");
    has(view.milestones, acked.milestones, "milestone");
    for (const [taskId, files] of acked.completed) {
      const task = tasks.get(taskId);
      if (!task || task.status === "in_progress") problems.push(`acknowledged completion of ${taskId} missing`);
      else if (task.files_changed?.added.length !== files)
        problems.push(`task ${taskId}: ${task.files_changed?.added.length} files, sent ${files}`);
    }
    if (acked.workflowCompleted && view.workflow.status === "active") problems.push("acknowledged complete_workflow missing");
  }
  return problems;
}

/** Reads a workflow back (export + the full event log) and checks it. */
export async function verifyWorkflow(acked: Acked): Promise<string[]> {
  const [view, events] = await Promise.all([exportView(acked.shareUrl), readEvents(acked.shareUrl)]);
  return checkConsistency(view, events, acked).map((p) => `${acked.workflowId}: ${p}`);
}

// ── faults ───────────────────────────────────────────────────────────────────

/**
 * The process group of the `wrangler dev` serving `port` (npx, wrangler and workerd share it:
 * the dev server starts it detached). Found through /proc by the port on wrangler's command line.
 */
export function devServerGroup(port: number): number | null {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const at = argv.indexOf("--port");
      if (!argv.some((a) => a.endsWith("wrangler") || a === "dev") || at < 0 || argv[at + 1] !== String(port)) continue;
      // /proc/<pid>/stat: "pid (comm) state ppid pgrp …"; comm may contain spaces, so split after ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp > 1) return pgrp;
    } catch {
      // The process ended while we looked.
    }
  }
  return null;
}

/** kill -9 of the whole dev server (npx, wrangler, workerd) at once: no shutdown path runs. */
export function crashDevServer(port: number): number {
  const group = devServerGroup(port);
  if (group === null) throw new Error(`no wrangler dev process found for port ${port}`);
  process.kill(-group, "SIGKILL");
  return group;
}

/** Freezes (SIGSTOP) or thaws (SIGCONT) the dev server's process group. */
export function signalDevServer(port: number, signal: "SIGSTOP" | "SIGCONT"): void {
  const group = devServerGroup(port);
  if (group === null) throw new Error(`no wrangler dev process found for port ${port}`);
  process.kill(-group, signal);
}

/** Waits until nothing answers on the URL (after a crash). */
export async function waitDown(target: Target, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await fetch(`${target.url}/health`, { signal: AbortSignal.timeout(500) });
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${target.url} still answers ${timeoutMs} ms after the crash`);
}
