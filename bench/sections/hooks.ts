/**
 * What Waymark's hooks cost the agent, with the real Claude Code (pinned, installed by
 * test/support/agent-clis.ts) in a project set up as the README says, against a scripted model
 * that answers at once (test/support/model-server.ts), a task open (so the stop hook has a
 * reminder to give) and a workflow recorded (so session start has context to inject):
 * - the time Claude Code waits for each hook, as Claude Code reports it in its debug log
 *   (`Hooks: SessionStart:startup […] finished with status 0 (N ms)`; the edit hook, which runs
 *   in the background, `moved to the background (N ms)`), per session start, per stop (the one
 *   that reminds, the one after it) and per edit, median and p95 over the sessions;
 * - the same sessions without Waymark (the same files, no `waymark init`), interleaved: the time
 *   from the agent's start to its first model request (target: ≤ 300 ms later with Waymark,
 *   medians), and from an edit's response to the next request, with and without;
 * - whether the session-start context was in the first request, in every session;
 * - the CPU one hook process costs (the installed command run by sh as the agent runs it; the
 *   children's CPU from /proc, over 20 runs) against Node's own start-up (`node -e 0`), the floor
 *   of any hook that starts Node.
 * Figures from a shared machine under load say so in the row (the load average is recorded).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  type AgentCli,
  agentClis,
  agentEnv,
  claudeEnv,
  claudePrint,
  runAgent,
  runProcess,
  stopAgents,
} from "../../test/support/agent-clis.ts";
import { type AgentProject, agentProject } from "../../test/support/agent-project.ts";
import type { DevServer } from "../../test/support/dev-server.ts";
import { callTool } from "../../test/support/mcp-client.ts";
import { ModelServer, type Turn, zeroUsage } from "../../test/support/model-server.ts";
import { type Summary, summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { atMost, ms, percentiles, times } from "../lib/table.ts";

const AREA = "hooks (real Claude Code)";
const SESSION_START_P95_MS = 300;
const STOP_P95_MS = 100;
const EDIT_CPU_MS = 20;
/** How much later the agent's first model request may come with Waymark than without (medians). */
const FIRST_REQUEST_DELAY_MS = 300;
const CPU_RUNS = 20;
const EDITS_PER_SESSION = 3;
const CONTEXT_LINE = "Waymark: work recorded in this repository.";
/** The workflow's state in the context: fresh from the endpoint, or as the helper kept it (with its age). */
const CONTEXT_STATE = /Workflow state \(get_workflow(, [^)]+)?\):/;
const CONTEXT_FRESH_STATE = "Workflow state (get_workflow):";

/** What Claude Code's debug log says it waited for each hook of one session. */
interface HookWaits {
  sessionStart: number[];
  stops: number[];
  edits: number[];
}

function parseDebugLog(text: string): HookWaits {
  const waits: HookWaits = { sessionStart: [], stops: [], edits: [] };
  for (const line of text.split("\n")) {
    const finished = /Hooks: (SessionStart:\w+|Stop) \[.*\] finished with status \d+ \((\d+)ms\)/.exec(line);
    if (finished) (finished[1] === "Stop" ? waits.stops : waits.sessionStart).push(Number(finished[2]));
    const background = /Hooks: PostToolUse:\w+ \[.*\] moved to the background \((\d+)ms\)/.exec(line);
    if (background) waits.edits.push(Number(background[1]));
  }
  return waits;
}

/** One session's script: edits, a stop (the reminder when Waymark is there), a second stop. */
function sessionScript(repo: string, session: number): Turn[] {
  const edits: Turn[] = Array.from({ length: EDITS_PER_SESSION }, (_, k) => ({
    calls: [{ name: "Write", input: { file_path: join(repo, "notes", `s${session}-${k}.txt`), content: `note ${session}.${k}\n` } }],
    usage: zeroUsage(),
  }));
  return [...edits, { text: "Done.", usage: zeroUsage() }, { text: "Stopping here.", usage: zeroUsage() }];
}

interface SessionFigures {
  firstRequestMs: number;
  /** From an edit's response to the agent's next request. */
  editTurnsMs: number[];
  waits: HookWaits | null;
  context: boolean;
  state: boolean;
  /** The state came from the endpoint within the hook's budget (else it is the kept one). */
  fresh: boolean;
}

async function session(
  cli: AgentCli,
  model: ModelServer,
  project: AgentProject,
  token: string,
  index: number,
  debug: string | null,
): Promise<SessionFigures> {
  model.play(sessionScript(project.repo, index));
  const started = Date.now();
  const args = claudePrint("Write the notes.", ["Write"], debug ? ["--debug-file", debug] : []);
  const run = await runAgent(cli, args, {
    cwd: project.repo,
    env: claudeEnv(project.home, model.url, { WAYMARK_TOKEN: token }),
    timeoutMs: 180_000,
  });
  if (run.code !== 0 || model.errors.length > 0)
    throw new Error(`claude -p exited ${run.code}: ${run.stderr.slice(-500)} ${model.errors.join("; ")}`);
  const requests = model.mainRequests();
  const first = JSON.stringify(requests[0]?.body ?? {});
  const editTurnsMs: number[] = [];
  model.responses.forEach((response, k) => {
    const next = requests[k + 1];
    if (response.calls.some((call) => call.name === "Write") && next) editTurnsMs.push(next.at - response.finishedAt);
  });
  return {
    firstRequestMs: (requests[0]?.at ?? Number.NaN) - started,
    editTurnsMs,
    waits: debug ? parseDebugLog(readFileSync(debug, "utf8")) : null,
    context: first.includes(CONTEXT_LINE),
    state: CONTEXT_STATE.test(first),
    fresh: first.includes(CONTEXT_FRESH_STATE),
  };
}

/** Opens a workflow and a task through the helper the project's MCP configuration runs (npx from the endpoint). */
async function openTask(project: AgentProject, token: string): Promise<void> {
  const server = (
    JSON.parse(readFileSync(join(project.repo, ".mcp.json"), "utf8")) as { mcpServers: { waymark: { command: string; args: string[] } } }
  ).mcpServers.waymark;
  const client = new Client({ name: "waymark-bench-opener", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: server.command,
      args: server.args,
      cwd: project.repo,
      env: agentEnv(project.home, { WAYMARK_TOKEN: token }),
    }),
  );
  try {
    const workflow = await callTool(client, "start_workflow", { name: "Hooks bench" });
    const task = await callTool(client, "start_task", {
      workflow_id: workflow.structured.workflow_id,
      name: "Notes",
      goal: "Write notes",
    });
    if (workflow.isError || task.isError) throw new Error(`could not open a task: ${workflow.text} ${task.text}`);
  } finally {
    await client.close();
  }
}

/** CPU (user + system) of the processes `command` starts, per run, over `runs` runs in one sh. */
function cpuPerRun(command: string, payload: string, runs: number, cwd: string, env: Record<string, string>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "waymark-bench-cpu-"));
  writeFileSync(join(dir, "payload.json"), payload);
  writeFileSync(join(dir, "hook.sh"), `${command}\n`);
  const loop = `i=0; while [ $i -lt ${runs} ]; do sh ${JSON.stringify(join(dir, "hook.sh"))} < ${JSON.stringify(join(dir, "payload.json"))} > /dev/null 2>&1; i=$((i+1)); done; cat /proc/$$/stat`;
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", loop], { cwd, env, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("close", () => {
      rmSync(dir, { recursive: true, force: true });
      // Fields after "(comm) ": state is field 3; cutime and cstime are fields 16 and 17, in clock ticks (100 per second).
      const fields = out.slice(out.lastIndexOf(")") + 2).split(" ");
      const ticks = Number(fields[13]) + Number(fields[14]);
      if (!Number.isFinite(ticks)) reject(new Error(`no /proc stat from sh: ${out.slice(0, 200)}`));
      else resolve((ticks * 10) / runs);
    });
  });
}

/** Wall time of `runs` single runs of `command` through sh, as the agent starts a hook. */
async function wallPerRun(command: string, payload: string, runs: number, cwd: string, env: Record<string, string>): Promise<Summary> {
  const dir = mkdtempSync(join(tmpdir(), "waymark-bench-wall-"));
  writeFileSync(join(dir, "payload.json"), payload);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await runProcess("sh", ["-c", `${command} < ${JSON.stringify(join(dir, "payload.json"))}`], {
      cwd,
      env,
      timeoutMs: 30_000,
    });
    samples.push(run.ms);
  }
  rmSync(dir, { recursive: true, force: true });
  return summarize(samples);
}

export async function hookCosts(context: BenchContext, server: DevServer): Promise<void> {
  const { claude } = agentClis();
  if (!claude.cli) {
    context.table.add({ area: AREA, measure: `skipped: ${claude.skip}`, value: "" });
    context.results.hooks = { skipped: claude.skip };
    return;
  }
  const cli = claude.cli;
  const sessions = context.quick ? 4 : 10;
  const files = { "README.md": "# Notes\n", "src/app.ts": "export const app = 1;\n" };
  context.log(
    `hooks: setting up a project with waymark init (npx from the endpoint) and one without; ${sessions} sessions each, and ${sessions} with Waymark whose opening is not kept`,
  );
  const model = await new ModelServer({ latencyMs: 0 }).start();
  const withWaymark = await agentProject(server, { agent: "claude", files });
  // The same files, no `waymark init`: the agent without Waymark.
  const without = await agentProject(server, { agent: "claude", files, init: false });
  const debugDir = mkdtempSync(join(tmpdir(), "waymark-bench-debug-"));
  try {
    if (withWaymark.init?.code !== 0) throw new Error(`waymark init failed: ${withWaymark.init?.stderr}`);
    mkdirSync(join(withWaymark.repo, "notes"));
    mkdirSync(join(without.repo, "notes"));
    await openTask(withWaymark, server.token);

    const measured: { with: SessionFigures[]; without: SessionFigures[]; cold: SessionFigures[] } = { with: [], without: [], cold: [] };
    // The MCP server's opening as it was before it was kept between sessions: its kept copy removed first.
    const keptOpenings = join(withWaymark.home, ".cache", "waymark", "openings");
    const load: number[] = [];
    // A first session of each warms the agent's own caches; then they take turns.
    await session(cli, model, withWaymark, server.token, 0, null);
    await session(cli, model, without, server.token, 0, null);
    for (let i = 1; i <= sessions; i++) {
      load.push(loadavg()[0] ?? Number.NaN);
      measured.with.push(await session(cli, model, withWaymark, server.token, i, join(debugDir, `with-${i}.log`)));
      measured.without.push(await session(cli, model, without, server.token, i, null));
      rmSync(keptOpenings, { recursive: true, force: true });
      measured.cold.push(await session(cli, model, withWaymark, server.token, i, null));
      context.log(`hooks: session ${i}/${sessions}`);
    }

    const waits = measured.with.map((figures) => figures.waits as HookWaits);
    const sessionStart = summarize(waits.flatMap((w) => w.sessionStart));
    const reminding = summarize(waits.map((w) => w.stops[0] ?? Number.NaN).filter(Number.isFinite));
    const afterReminder = summarize(waits.map((w) => w.stops[1] ?? Number.NaN).filter(Number.isFinite));
    const edits = summarize(waits.flatMap((w) => w.edits));
    const firstWith = summarize(measured.with.map((f) => f.firstRequestMs));
    const firstWithout = summarize(measured.without.map((f) => f.firstRequestMs));
    const firstCold = summarize(measured.cold.map((f) => f.firstRequestMs));
    const editWith = summarize(measured.with.flatMap((f) => f.editTurnsMs));
    const editWithout = summarize(measured.without.flatMap((f) => f.editTurnsMs));
    const withContext = measured.with.filter((f) => f.context).length;
    const withState = measured.with.filter((f) => f.state).length;
    const withFresh = measured.with.filter((f) => f.fresh).length;

    // One hook process, as the agent starts it (sh -c "<installed command>" with the payload on stdin).
    const settings = JSON.parse(readFileSync(join(withWaymark.repo, ".claude", "settings.json"), "utf8")) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const command = (event: string) => settings.hooks[event]?.[0]?.hooks[0]?.command ?? "";
    const env = agentEnv(withWaymark.home, { WAYMARK_TOKEN: server.token });
    const transcript = join(withWaymark.home, ".claude", "projects", "bench", "session.jsonl");
    const common = { session_id: "bench-session", transcript_path: transcript, cwd: withWaymark.repo, permission_mode: "acceptEdits" };
    const editPayload = JSON.stringify({
      ...common,
      hook_event_name: "PostToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(withWaymark.repo, "notes", "cpu.txt"), content: "cpu\n" },
      tool_response: { filePath: join(withWaymark.repo, "notes", "cpu.txt"), success: true },
      tool_use_id: "toolu_bench",
    });
    const stopPayload = JSON.stringify({ ...common, hook_event_name: "Stop", stop_hook_active: false });
    const startPayload = JSON.stringify({ ...common, hook_event_name: "SessionStart", source: "startup" });
    // The helper's own Node hook for an edit, as the edit hook ran before it spooled (for comparison).
    const helperStop = /^if .*; else (node .*); fi$/.exec(command("Stop"))?.[1] ?? command("Stop");
    const nodeEditHook = helperStop.replaceAll(" hook stop ", " hook post-tool-use ");
    const cpu = {
      node: await cpuPerRun("node -e 0", "{}", CPU_RUNS, withWaymark.repo, env),
      nodeEdit: await cpuPerRun(nodeEditHook, editPayload, CPU_RUNS, withWaymark.repo, env),
      edit: await cpuPerRun(command("PostToolUse"), editPayload, CPU_RUNS, withWaymark.repo, env),
      stop: await cpuPerRun(command("Stop"), stopPayload, CPU_RUNS, withWaymark.repo, env),
      sessionStart: await cpuPerRun(command("SessionStart"), startPayload, CPU_RUNS, withWaymark.repo, env),
    };
    const wall = {
      node: await wallPerRun("node -e 0", "{}", CPU_RUNS, withWaymark.repo, env),
      stop: await wallPerRun(command("Stop"), stopPayload, CPU_RUNS, withWaymark.repo, env),
      sessionStart: await wallPerRun(command("SessionStart"), startPayload, CPU_RUNS, withWaymark.repo, env),
    };

    const loaded = `load ${summarize(load).median.toFixed(1)} on ${(context.results.machine as { nproc?: number } | undefined)?.nproc ?? "?"} cores`;
    const t = context.table;
    t.add({
      area: AREA,
      measure: `${cli.name} ${cli.version}; ${sessions} sessions with Waymark and ${sessions} without, taking turns; ${loaded}`,
      value: "",
    });
    t.add({
      measure: `session start: agent waits for the hook (its debug log), n=${sessionStart.n}; context in ${withContext}/${sessions}, workflow state in ${withState}/${sessions} (fresh from the endpoint in ${withFresh})`,
      value: percentiles(sessionStart),
      floor: ms(wall.node.median),
      ratio: times(sessionStart.median, wall.node.median),
      target: {
        label: `≤ ${SESSION_START_P95_MS} ms p95, context and state every run`,
        met: sessionStart.p95 <= SESSION_START_P95_MS && withContext === sessions && withState === sessions,
      },
    });
    const delay = firstWith.median - firstWithout.median;
    t.add({
      measure: `session start → first model request: with Waymark (${ms(delay)} later than without, medians)`,
      value: percentiles(firstWith),
      floor: ms(firstWithout.median),
      ratio: times(firstWith.median, firstWithout.median),
      target: atMost(delay, FIRST_REQUEST_DELAY_MS, " ms later"),
    });
    t.add({
      measure: `session start → first model request: with Waymark, its MCP server's opening not kept (as before it was; ${ms(firstCold.median - firstWithout.median)} later than without)`,
      value: percentiles(firstCold),
      floor: ms(firstWithout.median),
      ratio: times(firstCold.median, firstWithout.median),
    });
    t.add({ measure: "session start → first model request: without Waymark", value: percentiles(firstWithout) });
    t.add({
      measure: `stop that reminds (task open, edited): agent waits, n=${reminding.n}`,
      value: percentiles(reminding),
      floor: ms(wall.node.median),
      ratio: times(reminding.median, wall.node.median),
      target: atMost(reminding.p95, STOP_P95_MS, " ms p95"),
    });
    t.add({
      measure: `stop after the reminder: agent waits, n=${afterReminder.n}`,
      value: percentiles(afterReminder),
      floor: ms(wall.node.median),
      ratio: times(afterReminder.median, wall.node.median),
      target: atMost(afterReminder.p95, STOP_P95_MS, " ms p95"),
    });
    t.add({ measure: `edit: agent waits (the hook runs in the background), n=${edits.n}`, value: percentiles(edits) });
    t.add({
      measure: "edit's response → next request: with Waymark",
      value: percentiles(editWith),
      floor: ms(editWithout.median),
      ratio: times(editWith.median, editWithout.median),
    });
    t.add({ measure: "edit's response → next request: without Waymark", value: percentiles(editWithout) });
    t.add({
      measure: `CPU per edit-recording hook process (${CPU_RUNS} runs)`,
      value: ms(cpu.edit),
      floor: ms(cpu.node),
      ratio: times(cpu.edit, cpu.node),
      target: atMost(cpu.edit, EDIT_CPU_MS, " ms"),
    });
    t.add({
      measure: "CPU per edit, the helper's Node hook (waymark hook post-tool-use), for comparison",
      value: ms(cpu.nodeEdit),
      floor: ms(cpu.node),
      ratio: times(cpu.nodeEdit, cpu.node),
    });
    t.add({
      measure: `CPU per stop hook process (nothing due)`,
      value: ms(cpu.stop),
      floor: ms(cpu.node),
      ratio: times(cpu.stop, cpu.node),
    });
    t.add({
      measure: `CPU per session-start hook process`,
      value: ms(cpu.sessionStart),
      floor: ms(cpu.node),
      ratio: times(cpu.sessionStart, cpu.node),
    });
    t.add({ measure: `Node start-up (node -e 0): CPU; wall ${percentiles(wall.node)}`, value: ms(cpu.node) });
    t.add({
      measure: "stop hook process alone, wall (nothing due)",
      value: percentiles(wall.stop),
      floor: ms(wall.node.median),
      ratio: times(wall.stop.median, wall.node.median),
    });
    t.add({
      measure: "session-start hook process alone, wall",
      value: percentiles(wall.sessionStart),
      floor: ms(wall.node.median),
      ratio: times(wall.sessionStart.median, wall.node.median),
    });

    context.results.hooks = {
      cli: `${cli.name} ${cli.version}`,
      sessions,
      load_average: load,
      agent_waits_ms: { session_start: sessionStart, stop_reminding: reminding, stop_after_reminder: afterReminder, edit: edits },
      first_request_ms: { with: firstWith, without: firstWithout, delay_ms: delay, opening_not_kept: firstCold },
      edit_turn_ms: { with: editWith, without: editWithout },
      context_in_first_request: { context: withContext, workflow_state: withState, fresh_state: withFresh, of: sessions },
      cpu_ms_per_run: cpu,
      wall_ms: wall,
      targets: {
        session_start_p95_ms: SESSION_START_P95_MS,
        stop_p95_ms: STOP_P95_MS,
        edit_cpu_ms: EDIT_CPU_MS,
        first_request_delay_ms: FIRST_REQUEST_DELAY_MS,
      },
    };
  } finally {
    stopAgents();
    await model.stop();
    withWaymark.remove();
    without.remove();
    rmSync(debugDir, { recursive: true, force: true });
  }
}
