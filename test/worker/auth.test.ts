import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/crypto";
import { bootstrapRef } from "../../src/domain/credentials";
import { authenticateToken, bearerToken, credentialAuthority } from "../../src/http/bearer-tokens";
import { LIMITS } from "../../src/limits";
import { ORIGIN, rpc, TOKENS, workerFetch } from "../support/worker";
import { streamedBody } from "./streamed-body";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

describe("/mcp authentication", () => {
  it.each([
    ["no Authorization header", 401, null, {}],
    ["an unknown bearer token", 401, "not-a-real-token", {}],
    ["a Basic credential", 401, null, { Authorization: "Basic YWNtZTp0b2tlbi1hY21l" }],
    ["an empty bearer", 401, null, { Authorization: "Bearer " }],
    ["the dev token name when no dev token is configured", 401, "waymark-dev-token", {}],
    ["acme's token", 200, TOKENS.acme, {}],
    ["globex's token", 200, TOKENS.globex, {}],
    ["acme's token from a foreign browser origin", 403, TOKENS.acme, { Origin: "https://evil.example" }],
    ["acme's token from this deployment's own origin", 200, TOKENS.acme, { Origin: ORIGIN }],
  ] as const)("%s → %i", async (_case, status, token, headers) => {
    const response = await rpc(LIST, { token, headers });
    expect(response.status).toBe(status);
    if (status === 401) {
      expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="waymark"/);
      expect(JSON.stringify(response.body)).toContain("UNAUTHORIZED");
    }
  });

  it.each([
    ["no tokens at all", {}, "anything-long", null],
    ["malformed entries only", { WAYMARK_TOKENS: "nocolon,:emptyaccount,Bad Name:token-1234567890ab" }, "token-1234567890ab", null],
    ["a 15-character token (16 needed)", { WAYMARK_TOKENS: "acme:0123456789abcde" }, "0123456789abcde", null],
    [
      "a listed token",
      { WAYMARK_TOKENS: " acme : token-acme-0000000001 ,\nglobex:token-globex-000000001" },
      "token-globex-000000001",
      "globex",
    ],
    ["the dev token", { WAYMARK_DEV_TOKEN: "dev-token-0123456789" }, "dev-token-0123456789", "dev"],
  ] as const)("token table with %s", async (_case, env, token, account) => {
    expect((await authenticateToken(env as Env, token))?.account ?? null).toBe(account);
  });

  it("reads only well-formed bearer headers", () => {
    expect(bearerToken(new Request(ORIGIN, { headers: { Authorization: "Bearer abc" } }))).toBe("abc");
    expect(bearerToken(new Request(ORIGIN, { headers: { Authorization: "bearer  abc " } }))).toBe("abc");
    expect(bearerToken(new Request(ORIGIN, { headers: { Authorization: "Bearer a b" } }))).toBeNull();
  });
});

describe("/mcp request bounds", () => {
  it("refuses a body whose declared length is over the limit without reading it", async () => {
    const response = await workerFetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${TOKENS.acme}`,
        "Content-Type": "application/json",
        "Content-Length": String(LIMITS.MAX_BODY_BYTES + 1),
      },
      body: "{}",
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toContain("PAYLOAD_TOO_LARGE");
  });

  it("stops reading a streamed body once it passes the limit", async () => {
    const { body, pulled } = streamedBody(20);
    const response = await workerFetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${TOKENS.acme}`, "Content-Type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(pulled()).toBeLessThan(20);
  });

  it("refuses a body of millions of tiny objects before parsing it", async () => {
    // 8 MiB of [{},{},…]: ~2.8 million objects, ~400 MiB of isolate memory once parsed.
    const bomb = `[${"{},".repeat(Math.floor((LIMITS.MAX_BODY_BYTES - 10) / 3))}{}]`;
    const response = await workerFetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${TOKENS.acme}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: bomb,
    });
    expect(response.status).toBe(413);
    expect(await response.text()).toMatch(/PAYLOAD_TOO_LARGE: request body holds \d+ JSON objects or arrays; at most 400000/);
  });

  it("answers a JSON-RPC parse error to a body that is not JSON", async () => {
    const response = await rpc("{not json", {});
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: { code: -32700 } });
  });
});

describe("authentication attempts and sessions", () => {
  it("answers 429 once an address has spent its failed attempts, and still lets others in", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await rpc(LIST, { token: `wrong-token-guess-${i}`, headers: { "CF-Connecting-IP": "203.0.113.9" } });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const elsewhere = await rpc(LIST, { token: TOKENS.acme, headers: { "CF-Connecting-IP": "198.51.100.4" } });
    expect(elsewhere.status).toBe(200);
  });

  it("does not charge successful authentications", async () => {
    const ip = { "CF-Connecting-IP": "203.0.113.77" };
    for (let i = 0; i < 40; i++) expect((await rpc(LIST, { token: TOKENS.acme, headers: ip })).status).toBe(200);
    expect((await rpc(LIST, { token: "wrong-token-after-successes", headers: ip })).status).toBe(401);
  });

  it("keys IPv6 clients by /64: new addresses in one /64 share one budget", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const headers = { "CF-Connecting-IP": `2001:db8:aa:bb:${(i + 1).toString(16)}::${i + 1}` };
      statuses.push((await rpc(LIST, { token: `wrong-v6-guess-${i}`, headers })).status);
    }
    expect(statuses.at(-1)).toBe(429);
    const otherPrefix = await rpc(LIST, { token: "wrong-elsewhere", headers: { "CF-Connecting-IP": "2001:db8:aa:bc::1" } });
    expect(otherPrefix.status).toBe(401);
  });

  it.each([
    ["still configured", true, `acme:${TOKENS.acme},globex:${TOKENS.globex}`, "acme"],
    ["configured beside a second token", true, `acme:second-token-0123456789,globex:${TOKENS.globex},acme:${TOKENS.acme}`, "acme"],
    ["rotated (the entry now holds another token)", false, `acme:rotated-token-0123456789,globex:${TOKENS.globex}`, "acme"],
    ["removed with its account", false, `globex:${TOKENS.globex}`, "acme"],
    ["claimed for another account", false, `acme:${TOKENS.acme}`, "globex"],
  ] as const)("a bootstrap credential %s holds: %s", async (_case, holds, tokens, account) => {
    const credential = bootstrapRef(await sha256Hex(TOKENS.acme));
    const authority = await credentialAuthority({ WAYMARK_TOKENS: tokens } as Env, account, credential);
    expect(authority !== null).toBe(holds);
  });
});
