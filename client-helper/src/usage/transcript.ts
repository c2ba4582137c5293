/**
 * @module usage/transcript
 * Real token usage of a task, read from the agent's own transcript instead of taken from
 * the agent's claim. Claude Code writes one JSON object per line to the file it names in
 * every hook payload (`transcript_path`); each model response is an `assistant` line whose
 * `message` carries `model`, `id` and `usage` (`input_tokens`, `output_tokens`,
 * `cache_creation_input_tokens`, `cache_read_input_tokens`, and `cache_creation` split by
 * cache lifetime). One response may be written on several lines (one per content block,
 * while it streams) with the same `message.id`: it is counted once, with its largest counts.
 * Subagents write their own files under `<session>/subagents/`; they are counted too.
 * Codex's session (rollout) file is read the same way (./codex-rollout.ts): the path a hook
 * payload names decides, line by line, which format is read.
 *
 * The agent writes a response's usage to its transcript some time after it ran the response's
 * tool calls (Claude Code 2.1: 100–250 ms after the call reached the helper, measured; Codex
 * 0.169: once the response's stream ends): so usage read at `complete_task` first waits, bounded,
 * for the response that called it (callingResponseWritten, awaitTranscriptLine).
 */
import { readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Metrics } from "@waymark/protocol/wire";
import { CodexRollout } from "./codex-rollout.js";
import { boundedLines, type LineCursor } from "./lines.js";
import { costOf, PRICE_TABLE_DATE, type TokenCounts } from "./prices.js";

export type TranscriptUsage = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The model that produced most of the output. */
  model: string | null;
  /** Every model seen in the window, most output first. */
  models: string[];
  /** Null when any model in the window is missing from the price table. */
  cost_usd: number | null;
  /** How many model responses were counted. */
  responses: number;
  source: "transcript";
  price_table_date: string;
};

type Response = TokenCounts & { model: string };

/**
 * Lines longer than this are not usage lines (they carry big tool results): skipped unread, which
 * also bounds the memory a transcript can take, whatever it holds (./lines.ts).
 */
const MAX_LINE = 4 * 1024 * 1024;

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** The model response a transcript line records, with the key that identifies it, or null. */
export function responseOf(line: string, fromMs: number, toMs: number): { key: string; response: Response } | null {
  if (line.length > MAX_LINE || !line.includes('"usage"')) return null;
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return null;
  }
  if (!entry || typeof entry !== "object") return null;
  const { message, timestamp, requestId, uuid } = entry as Record<string, unknown>;
  if (!message || typeof message !== "object") return null;
  const { usage, model, id } = message as Record<string, unknown>;
  if (!usage || typeof usage !== "object" || typeof model !== "string" || model === "<synthetic>") return null;
  const at = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  if (!Number.isFinite(at) || at < fromMs || at > toMs) return null;
  const u = usage as Record<string, unknown>;
  const split = u.cache_creation && typeof u.cache_creation === "object" ? (u.cache_creation as Record<string, unknown>) : {};
  const key = typeof id === "string" ? `m:${id}` : typeof requestId === "string" ? `r:${requestId}` : `u:${String(uuid)}`;
  return {
    key,
    response: {
      model,
      input_tokens: count(u.input_tokens),
      output_tokens: count(u.output_tokens),
      cache_creation_input_tokens: count(u.cache_creation_input_tokens),
      cache_creation_1h_input_tokens: count(split.ephemeral_1h_input_tokens),
      cache_read_input_tokens: count(u.cache_read_input_tokens),
    },
  };
}

async function readResponses(path: string, fromMs: number, toMs: number, into: Map<string, Response>): Promise<boolean> {
  try {
    const codex = new CodexRollout();
    for await (const line of boundedLines(path, MAX_LINE)) {
      const found = CodexRollout.claims(line) ? codex.responseOf(line, fromMs, toMs) : responseOf(line, fromMs, toMs);
      if (!found) continue;
      const known = into.get(found.key);
      // Streaming rewrites a response with growing counts: keep the most complete one.
      if (!known || found.response.output_tokens >= known.output_tokens) into.set(found.key, found.response);
    }
    return true;
  } catch {
    return false;
  }
}

/** The transcripts of the subagents a session started: `<dir>/<session id>/subagents/*.jsonl`. */
async function subagentTranscripts(transcriptPath: string): Promise<string[]> {
  const session = basename(transcriptPath).replace(/\.jsonl$/, "");
  const folder = join(dirname(transcriptPath), session, "subagents");
  const names = await readdir(folder).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith(".jsonl")).map((name) => join(folder, name));
}

/**
 * Sums the tokens of every model response recorded in the transcript between fromMs and
 * toMs (inclusive), and prices them with the dated table. Null when the transcript cannot
 * be read.
 */
export async function transcriptUsage(transcriptPath: string, fromMs: number, toMs: number): Promise<TranscriptUsage | null> {
  const responses = new Map<string, Response>();
  if (!(await readResponses(transcriptPath, fromMs, toMs, responses))) return null;
  for (const path of await subagentTranscripts(transcriptPath)) await readResponses(path, fromMs, toMs, responses);

  const byModel = new Map<string, TokenCounts>();
  // Priced response by response: a long prompt moves that one response to its model's long-prompt rates.
  let cost: number | null = 0;
  for (const response of responses.values()) {
    const { model, ...tokens } = response;
    const responseCost = costOf(model, tokens);
    cost = cost === null || responseCost === null ? null : cost + responseCost;
    const sum = byModel.get(model) ?? {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_creation_1h_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    for (const field of Object.keys(tokens) as (keyof TokenCounts)[]) sum[field] += tokens[field];
    byModel.set(model, sum);
  }
  const models = [...byModel.entries()].sort((a, b) => b[1].output_tokens - a[1].output_tokens);
  const usage: TranscriptUsage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    model: models[0]?.[0] ?? null,
    models: models.map(([model]) => model),
    cost_usd: null,
    responses: responses.size,
    source: "transcript",
    price_table_date: PRICE_TABLE_DATE,
  };
  for (const [, tokens] of models) {
    usage.input_tokens += tokens.input_tokens;
    usage.output_tokens += tokens.output_tokens;
    usage.cache_creation_input_tokens += tokens.cache_creation_input_tokens;
    usage.cache_read_input_tokens += tokens.cache_read_input_tokens;
  }
  // No response counted: nothing is known about the cost (never a zero that was not observed).
  usage.cost_usd = cost === null || responses.size === 0 ? null : Math.round(cost * 1_000_000) / 1_000_000;
  return usage;
}

/** How long `complete_task` waits for the agent to write the response that called it. */
export const CALLING_RESPONSE_WAIT_MS = 2000;
const POLL_MS = 20;

/**
 * Whether the transcript now holds the usage of the model response that made tool call `callId`
 * (the agent's id of the call, sent in the call's `_meta`), read line by line in order (the
 * returned predicate keeps what it saw):
 * - Claude Code (`_meta["claudecode/toolUseId"]`): the response's own line, which carries the
 *   tool_use block with that id and the response's usage (a tool result names it as tool_use_id);
 * - Codex (`_meta.callId`): the first `token_usage_record` after the `function_call` item with that
 *   call_id: Codex writes a response's items as they stream and its usage once the response ends,
 *   which may be after it ran the call (observed with Codex 0.169: 500 ms later when the model
 *   streamed 500 ms past the call's item).
 */
export function callingResponseWritten(callId: string): (line: string) => boolean {
  const id = JSON.stringify(callId);
  let called = false;
  return (line) => {
    if (called) return line.includes('"type":"token_usage_record"');
    if (line.includes(`"call_id":${id}`) && line.includes('"type":"function_call"')) called = true;
    return line.includes('"usage"') && line.includes(`"id":${id}`);
  };
}

/**
 * The timing rule of usage read at a tool call, for any agent's transcript: waits until the
 * transcript holds a line `written` accepts (the response that made the call: the agent writes
 * it after running the call), reading only what was appended since the last look. Bounded by
 * `timeoutMs`: true once the line is there, false when it did not come in time or the
 * transcript cannot be read (usage is then what the transcript held).
 */
export async function awaitTranscriptLine(
  transcriptPath: string,
  written: (line: string) => boolean,
  timeoutMs: number = CALLING_RESPONSE_WAIT_MS,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  // Each look reads only what was appended since the last one (a last line still being written is read again, whole).
  const cursor: LineCursor = { offset: 0 };
  try {
    for (;;) {
      // A line counts once it is whole: a last line cut short (or inside a character) is no JSON yet.
      for await (const line of boundedLines(transcriptPath, MAX_LINE, cursor)) if (written(line) && isJson(line)) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } catch {
    return false;
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The metrics `complete_task` accepts (the wire contract's shape), with both token counts known. */
export type EdgeMetrics = Metrics & Required<Pick<Metrics, "input_tokens" | "output_tokens">>;

/**
 * Transcript usage in the shape `complete_task` accepts: every prompt token the model read
 * (uncached, cache writes and cache reads) counts as input; cost and model only when known.
 */
export function edgeMetrics(usage: TranscriptUsage): EdgeMetrics {
  const metrics: EdgeMetrics = {
    input_tokens: usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens,
    output_tokens: usage.output_tokens,
  };
  if (usage.model) metrics.model = usage.model;
  if (usage.cost_usd !== null) metrics.cost_usd = usage.cost_usd;
  return metrics;
}
