/**
 * @module agents/codex
 * Codex on the developer's machine (checked against Codex 0.169; the Node-free half, its hooks,
 * answers and plugin, is @waymark/protocol/agents/codex):
 * - its setup (init and doctor: its config.toml, the trust steps it asks of the user, what doctor
 *   asks Codex itself) is ./codex-setup.ts, loaded only when they run: it is most of what the helper
 *   knows of Codex, and the hooks never need it;
 * - its tool calls (PostToolUse): `apply_patch` carries the patch (./codex-patch.ts: its headers name
 *   the files; files added with their content, deleted, or updated by chunks), and so does a shell
 *   command that runs apply_patch; any other shell command (`Bash`) is work on the task, reported with
 *   its command and output only: its exit code and duration are read at complete_task from its session
 *   file, by the call's id;
 * - its session ("rollout") file, the `transcript_path` of its payloads
 *   (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`):
 *   `{"type":"turn_context","payload":{"turn_id":…,"model":…}}` opens each turn with its model;
 *   `{"type":"token_usage_record","timestamp":…,"payload":{"turn_id":…,"response_id":…,"usage":
 *   {"input_tokens","cached_input_tokens","cache_write_input_tokens","output_tokens",
 *   "reasoning_output_tokens","total_tokens"}}}` follows each model response. OpenAI's counts nest:
 *   cached and cache-write tokens are part of `input_tokens`, reasoning tokens part of
 *   `output_tokens` (observed: total = input + output); they are split here into the disjoint counts
 *   the price table uses. Cumulative `token_count` events are not counted (they would count every
 *   response again). `item_completed` events of a `CommandExecution` item carry a command's exit code
 *   and duration. Codex names a tool call `_meta.callId`, writes a response's items as they stream and
 *   its usage once the response ends, which may be after it ran the call (observed: 500 ms later when
 *   the model streamed 500 ms past the call's item). Its version is in the file's first line.
 */
import { CODEX } from "@waymark/protocol/agents/codex";
import { type CapturedEdit, NOT_FOLLOWED, tooLarge } from "../lines/capture.js";
import { boundedLines } from "../usage/lines.js";
import {
  type Agent,
  type CommandResult,
  durationMs,
  explicitExitCode,
  nonEmpty,
  objectIn,
  type TranscriptResponse,
  tokenCount,
  wholeNumber,
} from "./agent.js";
import { hasPatch, parsePatch, patchPaths, patchText } from "./codex-patch.js";

/** A string, empty included. */
const string = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** A rollout line longer than this is a command with huge output: its exit code is not read. */
const ROLLOUT_LINE_BYTES = 4 * 1024 * 1024;

/** A patch's files as line edits. */
function patchEdits(patch: string): CapturedEdit[] {
  const edits: CapturedEdit[] = [];
  for (const file of parsePatch(patch)) {
    if (file.kind === "add")
      edits.push(tooLarge(file.content) ? { path: file.path, skipped: NOT_FOLLOWED.TOO_LARGE } : { path: file.path, after: file.content });
    else if (file.kind === "delete") edits.push({ path: file.path, after: null });
    else if (file.moveTo === null) edits.push({ path: file.path, chunks: file.chunks });
    else {
      // The old path is gone; the new one holds the old content with the chunks applied.
      edits.push({ path: file.path, after: null });
      edits.push({ path: file.moveTo, movedFrom: file.path, chunks: file.chunks });
    }
  }
  return edits;
}

type RolloutEntry = { type?: unknown; timestamp?: unknown; payload?: Record<string, unknown> };

/** A reader of one rollout file: the model of each turn, as its turn_context said, then each response's usage under it. */
function rolloutResponses(): (line: string, fromMs: number, toMs: number) => TranscriptResponse | null {
  const models = new Map<string, string>();
  let lastModel: string | null = null;
  return (line, fromMs, toMs) => {
    // Cheap: no parsing of the lines this reader does not need.
    if (!line.includes('"type":"token_usage_record"') && !line.includes('"type":"turn_context"')) return null;
    let entry: RolloutEntry;
    try {
      entry = JSON.parse(line) as RolloutEntry;
    } catch {
      return null;
    }
    const payload = entry.payload && typeof entry.payload === "object" ? entry.payload : null;
    if (!payload) return null;
    const turn = typeof payload.turn_id === "string" ? payload.turn_id : null;
    if (entry.type === "turn_context") {
      if (typeof payload.model === "string" && payload.model !== "") {
        lastModel = payload.model;
        if (turn) models.set(turn, payload.model);
      }
      return null;
    }
    if (entry.type !== "token_usage_record") return null;
    const usage = payload.usage && typeof payload.usage === "object" ? (payload.usage as Record<string, unknown>) : null;
    const model = (turn ? models.get(turn) : undefined) ?? lastModel;
    if (!usage || !model) return null;
    const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
    if (!Number.isFinite(at) || at < fromMs || at > toMs) return null;
    const cached = tokenCount(usage.cached_input_tokens);
    const written = tokenCount(usage.cache_write_input_tokens);
    const id = typeof payload.response_id === "string" ? payload.response_id : `${turn}:${at}`;
    return {
      key: `codex:${id}`,
      response: {
        model,
        input_tokens: Math.max(0, tokenCount(usage.input_tokens) - cached - written),
        output_tokens: tokenCount(usage.output_tokens),
        cache_creation_input_tokens: written,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: cached,
      },
    };
  };
}

/** Exit codes and durations from the session file: `item_completed` events of a `CommandExecution` item, by the item's id. */
async function commandResults(path: string, ids: ReadonlySet<string>): Promise<Map<string, CommandResult>> {
  const found = new Map<string, CommandResult>();
  try {
    for await (const line of boundedLines(path, ROLLOUT_LINE_BYTES)) {
      if (!line.includes('"CommandExecution"') || !line.includes('"item_completed"')) continue;
      const entry = JSON.parse(line) as { payload?: { type?: unknown; item?: unknown } };
      const item = entry.payload?.type === "item_completed" ? objectIn(entry.payload.item) : {};
      const id = nonEmpty(item.id);
      if (item.type !== "CommandExecution" || !id || !ids.has(id)) continue;
      const spent = objectIn(item.duration);
      const ms = typeof spent.secs === "number" && typeof spent.nanos === "number" ? spent.secs * 1000 + spent.nanos / 1e6 : null;
      found.set(id, { exit_code: wholeNumber(item.exit_code), duration_ms: durationMs(ms) });
      if (found.size === ids.size) break;
    }
  } catch {
    // Unreadable: those exit codes stay not observed.
  }
  return found;
}

export const codex = {
  ...CODEX,
  instructionsFile: "AGENTS.md",
  // Loaded when init or doctor runs: its config.toml, its trust steps, the questions doctor asks Codex.
  setup: async () => (await import("./codex-setup.js")).CODEX_SETUP,

  toolCall: (payload) => {
    const tool = nonEmpty(payload.tool_name);
    if (tool !== "apply_patch" && tool !== "Bash") return null;
    const command = nonEmpty(objectIn(payload.tool_input).command) ?? "";
    // A shell command that runs no patch is work on the task, never an edit of any file.
    return { tool, paths: tool === "apply_patch" || hasPatch(command) ? patchPaths(command) : [] };
  },
  shellRun: (payload) => {
    if (payload.tool_name !== "Bash") return null;
    const command = nonEmpty(objectIn(payload.tool_input).command);
    // apply_patch run through the shell is an edit, not a command to report.
    if (!command || hasPatch(command)) return null;
    const run = { command, exit_code: explicitExitCode(objectIn(payload.tool_response)), duration_ms: durationMs(payload.duration_ms) };
    const id = nonEmpty(payload.tool_use_id);
    const transcript = nonEmpty(payload.transcript_path);
    // Its hooks carry no exit code: read at complete_task from the session file, by the call's id.
    return run.exit_code === null && id && transcript ? { ...run, call_id: id, transcript } : run;
  },
  capturedEdits: (payload) => {
    const tool = string(payload.tool_name);
    if (tool !== "apply_patch" && tool !== "Bash") return [];
    const input = objectIn(payload.tool_input);
    const patch = patchText(string(input.command) ?? string(input.input) ?? "");
    return patch === null ? [] : patchEdits(patch);
  },

  trace: { name: "codex", versionAt: "start" },
  transcript: {
    responses: rolloutResponses,
    // The first token_usage_record after the function_call item with that call_id.
    callingResponseWritten: (callId) => {
      const id = JSON.stringify(callId);
      let called = false;
      return (line) => {
        if (called) return line.includes('"type":"token_usage_record"');
        if (line.includes(`"call_id":${id}`) && line.includes('"type":"function_call"')) called = true;
        return false;
      };
    },
    commandResults,
  },
  callId: (meta) => nonEmpty(meta.callId) ?? undefined,
} satisfies Agent;
