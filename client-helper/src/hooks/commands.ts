/**
 * @module hooks/commands
 * The shell commands an agent ran while a task was open, as its hooks report them: the evidence
 * that puts "observed: `npm test` exit 0 after the last edit" next to the agent's own claim.
 * Only the command line is kept (secrets redacted, cut at WIRE_LIMITS.COMMAND_BYTES), with when
 * it ended, its exit code, its duration and the kinds of check it runs; never its output, which
 * the payloads carry and which is dropped here.
 *
 * What each agent's hook payload says of a command is its module's `shellRun` (../agents/; observed
 * with the real CLIs, docs/evidence.md); what a payload could not say (Codex's exit codes) is read at
 * complete_task from the agent's session file (its transcript's `commandResults`, by the call's id).
 * Missing figures stay null ("not observed"), never guessed.
 *
 * Records live beside the hooks' journal (./journal.ts), one JSON line per command in
 * `<journal>/commands/<task>.jsonl`, appended to every task open when the command ended;
 * bounded by compaction to what would be sent. complete_task reads them (observedCommands).
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CommandKind, type CommandKindRules, commandKinds } from "@waymark/protocol/command-kind";
import { redact } from "@waymark/protocol/redact";
import type { ObservedCommand, ObservedCommands } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { ShellRun } from "../agents/agent.js";
import { agentNamed } from "../agents/registry.js";
import { nameHash } from "../name-hash.js";
import { Journal } from "./journal.js";

/** A command as the journal keeps it: redacted, bounded, its kinds known. */
type CommandRecord = ObservedCommand & { agent: string; call_id?: string; transcript?: string };

/** A command log past this size is compacted to what complete_task would send. */
const LOG_BYTES = 256 * 1024;
/** Command text read before redaction: a secret cannot start in the kept bytes and end past this. */
const REDACTED_CHARS = 32 * 1024;

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
  return join(journal.folder, "commands", `${nameHash(taskId).slice(0, 40)}.jsonl`);
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

/** Fills in what the agents' hooks could not say, from their session files. */
async function withTranscriptResults(runs: CommandRecord[]): Promise<void> {
  const byFile = new Map<string, { agent: string; ids: Set<string> }>();
  for (const run of runs) {
    if (run.exit_code !== null || !run.call_id || !run.transcript) continue;
    const file = byFile.get(run.transcript) ?? { agent: run.agent, ids: new Set<string>() };
    byFile.set(run.transcript, file);
    file.ids.add(run.call_id);
  }
  for (const [path, { agent, ids }] of byFile) {
    const read = agentNamed(agent)?.transcript?.commandResults;
    if (!read) continue;
    const results = await read(path, ids);
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
    await withTranscriptResults(log.runs);
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
