/**
 * @module usage/transcript
 * Real token usage of a task, read from the agent's own transcript instead of taken from the
 * agent's claim: the file its hook payloads name (`transcript_path`), read with the agent's own
 * reader (its module's `transcript`, ../agents/: Claude Code's JSONL, Codex's session file), and
 * the other files of the same session it names (subagents'). Each model response is counted once
 * (a response written on several lines while it streams keeps its largest counts) and priced with
 * the dated table.
 *
 * The agent writes a response's usage to its transcript some time after it ran the response's
 * tool calls (Claude Code 2.1: 100–250 ms after the call reached the helper, measured; Codex
 * 0.169: once the response's stream ends): so usage read at `complete_task` first waits, bounded,
 * for the response that called it (the agent's `callingResponseWritten`, awaitTranscriptLine).
 */
import type { Metrics } from "@waymark/protocol/wire";
import type { Transcript, TranscriptResponse } from "../agents/agent.js";
import { agentNamed } from "../agents/registry.js";
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

type Response = TranscriptResponse["response"];

/**
 * Lines longer than this are not usage lines (they carry big tool results): skipped unread, which
 * also bounds the memory a transcript can take, whatever it holds (./lines.ts).
 */
const MAX_LINE = 4 * 1024 * 1024;

async function readResponses(
  transcript: Transcript,
  path: string,
  fromMs: number,
  toMs: number,
  into: Map<string, Response>,
): Promise<boolean> {
  try {
    const responseOf = transcript.responses();
    for await (const line of boundedLines(path, MAX_LINE)) {
      const found = responseOf(line, fromMs, toMs);
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

/**
 * Sums the tokens of every model response recorded in `agent`'s transcript between fromMs and
 * toMs (inclusive), and prices them with the dated table. Null when the transcript cannot
 * be read, or the agent has none that tells usage.
 */
export async function transcriptUsage(
  agent: string,
  transcriptPath: string,
  fromMs: number,
  toMs: number,
): Promise<TranscriptUsage | null> {
  const transcript = agentNamed(agent)?.transcript;
  if (!transcript) return null;
  const responses = new Map<string, Response>();
  if (!(await readResponses(transcript, transcriptPath, fromMs, toMs, responses))) return null;
  for (const path of (await transcript.moreFiles?.(transcriptPath)) ?? []) await readResponses(transcript, path, fromMs, toMs, responses);

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
