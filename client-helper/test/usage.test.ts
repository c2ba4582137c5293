import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { costOf, PRICE_TABLE, PRICE_TABLE_DATE, priceOf } from "../src/usage/prices.js";
import { edgeMetrics, type TranscriptUsage, transcriptUsage } from "../src/usage/transcript.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

describe("price table", () => {
  it("is dated and names a source for every row", () => {
    expect(PRICE_TABLE_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    for (const row of PRICE_TABLE) expect(row.source).toMatch(/^https:\/\/\S+ .*read \d{4}-\d{2}-\d{2}/);
  });

  it.each([
    ["claude-opus-4-6", 5, 25],
    ["claude-opus-4-1-20250805", 15, 75],
    ["claude-opus-4-20250514", 15, 75],
    ["claude-opus-4-5-20251101", 5, 25],
    ["claude-sonnet-4-5-20250929", 3, 15],
    ["CLAUDE-HAIKU-4-5", 1, 5],
    ["claude-3-5-haiku-20241022", 0.8, 4],
    ["claude-fable-5-1", 10, 50],
    ["gpt-5.3-codex", 1.75, 14],
    ["gpt-5.2-codex", 1.75, 14],
    ["gpt-5-codex", 1.25, 10],
    ["gpt-5-codex-2025-09-15", 1.25, 10],
    // The defaults of the pinned agents (test/e2e/default-models.test.ts asks the CLIs themselves).
    ["claude-opus-5-5", 4, 20],
    ["claude-sonnet-5-5", 2, 10],
    ["claude-haiku-5-5", 0.1, 0.5],
    ["gpt-6.1-sol", 2, 10],
    ["gpt-5.5", 5, 30],
  ])("prices %s at $%d in / $%d out per million tokens", (model, input, output) => {
    expect(priceOf(model)).toMatchObject({ input, output });
  });

  it.each([
    "gpt-5",
    "gpt-5.3-codex-spark",
    "claude-opus-4-6-experimental",
    "claude-opus-4x",
    "claude-sonnet-40",
    "",
    "<synthetic>",
    "claude-opus",
    "gpt-5.5-pro",
    "gpt-6.1-sol-mini",
  ])("an unknown model (%j) has no price and no cost", (model) => {
    expect(priceOf(model)).toBeNull();
    expect(
      costOf(model, {
        input_tokens: 1,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: 0,
      }),
    ).toBeNull();
  });

  it("prices 1-hour cache writes apart from 5-minute ones", () => {
    const tokens = {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 3_000_000,
      cache_creation_1h_input_tokens: 1_000_000,
      cache_read_input_tokens: 1_000_000,
    };
    // Opus 4.6: 2M × $6.25 + 1M × $10 + 1M × $0.50
    expect(costOf("claude-opus-4-6", tokens)).toBe(23);
  });

  const none = {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_creation_1h_input_tokens: 0,
    cache_read_input_tokens: 0,
  };

  it("prices a response past its model's long-prompt threshold whole at the long-prompt rates (Haiku 5.5: 100K tokens)", () => {
    // At the threshold (input, cache writes and reads together): $0.10 in, $0.50 out, $0.125 writes, $0.01 reads.
    const at = {
      ...none,
      input_tokens: 40_000,
      cache_creation_input_tokens: 10_000,
      cache_read_input_tokens: 50_000,
      output_tokens: 1_000,
    };
    expect(costOf("claude-haiku-5-5", at)).toBeCloseTo((40_000 * 0.1 + 10_000 * 0.125 + 50_000 * 0.01 + 1_000 * 0.5) / 1e6, 12);
    // One token more: $0.50 in, $2.50 out, $0.625 writes, $0.05 reads, on every token of the response.
    const past = { ...at, input_tokens: 40_001 };
    expect(costOf("claude-haiku-5-5", past)).toBeCloseTo((40_001 * 0.5 + 10_000 * 0.625 + 50_000 * 0.05 + 1_000 * 2.5) / 1e6, 12);
  });

  it("prices OpenAI's long context (over 272K input tokens): input and cache rates doubled, output 1.5×", () => {
    const short = { ...none, input_tokens: 72_000, cache_read_input_tokens: 200_000, cache_creation_input_tokens: 0, output_tokens: 1_000 };
    // gpt-6.1-sol: $2 in, $0.10 cached, $2.50 cache writes, $10 out.
    expect(costOf("gpt-6.1-sol", short)).toBeCloseTo((72_000 * 2 + 200_000 * 0.1 + 1_000 * 10) / 1e6, 12);
    const long = { ...short, cache_creation_input_tokens: 1_000 };
    expect(costOf("gpt-6.1-sol", long)).toBeCloseTo((72_000 * 4 + 200_000 * 0.2 + 1_000 * 5 + 1_000 * 15) / 1e6, 12);
    // gpt-5.5: $5 in, $0.50 cached, $30 out; long: $10, $1, $45.
    expect(costOf("gpt-5.5", short)).toBeCloseTo((72_000 * 5 + 200_000 * 0.5 + 1_000 * 30) / 1e6, 12);
    expect(costOf("gpt-5.5", { ...short, input_tokens: 72_001 })).toBeCloseTo((72_001 * 10 + 200_000 * 1 + 1_000 * 45) / 1e6, 12);
  });
});

/**
 * A transcript's usage as transcriptUsage returns it: [input, output, cache writes, cache reads],
 * the models (most output first), the cost and the number of responses counted.
 */
function summed(tokens: [number, number, number, number], models: string[], cost: number | null, responses: number): TranscriptUsage {
  const [input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens] = tokens;
  return {
    input_tokens,
    output_tokens,
    cache_creation_input_tokens,
    cache_read_input_tokens,
    model: models[0] ?? null,
    models,
    cost_usd: cost,
    responses,
    source: "transcript",
    price_table_date: PRICE_TABLE_DATE,
  };
}

/** One line of a Claude Code transcript, in the shape Claude Code writes it. */
function assistant(at: string, id: string, model: string, usage: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/work/project",
    sessionId: "5b3c1e9a-0000-4000-8000-000000000001",
    version: "2.1.300",
    gitBranch: "main",
    type: "assistant",
    uuid: `${id}-${Math.random().toString(36).slice(2)}`,
    timestamp: at,
    requestId: `req_${id}`,
    message: { id, type: "message", role: "assistant", model, content: [{ type: "text", text: "…" }], usage },
    ...extra,
  });
}

describe("transcriptUsage", () => {
  const dir = tempDir("waymark-transcript-");
  const session = "5b3c1e9a-0000-4000-8000-000000000001";
  const path = join(dir, `${session}.jsonl`);
  const from = Date.parse("2026-11-23T10:00:00Z");
  const to = Date.parse("2026-11-23T11:00:00Z");
  const u = (input: number, output: number, write = 0, read = 0, write1h = 0) => ({
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: write - write1h, ephemeral_1h_input_tokens: write1h },
    service_tier: "standard",
  });
  writeFileSync(
    path,
    [
      JSON.stringify({ type: "summary", summary: "x", leafUuid: "y" }),
      JSON.stringify({ type: "user", timestamp: "2026-11-23T10:00:01Z", message: { role: "user", content: "do it" } }),
      assistant("2026-11-23T09:59:59Z", "msg_before", "claude-opus-4-6", u(1000, 1000)),
      // One response written on two lines while it streamed: counted once, with the final counts.
      assistant("2026-11-23T10:00:02Z", "msg_1", "claude-opus-4-6", u(10, 1, 2000, 0)),
      assistant("2026-11-23T10:00:03Z", "msg_1", "claude-opus-4-6", u(10, 300, 2000, 0)),
      assistant("2026-11-23T10:10:00Z", "msg_2", "claude-opus-4-6", u(5, 200, 0, 2000, 0)),
      assistant("2026-11-23T10:11:00Z", "msg_3", "<synthetic>", u(0, 0)),
      "{not json",
      assistant("2026-11-23T11:00:01Z", "msg_after", "claude-opus-4-6", u(1000, 1000)),
    ].join("\n"),
  );
  mkdirSync(join(dir, session, "subagents"), { recursive: true });
  writeFileSync(
    join(dir, session, "subagents", "agent-a1b2c3.jsonl"),
    `${assistant("2026-11-23T10:20:00Z", "msg_sub", "claude-haiku-4-5-20251001", u(100, 50, 0, 0), { isSidechain: true, agentId: "a1b2c3" })}\n`,
  );

  it("sums the task's window once per response, subagents included, and prices it", async () => {
    const usage = await transcriptUsage("claude", path, from, to);
    // opus: 15×5 + 500×25 + 2000×6.25 + 2000×0.5 = 26075 µ$; haiku: 100×1 + 50×5 = 350 µ$
    expect(usage).toEqual(
      summed([10 + 5 + 100, 300 + 200 + 50, 2000, 2000], ["claude-opus-4-6", "claude-haiku-4-5-20251001"], 0.026425, 3),
    );
  });

  it("gives no cost when a model of the window is not in the table", async () => {
    const other = join(dir, "other.jsonl");
    writeFileSync(
      other,
      `${assistant("2026-11-23T10:05:00Z", "m1", "claude-opus-4-6", u(1, 1))}\n${assistant("2026-11-23T10:06:00Z", "m2", "some-new-model", u(1, 1))}\n`,
    );
    const usage = await transcriptUsage("claude", other, from, to);
    expect(usage?.input_tokens).toBe(2);
    expect(usage?.cost_usd).toBeNull();
  });

  it("prices each response on its own: one long prompt of a subagent's Haiku 5.5 at the long-prompt rates, the short ones not", async () => {
    const tiers = join(dir, "tiers.jsonl");
    writeFileSync(
      tiers,
      [
        assistant("2026-11-23T10:05:00Z", "h1", "claude-haiku-5-5", u(1_000, 100, 0, 20_000)),
        assistant("2026-11-23T10:06:00Z", "h2", "claude-haiku-5-5", u(2_000, 100, 0, 120_000)),
      ].join("\n"),
    );
    // h1 (21K prompt): 1000×0.10 + 100×0.50 + 20000×0.01 = 350 µ$; h2 (122K prompt): 2000×0.50 + 100×2.50 + 120000×0.05 = 7250 µ$.
    // Summed first and priced as one (143K), both would take the long-prompt rates: 8650 µ$.
    expect((await transcriptUsage("claude", tiers, from, to))?.cost_usd).toBe(0.0076);
  });

  it("is null for a transcript that cannot be read, and empty for a window without responses", async () => {
    expect(await transcriptUsage("claude", join(dir, "missing.jsonl"), from, to)).toBeNull();
    const empty = await transcriptUsage("claude", path, to + 10_000, to + 20_000);
    // Nothing counted: no cost is stated (a zero would claim the task was free).
    expect(empty).toMatchObject({ input_tokens: 0, output_tokens: 0, model: null, cost_usd: null, responses: 0 });
  });
});

/**
 * Lines of a Codex 0.169 session (rollout) file, in the shape the real `codex exec` wrote them
 * against a local model server (payloads trimmed to the fields Waymark reads and a few others).
 */
const counts = (input: number, cached: number, output: number, reasoning: number) => ({
  input_tokens: input,
  cached_input_tokens: cached,
  cache_write_input_tokens: 0,
  output_tokens: output,
  reasoning_output_tokens: reasoning,
  total_tokens: input + output,
});
const rollout = {
  meta: () =>
    JSON.stringify({
      timestamp: "2026-11-27T10:54:08.847Z",
      ordinal: 0,
      type: "session_meta",
      payload: { session_id: "s", cwd: "/work/project", originator: "codex_exec", cli_version: "0.169.0", model_provider: "lab" },
    }),
  turn: (at: string, turn: string, model: string) =>
    JSON.stringify({
      timestamp: at,
      ordinal: 5,
      type: "turn_context",
      payload: { turn_id: turn, root_turn_id: turn, cwd: "/work/project", approval_policy: "never", model, summary: "none" },
    }),
  usage: (at: string, turn: string, response: string, input: number, cached: number, output: number, reasoning = 0) =>
    JSON.stringify({
      timestamp: at,
      ordinal: 11,
      type: "token_usage_record",
      payload: {
        thread_id: "s",
        turn_id: turn,
        session_id: "s",
        root_turn_id: turn,
        response_id: response,
        usage: counts(input, cached, output, reasoning),
        // Codex writes the turn's running totals beside each response's own; only the latter count.
        turn_token_usage: counts(input, cached, output, reasoning),
      },
    }),
  /** The cumulative event Codex writes after each response: never counted (it repeats the totals). */
  count: (at: string, input: number, output: number) =>
    JSON.stringify({
      timestamp: at,
      ordinal: 12,
      type: "event_msg",
      payload: {
        type: "token_count",
        info: {
          total_token_usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: output, total_tokens: input + output },
          last_token_usage: { input_tokens: input, output_tokens: output },
        },
      },
    }),
};

describe("transcriptUsage on a Codex session (rollout) file", () => {
  const dir = tempDir("waymark-rollout-");
  const path = join(dir, "rollout-2026-11-27T10-54-08-01a21ca4-23a5-7ff1-a878-ed0c880ff202.jsonl");
  const from = Date.parse("2026-11-27T10:00:00Z");
  const to = Date.parse("2026-11-27T11:00:00Z");
  writeFileSync(
    path,
    [
      rollout.meta(),
      rollout.turn("2026-11-27T09:59:00.000Z", "t0", "gpt-5.3-codex"),
      rollout.usage("2026-11-27T09:59:01.000Z", "t0", "resp_before", 9999, 0, 9999),
      rollout.turn("2026-11-27T10:54:08.883Z", "t1", "gpt-5.3-codex"),
      rollout.usage("2026-11-27T10:54:09.029Z", "t1", "resp_1", 1011, 100, 17, 1),
      rollout.count("2026-11-27T10:54:09.030Z", 1011, 17),
      rollout.usage("2026-11-27T10:54:10.029Z", "t1", "resp_2", 2022, 1000, 27, 2),
      rollout.count("2026-11-27T10:54:10.030Z", 3033, 44),
      rollout.turn("2026-11-27T10:55:00.000Z", "t2", "gpt-5-codex"),
      rollout.usage("2026-11-27T10:55:01.000Z", "t2", "resp_3", 500, 0, 300),
    ].join("\n"),
  );

  it("counts each response once with its turn's model, splits cached input out, and prices it", async () => {
    const usage = await transcriptUsage("codex", path, from, to);
    // Uncached input: (1011 − 100) + (2022 − 1000) + 500; cached input is a cache read.
    // gpt-5.3-codex: 1933×1.75 + 1100×0.175 + 44×14 = 4191.25 µ$; gpt-5-codex: 500×1.25 + 300×10 = 3625 µ$
    expect(usage).toEqual(summed([911 + 1022 + 500, 17 + 27 + 300, 0, 1100], ["gpt-5-codex", "gpt-5.3-codex"], 0.007816, 3));
  });

  it("the metrics complete_task carries: every prompt token as input, Codex's model", async () => {
    const usage = await transcriptUsage("codex", path, from, Date.parse("2026-11-27T10:54:30Z"));
    expect(usage && edgeMetrics(usage)).toEqual({
      input_tokens: 1011 + 2022,
      output_tokens: 44,
      model: "gpt-5.3-codex",
      cost_usd: 0.004191,
    });
  });

  it("a model no row prices gives the tokens without a cost", async () => {
    const other = join(dir, "other.jsonl");
    writeFileSync(
      other,
      [rollout.turn("2026-11-27T10:54:00Z", "t", "lab-model"), rollout.usage("2026-11-27T10:54:01Z", "t", "r", 10, 0, 5)].join("\n"),
    );
    expect(await transcriptUsage("codex", other, from, to)).toMatchObject({
      input_tokens: 10,
      output_tokens: 5,
      model: "lab-model",
      cost_usd: null,
      responses: 1,
    });
  });
});
