/**
 * @module usage/prices
 * The dated price table the helper uses to turn transcript token counts into a cost.
 * Every row names where its prices come from and when they were read. A model that no row
 * matches gets no cost at all (`null`): a made-up figure is worse than none.
 */

/** The day the table below last changed (each row says when its source was read). */
export const PRICE_TABLE_DATE = "2026-11-29";

/**
 * USD per million tokens, one figure per kind of token Anthropic bills separately. OpenAI bills
 * cached input at its own rate (`cache_read` here) and writes to its cache at the input rate.
 */
export type ModelPrice = {
  input: number;
  output: number;
  /** Prompt-cache writes with the default 5-minute lifetime. */
  cache_write_5m: number;
  /** Prompt-cache writes with the 1-hour lifetime. */
  cache_write_1h: number;
  /** Prompt-cache hits and refreshes. */
  cache_read: number;
};

export type PriceRow = {
  /** Model ids this row prices: an id matches when it equals a prefix or continues it with `-` (a dated snapshot). */
  models: readonly string[];
  price: ModelPrice;
  /**
   * A response whose prompt (input, cache writes and cache reads together) is longer than `above`
   * tokens is billed whole at `price` instead, output included.
   */
  longPrompt?: { above: number; price: ModelPrice };
  source: string;
};

const ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing (Model pricing table), read 2026-11-23";

/**
 * OpenAI's rates, cached input apart; a cache write costs what input costs unless the model lists
 * a cache-write rate (Codex's rollout reports no retention, so both lifetimes take that rate).
 */
function openAiPrice(input: number, cachedInput: number, output: number, cacheWrite = input): ModelPrice {
  return { input, output, cache_write_5m: cacheWrite, cache_write_1h: cacheWrite, cache_read: cachedInput };
}

/** OpenAI's long-context rule: above 272K input tokens, input and cache rates double and output costs 1.5 times as much. */
function openAiLongContext(price: ModelPrice): { above: number; price: ModelPrice } {
  const double = (rate: number) => rate * 2;
  return {
    above: 272_000,
    price: {
      input: double(price.input),
      output: price.output * 1.5,
      cache_write_5m: double(price.cache_write_5m),
      cache_write_1h: double(price.cache_write_1h),
      cache_read: double(price.cache_read),
    },
  };
}

const GPT_5_5 = openAiPrice(5, 0.5, 30);
const GPT_6_1_SOL = openAiPrice(2, 0.1, 10, 2.5);

/** Standard (not batch, not long-context) API prices. */
export const PRICE_TABLE: readonly PriceRow[] = [
  {
    models: ["claude-opus-5-5"],
    price: { input: 4, output: 20, cache_write_5m: 5, cache_write_1h: 8, cache_read: 0.2 },
    source:
      "https://platform.claude.com/docs/zh-CN/models/opus-5-5/overview (Pricing), read 2026-11-29; Claude Code 2.1.328's default model (observed: it asks for claude-opus-5-5 with no model set)",
  },
  {
    models: ["claude-sonnet-5-5"],
    price: { input: 2, output: 10, cache_write_5m: 2.5, cache_write_1h: 4, cache_read: 0.1 },
    source:
      "https://platform.claude.com/docs/en/models/haiku-5-5/overview (How it compares: $2 / $10) and https://github.com/kurofune/claudit/releases/tag/v1.9.2 (cache writes $2.50 / $4, cache reads $0.10 since 2026-10-07, read from Anthropic's pricing page 2026-10-24), read 2026-11-29; Claude Code 2.1.328's `sonnet`",
  },
  {
    models: ["claude-haiku-5-5"],
    price: { input: 0.1, output: 0.5, cache_write_5m: 0.125, cache_write_1h: 0.2, cache_read: 0.01 },
    longPrompt: { above: 100_000, price: { input: 0.5, output: 2.5, cache_write_5m: 0.625, cache_write_1h: 1, cache_read: 0.05 } },
    source:
      "https://platform.claude.com/docs/en/models/haiku-5-5/overview (From $0.10 / $0.50; prompts over 100K tokens $0.50 / $2.50) and https://github.com/kurofune/claudit/releases/tag/v1.9.2 (cache writes and reads of both bands, read from Anthropic's pricing page 2026-10-24), read 2026-11-29; Claude Code 2.1.328's `haiku`",
  },
  {
    models: ["claude-fable-5-1", "claude-mythos-5-1"],
    price: { input: 10, output: 50, cache_write_5m: 12.5, cache_write_1h: 20, cache_read: 0.25 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["claude-fable-5", "claude-mythos-5"],
    price: { input: 10, output: 50, cache_write_5m: 12.5, cache_write_1h: 20, cache_read: 1 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5"],
    price: { input: 5, output: 25, cache_write_5m: 6.25, cache_write_1h: 10, cache_read: 0.5 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["claude-opus-4-1", "claude-opus-4"],
    price: { input: 15, output: 75, cache_write_5m: 18.75, cache_write_1h: 30, cache_read: 1.5 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["claude-sonnet-4-6", "claude-sonnet-4-5", "claude-sonnet-4", "claude-3-7-sonnet"],
    price: { input: 3, output: 15, cache_write_5m: 3.75, cache_write_1h: 6, cache_read: 0.3 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["claude-haiku-4-5"],
    price: { input: 1, output: 5, cache_write_5m: 1.25, cache_write_1h: 2, cache_read: 0.1 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["claude-3-5-haiku"],
    price: { input: 0.8, output: 4, cache_write_5m: 1, cache_write_1h: 1.6, cache_read: 0.08 },
    source: ANTHROPIC_PRICING,
  },
  {
    models: ["gpt-6.1-sol"],
    price: GPT_6_1_SOL,
    longPrompt: openAiLongContext(GPT_6_1_SOL),
    source:
      "https://developers.openai.com/api/docs/models/gpt-6.1-sol ($2 input, $0.10 cached input, $2.50 cache writes, $10 output; over 272K input tokens input and cache rates double, output 1.5×), as https://github.com/amine123max/Codex-Manager/releases/tag/0.4.7 and https://dev.to/hassann/how-to-use-gpt-61-sol-apl--45cg quote it, read 2026-11-29; Codex 0.169.0's default model (observed: it asks for gpt-6.1-sol with no model set)",
  },
  {
    models: ["gpt-5.5"],
    price: GPT_5_5,
    longPrompt: openAiLongContext(GPT_5_5),
    source:
      "https://developers.openai.com/docs/models (GPT-5.5: $5 input, $30 output) and https://vercel.com/ai-gateway/models/gpt-5.5/about (cached input $0.50), read 2026-11-29; over 272K input tokens: https://www.benchr.org/articles/gpt-5-5-pricing-explained ($10 / $45, cached $1)",
  },
  {
    models: ["gpt-5-codex"],
    price: openAiPrice(1.25, 0.125, 10),
    source: "https://developers.openai.com/api/docs/models/gpt-5-codex (Text tokens, per 1M tokens), read 2026-11-27",
  },
  {
    models: ["gpt-5.3-codex", "gpt-5.2-codex"],
    price: openAiPrice(1.75, 0.175, 14),
    source:
      "https://github.com/github/docs/blob/main/data/tables/copilot/models-and-pricing.yml (GPT-5.2-Codex, GPT-5.3-Codex) and https://vercel.com/ai-gateway/models/gpt-5.3-codex (OpenAI's row), read 2026-11-27; OpenAI's own page for these models was not available to check",
  },
];

/** What may follow a row's id in a model id of the same model: a dated snapshot (`-20250805`, `-2025-08-07`). */
const SNAPSHOT = /^-(?:\d{8}|\d{4}-\d{2}-\d{2})$/;

/** The row that prices a model id, or null: the id itself, or one of its dated snapshots (the longest prefix wins). */
function rowOf(model: string): PriceRow | null {
  const id = model.trim().toLowerCase();
  let best: { length: number; row: PriceRow } | null = null;
  for (const row of PRICE_TABLE) {
    for (const prefix of row.models) {
      const matches = id === prefix || (id.startsWith(prefix) && SNAPSHOT.test(id.slice(prefix.length)));
      if (matches && (best === null || prefix.length > best.length)) best = { length: prefix.length, row };
    }
  }
  return best?.row ?? null;
}

/**
 * The price of a model id, or null when no row names it: the id itself, or one of its dated
 * snapshots (`claude-opus-4-1-20250805` is Opus 4.1, never Opus 4; `gpt-5.3-codex-spark` is not
 * `gpt-5.3-codex`). A row's long-prompt price applies per response (costOf).
 */
export function priceOf(model: string): ModelPrice | null {
  return rowOf(model)?.price ?? null;
}

export type TokenCounts = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  /** The part of the cache writes made with the 1-hour lifetime (the rest is priced at 5 minutes). */
  cache_creation_1h_input_tokens: number;
  cache_read_input_tokens: number;
};

/**
 * Cost in USD of one model response (not rounded: the caller rounds the sum); null for an
 * unknown model. A response whose prompt is past its row's long-prompt threshold is priced
 * whole at the long-prompt rates, as the providers bill it.
 */
export function costOf(model: string, tokens: TokenCounts): number | null {
  const row = rowOf(model);
  if (!row) return null;
  const prompt = tokens.input_tokens + tokens.cache_creation_input_tokens + tokens.cache_read_input_tokens;
  const price = row.longPrompt && prompt > row.longPrompt.above ? row.longPrompt.price : row.price;
  const oneHour = Math.min(tokens.cache_creation_1h_input_tokens, tokens.cache_creation_input_tokens);
  const fiveMinutes = tokens.cache_creation_input_tokens - oneHour;
  const micro =
    tokens.input_tokens * price.input +
    tokens.output_tokens * price.output +
    fiveMinutes * price.cache_write_5m +
    oneHour * price.cache_write_1h +
    tokens.cache_read_input_tokens * price.cache_read;
  return micro / 1_000_000;
}
