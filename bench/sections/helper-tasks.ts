/**
 * What a task costs through the helper (`waymark mcp`, its built CLI) with everything a real
 * session gives it: an approved device key (so the snapshot and the changes are signed), the agent's
 * edits spooled as Claude Code's edit hook spools them (so complete_task replays them into line
 * ranges) and one shell command the hook observed. This build's helper and the old build's
 * (`--old-ref`) take turns on the same repository and server:
 * - round trips: the requests each tool call makes to the endpoint, counted by a proxy in front of
 *   it (the connection's handshake, once per process, left out); target exactly 1;
 * - cost per complete_task at 10 and at 10,000 files (10 files edited per task): the helper's
 *   wall time and CPU (its threads', its git children's and those of the shell that starts them,
 *   from /proc) against one `git status`
 *   plus one log_milestone through the same helper (wall; CPU: git's and the helper's for that
 *   call); target ≤ 1.2x; with an old build, the two builds' completions of each round compared too
 *   (the median of the rounds' differences: the load of each moment weighs on both);
 * - the perf loop: tasks of 20 changed files one after another (start_task, the edits, complete_task)
 *   through one helper, in blocks the two builds take in turn; tasks per second, target ≥ 10. The
 *   tasks work in one part of the repository (20 of the same 100 files each, nothing committed),
 *   so the files dirty at each start stay a hundred, as in a session on one module.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import type { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { DevServer } from "../../test/support/dev-server.ts";
import { startDroppingProxy } from "../../test/support/dropping-proxy.ts";
import { callTool } from "../../test/support/mcp-client.ts";
import { summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { processCpuMs, waitedChildrenCpuMs } from "../lib/process-cpu.ts";
import { buildRepo, filePath, gitStatus, time } from "../lib/repos.ts";
import { atLeast, atMost, count, ms, percentiles, times } from "../lib/table.ts";
import { HELPER_CACHES, helperClient, oldHelper, timedCall } from "./helper.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "client-helper", "dist", "bin.js");
const AREA = "helper tasks (waymark mcp: signed, line capture, a command)";
const COST_RATIO_TARGET = 1.2;
const TASKS_PER_SECOND_TARGET = 10;
const EDITS_PER_TASK = 10;
const LOOP_FILES_PER_TASK = 20;
const LOOP_REPO_FILES = 1000;
/** The files the loop's tasks edit (20 of them each time, in turn). */
const LOOP_WORKING_SET = 100;
const LOOP_BLOCK = 50;
/**
 * Tasks per workflow in the loop: a signed task of 20 files with its line ranges stores about 67 KB,
 * and a workflow's byte quota is bounded (at 64 MiB, the 1,000th task of one workflow was refused).
 */
const LOOP_TASKS_PER_WORKFLOW = 500;
const WARM_UP_TASKS = 4;
/** The connection's own requests: once per helper process, not per tool call. */
const HANDSHAKE = new Set(["initialize", "notifications/initialized", "GET /mcp"]);

interface Side {
  label: string;
  bin: string;
  cache: string;
  config: string;
  client: Client;
  pid: number;
  workflowId: string;
  /** Edits so far, so every edit writes new content. */
  edits: number;
}

/** A device key in `config` (made by this build's `waymark device`), approved by the account's owner. */
async function approvedDevice(server: DevServer, config: string): Promise<void> {
  const made = spawnSync(process.execPath, [BIN, "device"], { env: { ...process.env, XDG_CONFIG_HOME: config }, encoding: "utf8" });
  if (made.status !== 0) throw new Error(`waymark device failed: ${made.stderr}`);
  const file = JSON.parse(readFileSync(join(config, "waymark", "device-key.json"), "utf8")) as { key: { x: string } };
  const response = await fetch(`${server.url}/api/devices`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: `bench ${file.key.x.slice(0, 6)}`, key: file.key.x }),
  });
  if (response.status !== 201) throw new Error(`approving the bench's device answered ${response.status}: ${await response.text()}`);
}

async function openSide(
  server: DevServer,
  target: { url: string; token: string },
  repo: string,
  label: string,
  bin: string,
): Promise<Side> {
  mkdirSync(HELPER_CACHES, { recursive: true });
  const cache = mkdtempSync(join(HELPER_CACHES, "cache-"));
  const config = mkdtempSync(join(HELPER_CACHES, "config-"));
  await approvedDevice(server, config);
  const client = await helperClient(target, repo, cache, bin, config);
  const pid = (client.transport as StdioClientTransport | undefined)?.pid;
  if (!pid) throw new Error("the helper's process id is unknown");
  const workflow = await timedCall(client, "start_workflow", { name: `Helper tasks (${label})`, force_new: true });
  return { label, bin, cache, config, client, pid, workflowId: String(workflow.structured.workflow_id), edits: 0 };
}

async function closeSide(side: Side): Promise<void> {
  await side.client.close();
  rmSync(side.cache, { recursive: true, force: true });
  rmSync(side.config, { recursive: true, force: true });
}

/** Writes a file as the agent's Edit tool does, and spools the hook payload Claude Code gives for it. */
function agentEdit(side: Side, repo: string, path: string): void {
  const absolute = join(repo, path);
  const before = readFileSync(absolute, "utf8");
  const line = before.slice(0, before.indexOf("\n"));
  const replaced = `${line.replace(/ \(edit \d+\)$/, "")} (edit ${++side.edits})`;
  writeFileSync(absolute, before.replace(line, replaced));
  spool(side, repo, {
    tool_name: "Edit",
    tool_input: { file_path: absolute, old_string: line, new_string: replaced },
    tool_response: { filePath: absolute, oldString: line, newString: replaced, originalFile: before, replaceAll: false },
    tool_use_id: `toolu_bench_${side.edits}`,
  });
}

/** A shell command the agent ran, as Claude Code's PostToolUse hook reports it. */
function agentCommand(side: Side, repo: string): void {
  spool(side, repo, {
    tool_name: "Bash",
    tool_input: { command: "npm test", description: "Run the tests" },
    tool_response: { stdout: "ok", stderr: "", interrupted: false },
    duration_ms: 1200,
    tool_use_id: `toolu_bench_cmd_${side.edits}`,
  });
}

/** One payload in the spool, as the installed hook line writes it (`cat > $(mktemp …/claude.XXXXXXXXXX)`). */
function spool(side: Side, repo: string, payload: Record<string, unknown>): void {
  const dir = join(side.cache, "waymark", "spool");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const name = `claude.${Math.random().toString(36).slice(2, 12).padEnd(10, "0")}`;
  writeFileSync(
    join(dir, name),
    JSON.stringify({
      session_id: `bench-${side.label}`,
      cwd: repo,
      hook_event_name: "PostToolUse",
      permission_mode: "acceptEdits",
      ...payload,
    }),
  );
}

/** What each request asked for: a JSON-RPC method (a call with its tool's name), else the HTTP method and path. */
function asked(request: { method: string; path: string; body: string }): string {
  if (request.method !== "POST") return `${request.method} ${request.path.replace(/\?.*/, "")}`;
  try {
    const message = JSON.parse(request.body) as { method?: string; params?: { name?: string } };
    return message.method === "tools/call" ? `tools/call ${message.params?.name}` : String(message.method);
  } catch {
    return "POST (not JSON)";
  }
}

/** Requests per tool call through one helper: a short task's calls, counted by a proxy in front of the endpoint. */
async function roundTrips(server: DevServer, repo: string, label: string, bin: string): Promise<{ calls: number; requests: string[] }> {
  const proxy = await startDroppingProxy(server.url);
  const side = await openSide(server, { url: proxy.url, token: server.token }, repo, label, bin);
  let calls = 1; // start_workflow
  try {
    const task = await timedCall(side.client, "start_task", { workflow_id: side.workflowId, name: "Round trips", goal: "count" });
    await timedCall(side.client, "log_milestone", { task_id: task.structured.task_id, message: "halfway" });
    agentEdit(side, repo, filePath(0));
    await timedCall(side.client, "complete_task", { task_id: task.structured.task_id, status: "success", outcome: { summary: "s" } });
    await timedCall(side.client, "get_workflow", { workflow_id: side.workflowId });
    calls += 4;
  } finally {
    // The helper's work after its last answer ends before its process does: every request it made is counted.
    await closeSide(side);
    await proxy.close();
  }
  return {
    calls,
    requests: proxy
      .requests()
      .map(asked)
      .filter((what) => !HANDSHAKE.has(what)),
  };
}

interface CostSamples {
  statusMs: number[];
  milestoneMs: number[];
  completeMs: number[];
  /** Each measured task's complete_task CPU, in the order of the rounds (paired with the other side's). */
  completeCpu: number[];
  /** CPU sums over the measured tasks. */
  statusCpuMs: number;
  milestoneCpuMs: number;
  completeCpuMs: number;
  /** complete_task's CPU summed over the measured tasks by where it ran (helperCpuParts). */
  completeParts: CpuParts;
}

/** One task of one side: start_task, log_milestone, the agent's edits and command, complete_task; timed and CPU-counted. */
async function costTask(side: Side, repo: string, edited: readonly string[], index: number, samples: CostSamples | null): Promise<void> {
  const task = await timedCall(side.client, "start_task", {
    workflow_id: side.workflowId,
    name: `Task ${index}`,
    goal: "g",
    areas: ["d0/**"],
  });
  let cpu = helperCpuMs(side.pid);
  const log = await timedCall(side.client, "log_milestone", { task_id: task.structured.task_id, message: "halfway" });
  const milestoneCpu = helperCpuMs(side.pid) - cpu;
  for (const path of edited) agentEdit(side, repo, path);
  agentCommand(side, repo);
  cpu = helperCpuMs(side.pid);
  const partsBefore = helperCpuParts(side.pid);
  const done = await timedCall(side.client, "complete_task", {
    task_id: task.structured.task_id,
    status: "success",
    outcome: { summary: "s" },
  });
  const lines = (done.structured.files_changed as { line_totals?: { added?: number } } | undefined)?.line_totals;
  if (!lines) throw new Error(`complete_task through the ${side.label} helper reported no line totals`);
  if (!samples) return;
  samples.milestoneMs.push(log.ms);
  samples.completeMs.push(done.ms);
  samples.milestoneCpuMs += milestoneCpu;
  // The work the helper does after its answer (records removed) is counted with the call: read before the next task.
  const completeCpu = (await settledCpu(side.pid)) - cpu;
  const partsAfter = helperCpuParts(side.pid);
  for (const part of CPU_PARTS) samples.completeParts[part] += partsAfter[part] - partsBefore[part];
  samples.completeCpuMs += completeCpu;
  samples.completeCpu.push(completeCpu);
}

/**
 * The helper's CPU: its own (threads and the children it waited for) and that of every process
 * under it not yet waited for (the shell that starts its git processes, client-helper/src/git/spawner.ts,
 * and the gits it started): a process's CPU reaches its parent's figures only once it has been waited for.
 */
function helperCpuMs(pid: number): number {
  let total = processCpuMs(pid);
  for (const child of descendants(pid)) total += ownAndWaitedMs(child);
  return total;
}

/** Where the helper's CPU runs: its main thread, V8's own threads, libuv's thread pool, and its child processes. */
const CPU_PARTS = ["main thread", "V8 threads (compiler, GC)", "thread pool", "git and the shell starting it"] as const;
type CpuParts = Record<(typeof CPU_PARTS)[number], number>;

/**
 * helperCpuMs split by where it ran: the helper's threads told apart by name (/proc's schedstat, as
 * processCpuMs reads them: libuv's pool threads are `libuv-worker`, V8's workers and its other
 * threads keep the process's name), the rest being its child processes (git, the shells that start
 * git: client-helper/src/git/spawner.ts), waited for or not.
 */
function helperCpuParts(pid: number): CpuParts {
  const parts: CpuParts = { "main thread": 0, "V8 threads (compiler, GC)": 0, "thread pool": 0, "git and the shell starting it": 0 };
  let threads = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
        const ms = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
        const part = tid === String(pid) ? "main thread" : name === "libuv-worker" ? "thread pool" : "V8 threads (compiler, GC)";
        parts[part] += ms;
        threads += ms;
      } catch {
        // The thread ended while we looked.
      }
    }
  } catch {
    // The process ended.
  }
  parts["git and the shell starting it"] = helperCpuMs(pid) - threads;
  return parts;
}

/** Every process under `pid` not yet waited for (zombies included: their times are final). */
function descendants(pid: number): number[] {
  const found: number[] = [];
  const walk = (parent: number, depth: number) => {
    if (depth > 8) return;
    try {
      for (const tid of readdirSync(`/proc/${parent}/task`)) {
        try {
          for (const child of readFileSync(`/proc/${parent}/task/${tid}/children`, "utf8").split(" ")) {
            if (!child) continue;
            found.push(Number(child));
            walk(Number(child), depth + 1);
          }
        } catch {
          // The thread ended while we looked.
        }
      }
    } catch {
      // The process ended.
    }
  };
  walk(pid, 0);
  return found;
}

/** utime + stime + cutime + cstime of `pid` in ms (0 once it is gone). */
function ownAndWaitedMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** The process's CPU once it has been idle for a moment (its work after an answer included). */
async function settledCpu(pid: number): Promise<number> {
  let last = helperCpuMs(pid);
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const now = helperCpuMs(pid);
    if (now - last < 0.5) return now;
    last = now;
  }
  return last;
}

function emptySamples(): CostSamples {
  return {
    statusMs: [],
    milestoneMs: [],
    completeMs: [],
    completeCpu: [],
    statusCpuMs: 0,
    milestoneCpuMs: 0,
    completeCpuMs: 0,
    completeParts: { "main thread": 0, "V8 threads (compiler, GC)": 0, "thread pool": 0, "git and the shell starting it": 0 },
  };
}

/** Cost per complete_task at `files` files, the sides taking turns task by task; adds its rows. */
async function costAt(
  context: BenchContext,
  server: DevServer,
  files: number,
  builds: [string, string][],
): Promise<Record<string, unknown>> {
  const samples = context.quick ? 8 : 25;
  const repo = await buildRepo(files);
  const sides: Side[] = [];
  const measured = new Map<string, CostSamples>();
  try {
    for (const [label, bin] of builds) {
      sides.push(await openSide(server, server, repo, label, bin));
      measured.set(label, emptySamples());
    }
    const edited = Array.from({ length: Math.min(EDITS_PER_TASK, files) }, (_, k) => filePath((k * 97) % files));
    for (let i = -WARM_UP_TASKS; i < samples; i++) {
      for (let turn = 0; turn < sides.length; turn++) {
        const side = sides[(i + WARM_UP_TASKS + turn) % sides.length] as Side;
        const mine = i >= 0 ? (measured.get(side.label) as CostSamples) : null;
        // The floor's first half: git status in this repository, as a process (its CPU from this process's waited children).
        const statusCpu = waitedChildrenCpuMs();
        const statusMs = await time(() => gitStatus(repo));
        if (mine) {
          mine.statusMs.push(statusMs);
          mine.statusCpuMs += waitedChildrenCpuMs() - statusCpu;
        }
        await costTask(side, repo, edited, i, mine);
      }
    }
  } finally {
    for (const side of sides) await closeSide(side);
    rmSync(repo, { recursive: true, force: true });
  }
  const results: Record<string, unknown> = {};
  for (const [index, [label]] of builds.entries()) {
    const s = measured.get(label) as CostSamples;
    const status = summarize(s.statusMs);
    const milestone = summarize(s.milestoneMs);
    const complete = summarize(s.completeMs);
    const floorMs = status.median + milestone.median;
    const cpu = { status: s.statusCpuMs / samples, milestone: s.milestoneCpuMs / samples, complete: s.completeCpuMs / samples };
    const floorCpu = cpu.status + cpu.milestone;
    const target = index === 0;
    context.table.add({
      area: index === 0 ? `${AREA}, ${count(files)} files` : "",
      measure: `${label}: complete_task wall (${Math.min(EDITS_PER_TASK, files)} files edited), n=${complete.n}; floor git status ${ms(status.median)} + log_milestone via helper ${ms(milestone.median)}`,
      value: percentiles(complete),
      floor: ms(floorMs),
      ratio: times(complete.median, floorMs),
      target: target ? atMost(complete.median / floorMs, COST_RATIO_TARGET, "x") : undefined,
    });
    context.table.add({
      measure: `${label}: helper CPU per complete_task (its threads, git and the shell starting git); floor git status ${ms(cpu.status)} + helper's log_milestone ${ms(cpu.milestone)}`,
      value: ms(cpu.complete),
      floor: ms(floorCpu),
      ratio: times(cpu.complete, floorCpu),
      target: target ? atMost(cpu.complete / floorCpu, COST_RATIO_TARGET, "x") : undefined,
    });
    const parts = Object.fromEntries(CPU_PARTS.map((part) => [part, s.completeParts[part] / samples])) as CpuParts;
    context.table.add({
      measure: `${label}: that CPU by where it ran`,
      value: CPU_PARTS.map((part) => `${part} ${ms(parts[part])}`).join(", "),
    });
    results[label] = { status, milestone, complete, cpu_ms: cpu, cpu_parts_ms: parts, floor_ms: floorMs, floor_cpu_ms: floorCpu };
  }
  const [mine, old] = builds.map(([label]) => measured.get(label) as CostSamples);
  if (mine && old) results.paired = pairedDifference(context, mine, old, builds[1]?.[0] ?? "");
  return results;
}

/**
 * This build against the old one round by round: in each round both sides complete a task one after
 * the other, so the load of that moment weighs on both; the median of the rounds' differences moves
 * far less with the machine's load than the difference of two medians taken over a whole run.
 */
function pairedDifference(context: BenchContext, mine: CostSamples, old: CostSamples, oldLabel: string): Record<string, number> {
  const differences = (a: readonly number[], b: readonly number[]) => a.map((x, k) => x - (b[k] ?? Number.NaN));
  const wall = summarize(differences(mine.completeMs, old.completeMs)).median;
  const floor = summarize(
    differences(
      mine.statusMs.map((x, k) => x + (mine.milestoneMs[k] ?? Number.NaN)),
      old.statusMs.map((x, k) => x + (old.milestoneMs[k] ?? Number.NaN)),
    ),
  ).median;
  const cpu = summarize(differences(mine.completeCpu, old.completeCpu)).median;
  context.table.add({
    measure: `this build − ${oldLabel}, round by round (both sides' tasks back to back): median of the differences; the floors' (git status + log_milestone) ${signedMs(floor)}`,
    value: `wall ${signedMs(wall)}, CPU ${signedMs(cpu)}`,
  });
  return { complete_wall_ms: wall, floor_wall_ms: floor, complete_cpu_ms: cpu };
}

function signedMs(value: number): string {
  return `${value >= 0 ? "+" : "−"}${ms(Math.abs(value))}`;
}

/** `tasks` tasks of 20 changed files per side, in blocks the sides take in turn; tasks per second of each. */
async function perfLoop(
  context: BenchContext,
  server: DevServer,
  builds: [string, string][],
  tasks: number,
): Promise<Record<string, unknown>> {
  const repo = await buildRepo(LOOP_REPO_FILES);
  const sides: Side[] = [];
  const seconds = new Map<string, number>();
  const cpu = new Map<string, number>();
  try {
    for (const [label, bin] of builds) {
      sides.push(await openSide(server, server, repo, label, bin));
      seconds.set(label, 0);
      cpu.set(label, 0);
    }
    let next = 0;
    const blocks = Math.ceil(tasks / LOOP_BLOCK);
    for (let block = 0; block < blocks; block++) {
      // A B, then B A: neither side always runs on a machine the other just warmed.
      const order = block % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) {
        if (block > 0 && (block * LOOP_BLOCK) % LOOP_TASKS_PER_WORKFLOW === 0) {
          const fresh = await timedCall(side.client, "start_workflow", {
            name: `Perf loop (${side.label}), from task ${block * LOOP_BLOCK}`,
            force_new: true,
          });
          side.workflowId = String(fresh.structured.workflow_id);
        }
        const before = helperCpuMs(side.pid);
        const started = performance.now();
        for (let k = 0; k < Math.min(LOOP_BLOCK, tasks - block * LOOP_BLOCK); k++) {
          const files = Array.from({ length: LOOP_FILES_PER_TASK }, () => filePath(((next++ % LOOP_WORKING_SET) * 7) % LOOP_REPO_FILES));
          const task = await timedCall(side.client, "start_task", { workflow_id: side.workflowId, name: `Loop ${k}`, goal: "g" });
          for (const path of files) agentEdit(side, repo, path);
          await timedCall(side.client, "complete_task", { task_id: task.structured.task_id, status: "success", outcome: { summary: "s" } });
        }
        seconds.set(side.label, (seconds.get(side.label) ?? 0) + (performance.now() - started) / 1000);
        cpu.set(side.label, (cpu.get(side.label) ?? 0) + (await settledCpu(side.pid)) - before);
      }
      context.log(`helper tasks: perf loop ${Math.min((block + 1) * LOOP_BLOCK, tasks)}/${tasks} tasks per side`);
    }
    const checked = await callTool((sides[0] as Side).client, "get_workflow", { workflow_id: (sides[0] as Side).workflowId });
    if (checked.isError || !checked.text.includes("done:"))
      context.fail(`perf loop: the workflow reads back wrong: ${checked.text.slice(0, 200)}`);
  } finally {
    for (const side of sides) await closeSide(side);
    rmSync(repo, { recursive: true, force: true });
  }
  const results: Record<string, unknown> = {};
  const first = builds[0]?.[0] ?? "";
  const firstRate = tasks / (seconds.get(first) ?? Number.NaN);
  for (const [index, [label]] of builds.entries()) {
    const rate = tasks / (seconds.get(label) ?? Number.NaN);
    const cpuPerTask = (cpu.get(label) ?? Number.NaN) / tasks;
    context.table.add({
      area:
        index === 0
          ? `helper perf loop: ${count(tasks)} tasks × ${LOOP_FILES_PER_TASK} files (of ${LOOP_WORKING_SET}), ${count(LOOP_REPO_FILES)}-file repository, a workflow per ${LOOP_TASKS_PER_WORKFLOW} tasks`
          : "",
      measure: `${label}: tasks per second (start_task, ${LOOP_FILES_PER_TASK} spooled edits, complete_task); helper CPU ${ms(cpuPerTask)} per task`,
      value: `${rate.toFixed(2)} tasks/s (${(seconds.get(label) ?? 0).toFixed(1)} s)`,
      ratio: index === 0 ? "" : `this build ${times(firstRate, rate)}`,
      target: index === 0 ? atLeast(rate, TASKS_PER_SECOND_TARGET, " tasks/s") : undefined,
    });
    results[label] = { tasks, seconds: seconds.get(label), tasks_per_second: rate, helper_cpu_ms_per_task: cpuPerTask };
  }
  return results;
}

export async function helperTasks(context: BenchContext, server: DevServer): Promise<void> {
  const old = oldHelper(context);
  const builds: [string, string][] = [["this build", BIN], ...(old ? [[`old build ${old.ref}`, old.bin] as [string, string]] : [])];
  const results: Record<string, unknown> = {};
  try {
    context.log("helper tasks: round trips per tool call");
    const repo = await buildRepo(10);
    try {
      for (const [index, [label, bin]] of builds.entries()) {
        const counted = await roundTrips(server, repo, label, bin);
        const perCall = counted.requests.length / counted.calls;
        context.table.add({
          area: index === 0 ? "helper: requests per tool call (proxy in front of the endpoint)" : "",
          measure: `${label}: ${counted.calls} calls (start_workflow, start_task, log_milestone, complete_task, get_workflow): ${counted.requests.join(", ")}`,
          value: `${perCall.toFixed(2)} per call`,
          target: index === 0 ? { label: "= 1 per call", met: counted.requests.length === counted.calls } : undefined,
        });
        results[`round_trips ${label}`] = { ...counted, per_call: perCall };
      }
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
    for (const files of [10, 10_000]) {
      context.log(`helper tasks: cost per complete_task at ${count(files)} files`);
      results[`cost_${files}`] = await costAt(context, server, files, builds);
    }
    const tasks = context.quick ? 200 : 1000;
    context.log(`helper tasks: perf loop, ${tasks} tasks per side`);
    results.perf_loop = await perfLoop(context, server, builds, tasks);
  } finally {
    old?.remove();
  }
  context.results.helper_tasks = results;
}
