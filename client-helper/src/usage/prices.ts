/**
 * @module usage/prices
 * The dated price table the helper uses to turn transcript token counts into a cost.
 * Every row names where its prices come from and when they were read. A model that no row
 * matches gets no cost at all (`null`): a made-up figure is worse than none.
 */

/** The day the table below last changed (each row says when its source was read). */
export const PRICE_TABLE_DATE = "2026-11-27";

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
  source: string;
};

const ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing (Model pricing table), read 2026-11-23";

/** OpenAI's rates, cached input apart; a cache write costs what input costs. */
function openAiPrice(input: number, cachedInput: number, output: number): ModelPrice {
  return { input, output, cache_write_5m: input, cache_write_1h: input, cache_read: cachedInput };
}

/** Standard (not batch, not long-context) API prices. */
export const PRICE_TABLE: readonly PriceRow[] = [
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

/**
 * The price of a model id, or null when no row names it: the id itself, or one of its dated
 * snapshots (`claude-opus-4-1-20250805` is Opus 4.1, never Opus 4; `gpt-5.3-codex-spark` is not
 * `gpt-5.3-codex`).
 */
export function priceOf(model: string): ModelPrice | null {
  const id = model.trim().toLowerCase();
  let best: { length: number; price: ModelPrice } | null = null;
  for (const row of PRICE_TABLE) {
    for (const prefix of row.models) {
      const matches = id === prefix || (id.startsWith(prefix) && SNAPSHOT.test(id.slice(prefix.length)));
      if (matches && (best === null || prefix.length > best.length)) best = { length: prefix.length, price: row.price };
    }
  }
  return best?.price ?? null;
}

export type TokenCounts = {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  /** The part of the cache writes made with the 1-hour lifetime (the rest is priced at 5 minutes). */
  cache_creation_1h_input_tokens: number;
  cache_read_input_tokens: number;
};

/** Cost in USD of these tokens for this model, rounded to a millionth of a dollar; null for an unknown model. */
export function costOf(model: string, tokens: TokenCounts): number | null {
  const price = priceOf(model);
  if (!price) return null;
  const oneHour = Math.min(tokens.cache_creation_1h_input_tokens, tokens.cache_creation_input_tokens);
  const fiveMinutes = tokens.cache_creation_input_tokens - oneHour;
  const micro =
    tokens.input_tokens * price.input +
    tokens.output_tokens * price.output +
    fiveMinutes * price.cache_write_5m +
    oneHour * price.cache_write_1h +
    tokens.cache_read_input_tokens * price.cache_read;
  return Math.round(micro) / 1_000_000;
}
