import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { costOf, PRICE_TABLE, PRICE_TABLE_DATE, priceOf } from "../src/usage/prices.js";
import { transcriptUsage } from "../src/usage/transcript.js";
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
  ])("prices %s at $%d in / $%d out per million tokens", (model, input, output) => {
    expect(priceOf(model)).toMatchObject({ input, output });
  });

  it.each(["gpt-5", "claude-opus-4x", "claude-sonnet-40", "", "<synthetic>", "claude-opus"])(
    "an unknown model (%j) has no price and no cost",
    (model) => {
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
    },
  );

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
});

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
    const usage = await transcriptUsage(path, from, to);
    expect(usage).toEqual({
      input_tokens: 10 + 5 + 100,
      output_tokens: 300 + 200 + 50,
      cache_creation_input_tokens: 2000,
      cache_read_input_tokens: 2000,
      model: "claude-opus-4-6",
      models: ["claude-opus-4-6", "claude-haiku-4-5-20251001"],
      // opus: 15×5 + 500×25 + 2000×6.25 + 2000×0.5 = 26075 µ$; haiku: 100×1 + 50×5 = 350 µ$
      cost_usd: 0.026425,
      responses: 3,
      source: "transcript",
      price_table_date: PRICE_TABLE_DATE,
    });
  });

  it("gives no cost when a model of the window is not in the table", async () => {
    const other = join(dir, "other.jsonl");
    writeFileSync(
      other,
      `${assistant("2026-11-23T10:05:00Z", "m1", "claude-opus-4-6", u(1, 1))}\n${assistant("2026-11-23T10:06:00Z", "m2", "some-new-model", u(1, 1))}\n`,
    );
    const usage = await transcriptUsage(other, from, to);
    expect(usage?.input_tokens).toBe(2);
    expect(usage?.cost_usd).toBeNull();
  });

  it("is null for a transcript that cannot be read, and empty for a window without responses", async () => {
    expect(await transcriptUsage(join(dir, "missing.jsonl"), from, to)).toBeNull();
    const empty = await transcriptUsage(path, to + 10_000, to + 20_000);
    expect(empty).toMatchObject({ input_tokens: 0, output_tokens: 0, model: null, cost_usd: 0, responses: 0 });
  });
});
