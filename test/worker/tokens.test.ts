import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { sha256Hex } from "../../src/crypto";
import { parseManagedToken } from "../../src/domain/managed-token";
import { authenticateToken, VERIFIED_TTL_MS } from "../../src/http/bearer-tokens";
import { callTool, connect } from "../support/mcp-client";
import { ORIGIN, rpc, TOKENS, workerFetch, workerTarget } from "../support/worker";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };

async function api(method: string, path: string, body?: unknown, token: string = TOKENS.acme) {
  const response = await workerFetch(`${ORIGIN}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const acmeObject = () => env.ACCOUNT.get(env.ACCOUNT.idFromName("acme"));

describe("/api/tokens", () => {
  it("creates a token whose secret is shown once, stored only as a hash, and works at once", async () => {
    const created = await api("POST", "/api/tokens", { name: "CI reporting", scopes: ["read"], expires_in_seconds: 86400 });
    expect(created.status).toBe(201);
    const token = String(created.body.token);
    expect(token).toMatch(/^wmk_acme_[a-z2-7]{12}_[a-z2-7]{40}$/);
    expect(parseManagedToken(token)).toEqual({ account: "acme", id: created.body.id });
    expect(created.body).toMatchObject({ name: "CI reporting", scopes: ["read"], last_used_at: null, revoked_at: null });
    expect(Date.parse(String(created.body.expires_at)) - Date.now()).toBeGreaterThan(86_000_000);

    const listed = await api("GET", "/api/tokens");
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(JSON.stringify(listed.body)).not.toContain(token.split("_").at(-1));
    const stored = await runInDurableObject(acmeObject(), (_: AccountObject, state) =>
      state.storage.sql.exec("SELECT token_hash FROM api_tokens WHERE id = ?", created.body.id as string).one(),
    );
    expect(stored.token_hash).toBe(await sha256Hex(token));

    expect((await rpc(LIST, { token })).status).toBe(200);
  });

  it("records the last use after the reply, at most once a minute", async () => {
    const { body } = await api("POST", "/api/tokens", { name: "used", scopes: ["write"] });
    const client = await connect(workerTarget(String(body.token)));
    await callTool(client, "get_workflow", {});
    let used: unknown = null;
    for (let i = 0; i < 50 && used === null; i++) {
      const tokens = (await api("GET", "/api/tokens")).body.tokens as { id: string; last_used_at: string | null }[];
      used = tokens.find((t) => t.id === body.id)?.last_used_at ?? null;
      if (used === null) await new Promise((r) => setTimeout(r, 20));
    }
    expect(Date.now() - Date.parse(String(used))).toBeLessThan(10_000);
    await callTool(client, "get_workflow", {});
    // The subject is an absence (no second write within the minute), which no event announces: a
    // write after the reply would land well within 50 ms here (the first one above took one poll).
    await new Promise((r) => setTimeout(r, 50));
    const again = (await api("GET", "/api/tokens")).body.tokens as { id: string; last_used_at: string | null }[];
    expect(again.find((t) => t.id === body.id)?.last_used_at).toBe(used);
    await client.close();
  });

  it("revocation is honoured at once in the isolate that revoked the token", async () => {
    const { body } = await api("POST", "/api/tokens", { name: "short-lived", scopes: ["write"] });
    const token = String(body.token);
    expect((await rpc(LIST, { token })).status).toBe(200);
    const revoked = await api("DELETE", `/api/tokens/${body.id}`);
    expect(revoked.body).toMatchObject({ id: body.id, revoked_at: expect.any(String) });
    expect((await rpc(LIST, { token })).status).toBe(401);
    expect(VERIFIED_TTL_MS).toBeLessThanOrEqual(10_000);
  });

  it("refuses a token with a forged secret, another account's id, or past its expiry", async () => {
    const { body } = await api("POST", "/api/tokens", { name: "to forge", scopes: ["read"] });
    const token = String(body.token);
    const forgedSecret = token.replace(/_[a-z2-7]{40}$/, `_${"a".repeat(40)}`);
    const otherAccount = token.replace(/^wmk_acme_/, "wmk_globex_");
    for (const forged of [forgedSecret, otherAccount]) expect((await rpc(LIST, { token: forged })).status).toBe(401);
    // Expiry: move a fresh token's stored expiry into the past (the smallest expiry the API accepts is a minute).
    const fresh = await api("POST", "/api/tokens", { name: "expired before first use", scopes: ["read"] });
    await runInDurableObject(acmeObject(), (_: AccountObject, state) => {
      state.storage.sql.exec(
        "UPDATE api_tokens SET expires_at = ? WHERE id = ?",
        new Date(Date.now() - 1000).toISOString(),
        fresh.body.id as string,
      );
    });
    expect((await rpc(LIST, { token: String(fresh.body.token) })).status).toBe(401);
  });

  it("never addresses an object for an account without a bootstrap token", async () => {
    const untouchable = {
      WAYMARK_TOKENS: `acme:${TOKENS.acme}`,
      ACCOUNT: {
        idFromName: (name: string) => {
          throw new Error(`addressed account ${name}`);
        },
      },
    } as unknown as Env;
    expect(await authenticateToken(untouchable, `wmk_nobody_abcdefghijk2_${"a".repeat(40)}`)).toBeNull();
    expect(await authenticateToken(untouchable, TOKENS.acme)).toMatchObject({
      account: "acme",
      expiresAt: null,
      credential: expect.stringMatching(/^b:/),
    });
  });

  it.each([
    ["no name", { scopes: ["read"] }, "name: is required (a name saying what the token is for)"],
    ["a blank name", { name: "  ", scopes: ["read"] }, "name: is required (a name saying what the token is for)"],
    ["a 101-character name", { name: "x".repeat(101), scopes: ["read"] }, "name: must be at most 100 characters"],
    ["a control character", { name: "a\u0007b", scopes: ["read"] }, "name: must be text without control characters"],
    ["no scopes", { name: "n", scopes: [] }, "scopes: must list one or more of read, write, admin"],
    ["an unknown scope", { name: "n", scopes: ["root"] }, "scopes.0: must list one or more of read, write, admin"],
    [
      "a 59-second expiry",
      { name: "n", scopes: ["read"], expires_in_seconds: 59 },
      "expires_in_seconds: must be a whole number from 60 to 63072000, or null for no expiry",
    ],
    ["an unknown field", { name: "n", scopes: ["read"], owner: "x" }, "owner: unknown field"],
    [
      "an array body",
      [],
      'body: must be a JSON object {"name": "...", "scopes": ["read"|"write"|"admin", ...], "expires_in_seconds"?: n|null}',
    ],
  ])("refuses %s with a message naming the field", async (_case, body, message) => {
    const response = await api("POST", "/api/tokens", body);
    expect(response).toEqual({ status: 400, body: { code: "INPUT_VALIDATION_ERROR", message } });
  });

  it("refuses the tokens page's forms from another site", async () => {
    const login = await workerFetch(`${ORIGIN}/login`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
      body: new URLSearchParams({ token: TOKENS.acme }).toString(),
      redirect: "manual",
    });
    const cookie = (login.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
    const { body } = await api("POST", "/api/tokens", { name: "csrf target", scopes: ["read"] });
    const forms: [string, Record<string, string>][] = [
      ["/dashboard/tokens", { name: "planted", scopes: "admin" }],
      [`/dashboard/tokens/${body.id}/revoke`, {}],
      ["/dashboard/grants/some-grant/revoke", {}],
    ];
    for (const [path, fields] of forms) {
      const foreign: Record<string, string>[] = [{ Origin: "https://evil.example" }, { Origin: "null", "Sec-Fetch-Site": "cross-site" }];
      for (const headers of foreign) {
        const response = await workerFetch(`${ORIGIN}${path}`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, ...headers },
          body: new URLSearchParams(fields).toString(),
          redirect: "manual",
        });
        expect(response.status, path).toBe(403);
      }
    }
    const tokens = (await api("GET", "/api/tokens")).body.tokens as { name: string; id: string; revoked_at: string | null }[];
    expect(tokens.some((t) => t.name === "planted")).toBe(false);
    expect(tokens.find((t) => t.id === body.id)?.revoked_at).toBeNull();
  });

  it("refuses to revoke what is not the account's and caps bodies", async () => {
    const globexToken = await api("POST", "/api/tokens", { name: "globex's", scopes: ["read"] }, TOKENS.globex);
    expect((await api("DELETE", `/api/tokens/${globexToken.body.id}`)).status).toBe(404);
    expect((await api("DELETE", "/api/tokens/not-an-id")).status).toBe(404);
    expect((await rpc(LIST, { token: String(globexToken.body.token) })).status).toBe(200);
    const huge = await api("POST", "/api/tokens", JSON.stringify({ name: "x".repeat(9000), scopes: ["read"] }));
    expect(huge.status).toBe(413);
  });
});
