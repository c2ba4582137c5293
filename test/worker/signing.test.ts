import { env, SELF } from "cloudflare:test";
import { keyThumbprint, parsePublishedKeys, type StatementPayload, verifyStatement } from "@waymark/protocol/statement";
import { describe, expect, it } from "vitest";
import { publishedKeys, signStatement } from "../../src/signing";

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
