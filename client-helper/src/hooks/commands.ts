/**
 * @module hooks/commands
 * The shell commands an agent ran while a task was open, as its hooks report them: the evidence
 * that puts "observed: `npm test` exit 0 after the last edit" next to the agent's own claim.
 * Only the command line is kept (secrets redacted, cut at WIRE_LIMITS.COMMAND_BYTES), with when
 * it ended, its exit code, its duration and the kinds of check it runs; never its output, which
 * the payloads carry and which is dropped here.
 *
 * What each agent's hook payload says (observed with the real CLIs; docs/evidence.md):
 * - Claude Code: PostToolUse for `Bash` after a command that exited 0 (`duration_ms`;
 *   `tool_response.interrupted`), PostToolUseFailure for one that did not (`error` starts with
 *   "Exit code N"); a command sent to the background has no exit code yet;
 * - Codex: PostToolUse for `Bash` carries the command and its output only: the exit code and
 *   duration are read at complete_task from its session (rollout) file, by the call's id;
 * - Cursor: afterShellExecution carries the command and its `duration` (no exit code).
 * Missing figures stay null ("not observed"), never guessed.
 *
 * Records live beside the hooks' journal (./journal.ts), one JSON line per command in
 * `<journal>/commands/<task>.jsonl`, appended to every task open when the command ended;
 * bounded by compaction to what would be sent. complete_task reads them (observedCommands).
 */
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "@waymark/protocol/agent-config";
import { type CommandKind, type CommandKindRules, commandKinds } from "@waymark/protocol/command-kind";
import { redact } from "@waymark/protocol/redact";
import type { ObservedCommand, ObservedCommands } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { boundedLines } from "../usage/lines.js";
import { Journal } from "./journal.js";
import { hasPatch } from "./patch.js";

type Payload = Record<string, unknown>;

/** One command as its hook reported it (before redaction and bounds). */
export type ShellRun = {
  command: string;
  exit_code: number | null;
  duration_ms: number | null;
  /** Codex: the call's id and its session file, where the exit code is read later. */
  call_id?: string;
  transcript?: string;
};

/** A command as the journal keeps it: redacted, bounded, its kinds known. */
type CommandRecord = ObservedCommand & { agent: string; call_id?: string; transcript?: string };

/** A command log past this size is compacted to what complete_task would send. */
const LOG_BYTES = 256 * 1024;
/** Command text read before redaction: a secret cannot start in the kept bytes and end past this. */
const REDACTED_CHARS = 32 * 1024;
/** A rollout line longer than this is a command with huge output: its exit code is not read. */
const ROLLOUT_LINE_BYTES = 4 * 1024 * 1024;

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);
const whole = (value: unknown): number | null => (typeof value === "number" && Number.isInteger(value) ? value : null);
const duration = (value: unknown): number | null => {
  const ms = typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value) : null;
  return ms !== null && ms <= WIRE_LIMITS.COMMAND_DURATION_MS ? ms : null;
};
const object = (value: unknown): Payload => (value && typeof value === "object" && !Array.isArray(value) ? (value as Payload) : {});

/** An exit code a host may name explicitly in its response, under any of the usual names. */
function explicitExitCode(response: Payload): number | null {
  return whole(response.exit_code) ?? whole(response.exitCode) ?? whole(response.returnCode);
}

/** The shell command a hook payload reports, or null when the payload is not one. */
export function shellRun(payload: Payload, agent: AgentName): ShellRun | null {
  if (agent === "cursor") {
    if (payload.hook_event_name !== "afterShellExecution") return null;
    const command = text(payload.command);
    return command
      ? { command, exit_code: whole(payload.exit_code) ?? whole(payload.exitCode), duration_ms: duration(payload.duration) }
      : null;
  }
  if (payload.tool_name !== "Bash") return null;
  const input = object(payload.tool_input);
  const command = text(input.command);
  if (!command) return null;
  const ms = duration(payload.duration_ms);
  if (agent === "codex") {
    // apply_patch run through the shell is an edit (./patch.ts), not a command to report.
    if (hasPatch(command)) return null;
    const response = object(payload.tool_response);
    const run: ShellRun = { command, exit_code: explicitExitCode(response), duration_ms: ms };
    const id = text(payload.tool_use_id);
    const transcript = text(payload.transcript_path);
    if (run.exit_code === null && id && transcript) Object.assign(run, { call_id: id, transcript });
    return run;
  }
  if (payload.hook_event_name === "PostToolUseFailure") {
    const code = /^Exit code (-?\d{1,10})\b/.exec(text(payload.error) ?? "");
    return { command, exit_code: code && payload.is_interrupt !== true ? Number(code[1]) : null, duration_ms: ms };
  }
  const response = object(payload.tool_response);
  // PostToolUse runs only after a command that succeeded; one sent to the background has not ended yet.
  const ended = response.interrupted !== true && input.run_in_background !== true && response.backgroundTaskId === undefined;
  return { command, exit_code: explicitExitCode(response) ?? (ended ? 0 : null), duration_ms: ended ? ms : null };
}

/** Control characters (other than tab and newline) shown as escapes: a command line is read by people. */
function readable(command: string): string {
  return command
    .replace(/\r\n/g, "\n")
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** The command line as it may leave the machine: secrets redacted, then cut at COMMAND_BYTES of UTF-8. */
export function boundedCommand(command: string): { command: string; truncated?: true } {
  const redacted = redact(readable(command.slice(0, REDACTED_CHARS))).text;
  const bytes = Buffer.from(redacted, "utf8");
  if (bytes.length <= WIRE_LIMITS.COMMAND_BYTES && command.length <= REDACTED_CHARS) return { command: redacted };
  // Cut on a character boundary, with room for the ellipsis.
  let cut = bytes.subarray(0, WIRE_LIMITS.COMMAND_BYTES - 3).toString("utf8");
  if (cut.endsWith("\ufffd")) cut = cut.slice(0, -1);
  return { command: `${cut}…`, truncated: true };
}

/** The record the journal keeps of a run: kinds from the whole command line as written (before redaction). */
export function commandRecord(run: ShellRun, agent: string, at: number, rules: CommandKindRules): CommandRecord {
  const record: CommandRecord = {
    ...boundedCommand(run.command),
    // Whole milliseconds: a spooled payload is dated by its file's modification time, which has fractions.
    at: Math.floor(at),
    exit_code: run.exit_code,
    duration_ms: run.duration_ms,
    kinds: commandKinds(run.command, rules),
    agent,
  };
  if (run.call_id && run.transcript) Object.assign(record, { call_id: run.call_id, transcript: run.transcript });
  return record;
}

function logFile(journal: Journal, taskId: string): string {
  return join(journal.folder, "commands", `${createHash("sha256").update(taskId).digest("hex").slice(0, 40)}.jsonl`);
}

/**
 * Appends the run to every task open when it ended (`at`); returns how many got it. Never throws:
 * a command not recorded is evidence missing, never a failed hook.
 */
export async function recordShellRun(journal: Journal, run: ShellRun, agent: string, at: number, rules: CommandKindRules): Promise<number> {
  try {
    const tasks = (await journal.openTasks()).filter((task) => task.started_at <= at);
    if (tasks.length === 0) return 0;
    const line = `${JSON.stringify(commandRecord(run, agent, at, rules))}\n`;
    mkdirSync(join(journal.folder, "commands"), { recursive: true, mode: 0o700 });
    for (const task of tasks) {
      const file = logFile(journal, task.task_id);
      appendFileSync(file, line, { mode: 0o600 });
      if (statSync(file).size > LOG_BYTES) compact(file);
    }
    return tasks.length;
  } catch {
    return 0;
  }
}

type Log = { runs: CommandRecord[]; omitted: number };

function readLog(file: string): Log {
  let content: string;
  try {
    content = readFileSync(file, "utf8");
  } catch {
    return { runs: [], omitted: 0 };
  }
  const runs: CommandRecord[] = [];
  let omitted = 0;
  for (const line of content.split("\n")) {
    if (line === "") continue;
    try {
      const entry = JSON.parse(line) as Partial<CommandRecord> & { omitted?: unknown };
      if (typeof entry.omitted === "number") omitted += entry.omitted;
      else if (typeof entry.command === "string" && typeof entry.at === "number") runs.push(entry as CommandRecord);
    } catch {
      // A line cut by a crash: the others still count.
    }
  }
  return { runs: runs.sort((a, b) => a.at - b.at), omitted };
}

/**
 * At most `limit` runs, in time order: the last run of each kind first, then the latest checks,
 * then the latest others; `omitted` counts those left out.
 */
export function selectRuns<Run extends { kinds: readonly CommandKind[] }>(
  runs: readonly Run[],
  limit: number,
): { runs: Run[]; omitted: number } {
  if (runs.length <= limit) return { runs: [...runs], omitted: 0 };
  const keep = new Set<number>();
  const latest = (accept: (run: Run) => boolean) => {
    for (let index = runs.length - 1; index >= 0 && keep.size < limit; index--) if (accept(runs[index] as Run)) keep.add(index);
  };
  for (const kind of new Set(runs.flatMap((run) => run.kinds))) {
    const last = runs.findLastIndex((run) => run.kinds.includes(kind));
    if (keep.size < limit) keep.add(last);
  }
  latest((run) => run.kinds.length > 0);
  latest(() => true);
  const kept = [...keep].sort((a, b) => a - b).map((index) => runs[index] as Run);
  return { runs: kept, omitted: runs.length - kept.length };
}

/** Rewrites a log that grew past LOG_BYTES to the runs that would be sent, and the count of the rest. */
function compact(file: string): void {
  const log = readLog(file);
  const selected = selectRuns(log.runs, WIRE_LIMITS.COMMANDS);
  const omitted = log.omitted + selected.omitted;
  const lines = [...(omitted > 0 ? [JSON.stringify({ omitted })] : []), ...selected.runs.map((run) => JSON.stringify(run))];
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${lines.join("\n")}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/**
 * Codex's exit codes and durations, read from its session file: `item_completed` events of a
 * `CommandExecution` item, by the item's id (the call id its hook payload names).
 */
async function codexResults(
  path: string,
  ids: ReadonlySet<string>,
): Promise<Map<string, { exit_code: number | null; duration_ms: number | null }>> {
  const found = new Map<string, { exit_code: number | null; duration_ms: number | null }>();
  try {
    for await (const line of boundedLines(path, ROLLOUT_LINE_BYTES)) {
      if (!line.includes('"CommandExecution"') || !line.includes('"item_completed"')) continue;
      const entry = JSON.parse(line) as { payload?: { type?: unknown; item?: Payload } };
      const item = entry.payload?.type === "item_completed" ? object(entry.payload.item) : {};
      const id = text(item.id);
      if (item.type !== "CommandExecution" || !id || !ids.has(id)) continue;
      const spent = object(item.duration);
      const ms = typeof spent.secs === "number" && typeof spent.nanos === "number" ? spent.secs * 1000 + spent.nanos / 1e6 : null;
      found.set(id, { exit_code: whole(item.exit_code), duration_ms: duration(ms) });
      if (found.size === ids.size) break;
    }
  } catch {
    // Unreadable: those exit codes stay not observed.
  }
  return found;
}

/** Fills in what Codex's hooks could not say, from its session files. */
async function withCodexResults(runs: CommandRecord[]): Promise<void> {
  const byFile = new Map<string, Set<string>>();
  for (const run of runs) {
    if (run.exit_code !== null || !run.call_id || !run.transcript) continue;
    byFile.set(run.transcript, (byFile.get(run.transcript) ?? new Set()).add(run.call_id));
  }
  for (const [path, ids] of byFile) {
    const results = await codexResults(path, ids);
    for (const run of runs) {
      const result = run.call_id && run.transcript === path ? results.get(run.call_id) : undefined;
      if (!result) continue;
      run.exit_code = result.exit_code;
      run.duration_ms ??= result.duration_ms;
    }
  }
}

/**
 * The commands the hooks observed during the task, as complete_task sends them; undefined when no
 * hook of this repository could observe shell commands (then nothing is known either way).
 */
export async function observedCommands(
  dir: string,
  taskId: string,
  cacheDir: string | undefined,
  top?: string,
): Promise<ObservedCommands | undefined> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    const [session, edits] = await Promise.all([journal.session(), journal.editedPaths(taskId)]);
    const log = readLog(logFile(journal, taskId));
    if (log.runs.length === 0 && log.omitted === 0 && session?.commands !== true) return undefined;
    await withCodexResults(log.runs);
    const selected = selectRuns(log.runs, WIRE_LIMITS.COMMANDS);
    const omitted = log.omitted + selected.omitted;
    const runs = selected.runs.map(({ agent: _agent, call_id: _call, transcript: _transcript, ...run }) => run);
    const lastEdit = edits.last_edit_at === null ? null : Math.floor(edits.last_edit_at);
    return { runs, ...(omitted > 0 ? { omitted } : {}), last_edit_at: lastEdit };
  } catch {
    return undefined;
  }
}

/** Removes the task's command log once the edge has the task. */
export async function forgetCommands(dir: string, taskId: string, cacheDir: string | undefined, top?: string): Promise<void> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    rmSync(logFile(journal, taskId), { force: true });
  } catch {
    // Left in the cache: it is read by nobody once the task is done.
  }
}
