import { env, SELF } from "cloudflare:test";
import { keyThumbprint, parsePublishedKeys, type StatementPayload, verifyStatement } from "@waymark/protocol/statement";
import { describe, expect, it } from "vitest";
import { publishedKeys, signingKeysProblem, signStatement } from "../../src/signing";

const payload: StatementPayload = {
  type: "waymark.export-statement",
  version: 3,
  workflow_id: "wf_aaaaaaaaaaaaaaaaaaaa",
  events: 4,
  head: "0".repeat(64),
  repository_fingerprint: null,
  account: `sha256:${"0".repeat(64)}`,
  origin: "https://waymark.example.com",
  issued_at: "2026-11-27T12:00:00.000Z",
  content: { workflow: "0".repeat(64) },
};

describe("the deployment's signing keys", () => {
  it("are published at the well-known URL, current first, retired after, each with its thumbprint as id", async () => {
    const response = await SELF.fetch("http://localhost/.well-known/waymark-signing-keys.json", { headers: { Host: "localhost" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    const body = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(body.keys.map((k) => k.status)).toEqual(["current", "retired"]);
    for (const key of body.keys) {
      expect(key).not.toHaveProperty("d");
      expect(key.kid).toBe(keyThumbprint(key.x as string));
    }
    expect(parsePublishedKeys(body)).toHaveLength(2);
  });

  it("sign statements that verify under the published keys, and under no other key", async () => {
    const statement = await signStatement(env as Env, payload);
    const keys = await publishedKeys(env as Env);
    expect(statement.kid).toBe(keys[0]?.kid);
    expect(verifyStatement(statement, keys)).toMatchObject({ ok: true, key: { status: "current" } });

    const edited = { ...statement, payload: { ...payload, events: 3 } };
    expect(verifyStatement(edited, keys)).toEqual({ ok: false, problem: expect.stringContaining("does not match the statement") });
    const otherDeployment = await publishedKeys({ WAYMARK_DEV_TOKEN: "another-dev-token-0123" });
    expect(verifyStatement(statement, otherDeployment)).toEqual({
      ok: false,
      problem: expect.stringContaining("is not among the 1 key(s) given"),
    });
    // A key listed under the statement's id but with another public key: the id must be its thumbprint.
    const impostor = otherDeployment.map((k) => ({ ...k, kid: statement.kid }));
    expect(verifyStatement(statement, impostor)).toEqual({ ok: false, problem: expect.stringContaining("not the thumbprint") });
  });

  it("in development, derives the same key from the same dev token", async () => {
    const a = await publishedKeys({ WAYMARK_DEV_TOKEN: "dev-token-0123456789" });
    const b = await publishedKeys({ WAYMARK_DEV_TOKEN: "dev-token-0123456789" });
    expect(a).toEqual(b);
    expect(a[0]?.status).toBe("current");
  });
});

describe("keys with lifetimes", () => {
  /** A WAYMARK_SIGNING_KEYS value: a signing key and a retired one, each with what is said about it. */
  async function configured(current: Record<string, unknown>, retired: Record<string, unknown>) {
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
    const jwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
    const old = (await crypto.subtle.exportKey(
      "jwk",
      ((await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign"])) as CryptoKeyPair).publicKey,
    )) as JsonWebKey;
    return JSON.stringify([
      { kty: "OKP", crv: "Ed25519", x: jwk.x, d: jwk.d, ...current },
      { kty: "OKP", crv: "Ed25519", x: old.x, ...retired },
    ]);
  }

  it("publishes each key's period and state, and a statement outside its key's period or by a compromised key fails", async () => {
    const value = await configured(
      { not_before: "2026-06-01T00:00:00Z" },
      { not_before: "2026-01-01T00:00:00Z", not_after: "2026-06-01T00:00:00Z", compromised_at: "2026-11-01T00:00:00Z" },
    );
    const keys = await publishedKeys({ WAYMARK_SIGNING_KEYS: value });
    expect(keys.map(({ status, not_before, not_after }) => ({ status, not_before, not_after }))).toEqual([
      { status: "current", not_before: "2026-06-01T00:00:00Z", not_after: null },
      { status: "compromised", not_before: "2026-01-01T00:00:00Z", not_after: "2026-06-01T00:00:00Z" },
    ]);
    const signed = await signStatement({ WAYMARK_SIGNING_KEYS: value }, payload);
    expect(verifyStatement(signed, keys)).toMatchObject({ ok: true });
    // Dated before the key began: refused, whatever the signature.
    const early = await signStatement(
      { WAYMARK_SIGNING_KEYS: value.replace("2026-06-01T00:00:00Z", "2020-01-01T00:00:00Z") },
      {
        ...payload,
        issued_at: "2026-02-01T00:00:00.000Z",
      },
    );
    expect(verifyStatement(early, keys)).toEqual({
      ok: false,
      problem: `signature: issued 2026-02-01T00:00:00.000Z, outside the period key ${keys[0]?.kid} signed in (2026-06-01T00:00:00Z to now)`,
    });
    // The key that signed it is later published as compromised: its genuine statements fail too (a thief can date them as it likes).
    const signer = (JSON.parse(value) as { x: string }[])[0];
    const disowned = await configured({}, { x: signer?.x, compromised_at: "2026-11-01T00:00:00Z" });
    const now = await publishedKeys({ WAYMARK_SIGNING_KEYS: disowned });
    expect(verifyStatement(signed, now)).toEqual({
      ok: false,
      problem: `signature: key ${keys[0]?.kid} is published as compromised: nothing it signed can be trusted (its holder can date a statement as it likes)`,
    });
  });

  it.each([
    [{ compromised_at: "2026-11-01T00:00:00Z" }, "key 0 signs, but is marked compromised"],
    [{ not_after: "2026-01-01T00:00:00Z" }, "key 0 stopped signing at 2026-01-01T00:00:00Z (its not_after)"],
    [{ not_before: "yesterday" }, "key 0.not_before: must be an ISO 8601 UTC time"],
  ])("stops a deployment whose signing key is %j, saying why", async (current, problem) => {
    const value = await configured(current, {});
    expect(signingKeysProblem({ WAYMARK_SIGNING_KEYS: value })).toContain(problem);
  });

  it("signs nothing before its key's period begins, without stopping the deployment for it", async () => {
    const value = await configured({ not_before: "2999-01-01T00:00:00Z" }, {});
    expect(signingKeysProblem({ WAYMARK_SIGNING_KEYS: value })).toBeNull();
    await expect(signStatement({ WAYMARK_SIGNING_KEYS: value }, payload)).rejects.toThrow("key 0 signs from 2999-01-01T00:00:00Z only");
  });
});
