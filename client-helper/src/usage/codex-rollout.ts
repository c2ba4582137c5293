/**
 * @module usage/codex-rollout
 * Codex's session ("rollout") JSONL, the file its hook payloads name as `transcript_path`
 * (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`), as Codex 0.169 writes it:
 * - `{"type":"turn_context","payload":{"turn_id":…,"model":…}}` opens each turn with its model;
 * - `{"type":"token_usage_record","timestamp":…,"payload":{"turn_id":…,"response_id":…,"usage":
 *   {"input_tokens","cached_input_tokens","cache_write_input_tokens","output_tokens",
 *   "reasoning_output_tokens","total_tokens"}}}` follows each model response.
 * OpenAI's counts nest: cached and cache-write tokens are part of `input_tokens`, reasoning
 * tokens part of `output_tokens` (observed: total = input + output). They are split here into
 * the disjoint counts the price table uses. Cumulative `token_count` events are not counted
 * (they would count every response again).
 */
import type { TokenCounts } from "./prices.js";

type Entry = { type?: unknown; timestamp?: unknown; payload?: Record<string, unknown> };

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export class CodexRollout {
  /** The model of each turn, as its turn_context said. */
  private readonly models = new Map<string, string>();
  private lastModel: string | null = null;

  /** Whether the line is one of Codex's that this reader needs (cheap: no parsing). */
  static claims(line: string): boolean {
    return line.includes('"type":"token_usage_record"') || line.includes('"type":"turn_context"');
  }

  /** The model response a line records, keyed by its response id; null for other lines (a turn's model is noted). */
  responseOf(line: string, fromMs: number, toMs: number): { key: string; response: TokenCounts & { model: string } } | null {
    let entry: Entry;
    try {
      entry = JSON.parse(line) as Entry;
    } catch {
      return null;
    }
    const payload = entry.payload && typeof entry.payload === "object" ? entry.payload : null;
    if (!payload) return null;
    const turn = typeof payload.turn_id === "string" ? payload.turn_id : null;
    if (entry.type === "turn_context") {
      if (typeof payload.model === "string" && payload.model !== "") {
        this.lastModel = payload.model;
        if (turn) this.models.set(turn, payload.model);
      }
      return null;
    }
    if (entry.type !== "token_usage_record") return null;
    const usage = payload.usage && typeof payload.usage === "object" ? (payload.usage as Record<string, unknown>) : null;
    const model = (turn ? this.models.get(turn) : undefined) ?? this.lastModel;
    if (!usage || !model) return null;
    const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
    if (!Number.isFinite(at) || at < fromMs || at > toMs) return null;
    const cached = count(usage.cached_input_tokens);
    const written = count(usage.cache_write_input_tokens);
    const id = typeof payload.response_id === "string" ? payload.response_id : `${turn}:${at}`;
    return {
      key: `codex:${id}`,
      response: {
        model,
        input_tokens: Math.max(0, count(usage.input_tokens) - cached - written),
        output_tokens: count(usage.output_tokens),
        cache_creation_input_tokens: written,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: cached,
      },
    };
  }
}
