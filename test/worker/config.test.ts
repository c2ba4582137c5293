import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import app from "../../src/index";

/** The Worker itself, under other configurations than the test project's. */
const serve = (path: string, overrides: Partial<Env>, headers: Record<string, string> = {}) =>
  app.fetch(new Request(`http://localhost${path}`, { headers: { Host: "localhost", ...headers } }), { ...env, ...overrides });

describe("deployment configuration", () => {
  it.each([
    ["a 16-byte share secret", { WAYMARK_SHARE_SECRET: "0123456789abcdef" }, "WAYMARK_SHARE_SECRET is 16 bytes: it must be at least 32"],
    ["a 31-byte share secret", { WAYMARK_SHARE_SECRET: "x".repeat(31) }, "WAYMARK_SHARE_SECRET is 31 bytes: it must be at least 32"],
    ["no share secret in production", { WAYMARK_SHARE_SECRET: "" }, "WAYMARK_SHARE_SECRET is not set"],
    ["a short share secret in development", { WAYMARK_SHARE_SECRET: "short", WAYMARK_DEV_TOKEN: "dev-token-0123456789" }, "is 5 bytes"],
    ["no host names in production", { WAYMARK_HOSTNAMES: "" }, "WAYMARK_HOSTNAMES is not set"],
    [
      "no signing key in production",
      { WAYMARK_SIGNING_KEYS: "" },
      "WAYMARK_SIGNING_KEYS is not set: generate a key with `npm run signing-key`",
    ],
    [
      "signing keys that are not JSON",
      { WAYMARK_SIGNING_KEYS: "ed25519:abc" },
      "WAYMARK_SIGNING_KEYS: must be a JSON array of Ed25519 JWKs",
    ],
    [
      "a signing key without its private part",
      { WAYMARK_SIGNING_KEYS: JSON.stringify([{ kty: "OKP", crv: "Ed25519", x: "jB2-8Qa2hrSIVBnTr-JAY1EYtBOSeYCxr_DTFGZVTIA" }]) },
      "key 0 signs, so it must carry its private part d",
    ],
    [
      "a signing key of another curve",
      { WAYMARK_SIGNING_KEYS: JSON.stringify([{ kty: "EC", crv: "P-256", x: "a", y: "b", d: "c" }]) },
      "key 0: must be an Ed25519 JWK",
    ],
  ])("refuses to serve anything with %s, saying why", async (_case, overrides, message) => {
    for (const path of ["/health", "/s/sh_aaaaaaaaaaaaaaaaaaaa_bbbbbbbb_cccccccccccccccccccccccccc", "/login", "/api/webhooks"]) {
      const response = await serve(path, overrides);
      expect(response.status).toBe(500);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("MISCONFIGURED");
      expect(body.message).toContain(message);
    }
    // MCP clients get it as a JSON-RPC error.
    const mcp = await serve("/mcp", overrides);
    expect(mcp.status).toBe(500);
    const rpcMessage = ((await mcp.json()) as { error: { message: string } }).error.message;
    expect(rpcMessage).toMatch(/^MISCONFIGURED: WAYMARK_/);
    expect(rpcMessage).toContain(message);
  });

  it("development derives a share secret and a signing key when none is set, and serves loopback names only", async () => {
    const dev = { WAYMARK_SHARE_SECRET: "", WAYMARK_SIGNING_KEYS: "", WAYMARK_HOSTNAMES: "", WAYMARK_DEV_TOKEN: "dev-token-0123456789" };
    expect((await serve("/health", dev)).status).toBe(200);
    expect((await serve("/health", dev, { Host: "127.0.0.1:8787" })).status).toBe(200);
    expect((await serve("/health", dev, { Host: "attacker.example:8787" })).status).toBe(403);
  });
});

describe("Host and Origin in production", () => {
  it.each([
    ["localhost", 200],
    ["waymark.example", 200],
    ["WAYMARK.example", 200],
    ["waymark.example.", 403],
    ["evil.example", 403],
    ["waymark.example.evil.example", 403],
    ["127.0.0.1", 403],
    ["waymark.example@evil.example", 403],
  ])("Host %s → %i", async (host, status) => {
    expect((await serve("/health", {}, { Host: host })).status).toBe(status);
  });

  it.each([
    ["https://waymark.example", 200],
    ["http://localhost", 200],
    ["http://waymark.example", 403],
    ["https://evil.example", 403],
    ["null", 200],
  ])("Origin %s → %i", async (origin, status) => {
    expect((await serve("/health", {}, { Host: "waymark.example", Origin: origin })).status).toBe(status);
  });

  it("Origin: null from another site (Sec-Fetch-Site: cross-site) is refused", async () => {
    const response = await serve("/health", {}, { Origin: "null", "Sec-Fetch-Site": "cross-site" });
    expect(response.status).toBe(403);
  });
});
