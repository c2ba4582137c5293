/**
 * The allowed-signers file a repository pins its devices' keys in: the line `waymark device`
 * prints reads back as that key; options bound when a key's signatures count (UTC only, as a
 * file shared between machines must mean one time); a key that is absent, or signing outside
 * every period listed for it, is not allowed, and the reason says which lines were considered;
 * every malformed line is refused with its number and the rule.
 */
import { AllowedSignersError, allowedSigner, allowedSignerLine, parseAllowedSigners } from "@waymark/protocol/allowed-signers";
import { deviceFingerprint } from "@waymark/protocol/device-signature";
import { describe, expect, it } from "vitest";

const KEY = "R".repeat(43);
const OTHER = "Q".repeat(43);
const at = (iso: string) => Date.parse(iso);

describe("allowed signers", () => {
  it("reads the line waymark device prints, comments and blank lines aside", () => {
    const line = allowedSignerLine("ci box", KEY);
    expect(line).toBe(`ci-box waymark-ed25519 ${KEY} ${deviceFingerprint(KEY)}`);
    const signers = parseAllowedSigners(`# the team's devices\n\n${line}\r\n  laptop   waymark-ed25519 ${OTHER}  \n`);
    expect(signers).toEqual([
      { principal: "ci-box", key: KEY, fingerprint: deviceFingerprint(KEY), valid_after: null, valid_before: null, line: 3 },
      { principal: "laptop", key: OTHER, fingerprint: deviceFingerprint(OTHER), valid_after: null, valid_before: null, line: 4 },
    ]);
    expect(allowedSigner(signers, KEY, Date.now())).toMatchObject({ ok: true, signer: { principal: "ci-box" } });
  });

  it("counts a key's signatures only in a period listed for it", () => {
    const signers = parseAllowedSigners(
      [
        `laptop valid-after="20260101Z",valid-before="202607011200Z" waymark-ed25519 ${KEY} first period`,
        `laptop valid-after="20261001000000Z" waymark-ed25519 ${KEY} second period`,
      ].join("\n"),
    );
    expect(signers[0]).toMatchObject({ valid_after: at("2026-01-01T00:00:00Z"), valid_before: at("2026-07-01T12:00:00Z") });
    expect(allowedSigner(signers, KEY, at("2026-03-01T00:00:00Z"))).toMatchObject({ ok: true, signer: { line: 1 } });
    expect(allowedSigner(signers, KEY, at("2026-11-01T00:00:00Z"))).toMatchObject({ ok: true, signer: { line: 2 } });
    expect(allowedSigner(signers, KEY, at("2026-08-01T00:00:00Z"))).toEqual({
      ok: false,
      problem: `device key ${deviceFingerprint(KEY)} (laptop) signed at 2026-08-01T00:00:00.000Z, outside its allowed period (line 1: 20260101000000Z to 20260701120000Z; line 2: 20261001000000Z to …)`,
    });
    // valid-before is exclusive: a key disowned from a moment on signs nothing from that moment.
    expect(allowedSigner(signers, KEY, at("2026-07-01T12:00:00Z")).ok).toBe(false);
    expect(allowedSigner(signers, OTHER, Date.now())).toEqual({
      ok: false,
      problem: `device key ${deviceFingerprint(OTHER)} is not in the allowed signers`,
    });
  });

  it.each([
    ["laptop ssh-ed25519 AAAA", "line 1: must be <principal> [options] waymark-ed25519 <public key> [comment]"],
    [`waymark-ed25519 ${KEY}`, "line 1: must be <principal>"],
    ["laptop waymark-ed25519 not-a-key", "line 1: the key must be a 32-byte Ed25519 public key"],
    [`laptop namespaces="git" waymark-ed25519 ${KEY}`, 'line 1: unknown option "namespaces=\\"git\\""'],
    [`laptop valid-after="20260101" waymark-ed25519 ${KEY}`, 'line 1: valid-after="20260101" must be a UTC time YYYYMMDD[HHMM[SS]]Z'],
    [`laptop valid-before="20260230Z" waymark-ed25519 ${KEY}`, 'valid-before="20260230Z" must be a UTC time'],
    [`laptop valid-after="20270101Z",valid-before="20260101Z" waymark-ed25519 ${KEY}`, "valid-after must come before valid-before"],
    [`# ok\nlaptop waymark-ed25519`, "line 2: must be <principal>"],
  ])("refuses %j: %s", (text, message) => {
    expect(() => parseAllowedSigners(text)).toThrow(AllowedSignersError);
    expect(() => parseAllowedSigners(text)).toThrow(message);
  });
});
