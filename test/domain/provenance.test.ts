/** Where recorded figures come from (domain/provenance): pure rules, table-tested. */
import type { Changes, Metrics } from "@waymark/protocol/wire";
import { describe, expect, it } from "vitest";
import type { SignatureVerdict } from "../../src/domain/device-signature";
import { endCommit, filesProvenance, metricsProvenance, type Trust, trustOf, UNSIGNED } from "../../src/domain/provenance";

const HEAD = "c".repeat(40);
const helper = { kind: "helper", version: "0.1.0" } as const;
const laptop = { name: "laptop", fingerprint: "SHA256:laptop" };
const signed: Trust = { files: laptop, usage: laptop, reason: "" };
const net = (extra: Partial<Extract<Changes, { type: "net" }>> = {}): Changes => ({ type: "net", transitions: [], ...extra });
const claimed = (reason = "not signed by a device") => ({ kind: "claimed", version: "0.1.0", reason }) as const;

describe("filesProvenance", () => {
  it.each<[string, Changes | null, Trust, ReturnType<typeof filesProvenance>]>([
    ["no data at all: not observed", null, UNSIGNED, { source: { kind: "not_observed", reason: "no file changes were sent" } }],
    ["a client's own data", net(), UNSIGNED, { source: { kind: "claimed", reason: "not signed by a device" } }],
    ["the helper's identity, unsigned: a claim", net({ source: helper }), UNSIGNED, { source: claimed() }],
    ["signed by an approved device", net({ source: helper }), signed, { source: { kind: "signed", version: "0.1.0", device: laptop } }],
    [
      "signed, with the hooks' edits",
      net({ source: helper, agent_edits: { paths: ["a.ts"] } }),
      signed,
      { source: { kind: "signed", version: "0.1.0", device: laptop }, not_by_agent_tools: ["gen.js"] },
    ],
    [
      "every file edited by the agent",
      net({ source: helper, agent_edits: { paths: ["a.ts", "gen.js"] } }),
      signed,
      { source: { kind: "signed", version: "0.1.0", device: laptop }, not_by_agent_tools: [] },
    ],
    [
      "no hook observed the task: nothing said about the agent's edits",
      net({ source: helper }),
      signed,
      { source: { kind: "signed", version: "0.1.0", device: laptop } },
    ],
    [
      "a cut list of edits proves nothing",
      net({ source: helper, agent_edits: { paths: ["a.ts"], truncated: true } }),
      signed,
      { source: { kind: "signed", version: "0.1.0", device: laptop } },
    ],
    [
      "edits a client claims stay its claim",
      net({ source: helper, agent_edits: { paths: [] } }),
      UNSIGNED,
      { source: claimed(), not_by_agent_tools: ["a.ts", "gen.js"] },
    ],
    [
      "the helper could not observe: not observed, signed or not",
      { type: "unavailable", reason: "r", source: helper },
      signed,
      { source: { kind: "not_observed", reason: "no observation was sent; the warnings say why" } },
    ],
    [
      "a start another device signed",
      net({ source: helper }),
      { files: null, usage: laptop, reason: "its start snapshot was not signed by the same device" },
      { source: claimed("its start snapshot was not signed by the same device") },
    ],
  ])("%s", (_label, changes, trust, expected) => {
    expect(filesProvenance(changes, ["a.ts", "gen.js"], trust)).toEqual(expected);
  });
});

describe("metricsProvenance", () => {
  const transcript: Metrics = { input_tokens: 1, source: "transcript", price_table_date: "2026-11-23" };
  it.each<[string, Metrics | undefined, Trust, ReturnType<typeof metricsProvenance>]>([
    ["no metrics", undefined, signed, null],
    ["the agent's figures, in a signed call", { input_tokens: 1 }, signed, { source: "agent" }],
    [
      "transcript figures an approved device signed",
      transcript,
      signed,
      { source: "transcript", price_table_date: "2026-11-23", device: laptop },
    ],
    ["transcript claimed without a signature", transcript, UNSIGNED, { source: "agent" }],
  ])("%s", (_label, metrics, trust, expected) => {
    expect(metricsProvenance(metrics, trust)).toEqual(expected);
  });
});

describe("trustOf", () => {
  const ok: SignatureVerdict = { ok: true, device: laptop, nonce: "n2", start_nonce: "n1" };
  it.each<[string, SignatureVerdict, Parameters<typeof trustOf>[1], Trust]>([
    ["both ends signed by the device", ok, { fingerprint: laptop.fingerprint, nonce: "n1" }, signed],
    ["an unsigned start", ok, null, { files: null, usage: laptop, reason: "its start snapshot was not signed by the same device" }],
    [
      "a start of another device",
      ok,
      { fingerprint: "SHA256:other", nonce: "n1" },
      { files: null, usage: laptop, reason: "its start snapshot was not signed by the same device" },
    ],
    [
      "a completion naming another start",
      ok,
      { fingerprint: laptop.fingerprint, nonce: "n0" },
      { files: null, usage: laptop, reason: "its start snapshot was not signed by the same device" },
    ],
    [
      "a refused completion",
      { ok: false, reason: "why" },
      { fingerprint: laptop.fingerprint, nonce: "n1" },
      { files: null, usage: null, reason: "why" },
    ],
  ])("%s", (_label, verdict, start, expected) => {
    expect(trustOf(verdict, start)).toEqual(expected);
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
