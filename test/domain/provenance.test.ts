/** Where recorded figures come from (domain/provenance): pure rules, table-tested. */
import type { Changes, Metrics } from "@waymark/protocol/wire";
import { describe, expect, it } from "vitest";
import { endCommit, filesProvenance, metricsProvenance } from "../../src/domain/provenance";

const HEAD = "c".repeat(40);
const helper = { kind: "helper", version: "0.1.0" } as const;
const net = (extra: Partial<Extract<Changes, { type: "net" }>> = {}): Changes => ({ type: "net", transitions: [], ...extra });

describe("filesProvenance", () => {
  it.each<[string, Changes | null, ReturnType<typeof filesProvenance>]>([
    ["no data at all", null, { source: { kind: "client" } }],
    ["unsigned data", net(), { source: { kind: "client" } }],
    ["signed data, no hooks", net({ source: helper }), { source: helper }],
    ["signed with edits", net({ source: helper, agent_edits: { paths: ["a.ts"] } }), { source: helper, not_by_agent_tools: ["gen.js"] }],
    [
      "every file edited by the agent",
      net({ source: helper, agent_edits: { paths: ["a.ts", "gen.js"] } }),
      { source: helper, not_by_agent_tools: [] },
    ],
    ["a cut list of edits proves nothing", net({ source: helper, agent_edits: { paths: ["a.ts"], truncated: true } }), { source: helper }],
    ["edits without a signature prove nothing", net({ agent_edits: { paths: [] } }), { source: { kind: "client" } }],
    ["the helper could not observe", { type: "unavailable", reason: "r", source: helper }, { source: helper }],
  ])("%s", (_label, changes, expected) => {
    expect(filesProvenance(changes, ["a.ts", "gen.js"])).toEqual(expected);
  });
});

describe("metricsProvenance", () => {
  const transcript: Metrics = { input_tokens: 1, source: "transcript", price_table_date: "2026-11-23" };
  it.each<[string, Metrics | undefined, Changes | null, ReturnType<typeof metricsProvenance>]>([
    ["no metrics", undefined, net({ source: helper }), null],
    ["the agent's figures", { input_tokens: 1 }, net({ source: helper }), { source: "agent" }],
    ["transcript with helper changes", transcript, net({ source: helper }), { source: "transcript", price_table_date: "2026-11-23" }],
    ["transcript claimed without helper changes", transcript, net(), { source: "agent" }],
    ["transcript claimed with no changes", transcript, null, { source: "agent" }],
  ])("%s", (_label, metrics, changes, expected) => {
    expect(metricsProvenance(metrics, changes)).toEqual(expected);
  });
});

describe("endCommit", () => {
  it.each<[string, Changes | null, string | null]>([
    ["git changes name it", { type: "git", start_head: null, head: HEAD, committed: [], dirty: [] }, HEAD],
    ["net changes do not", net(), null],
    ["nothing sent", null, null],
  ])("%s", (_label, changes, expected) => {
    expect(endCommit(changes)).toBe(expected);
  });
});
