import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/limits";
import { ORIGIN, TOKENS, workerFetch } from "../support/worker";

/**
 * The account's own quotas, hit as an owner's script hits them over REST: the refusal names the
 * quota, the limit and what the account holds now, and says how to get under it.
 */
async function api(method: string, path: string, body?: unknown) {
  const response = await workerFetch(`${ORIGIN}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKENS.globex}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("account quotas", () => {
  it(`managed tokens: at most ${LIMITS.API_TOKENS} active; a revoked one frees a place`, async () => {
    const ids: string[] = [];
    for (let i = 0; i < LIMITS.API_TOKENS; i++) {
      const created = await api("POST", "/api/tokens", { name: `ci ${i}`, scopes: ["read"] });
      expect(created.status).toBe(201);
      ids.push(String(created.body.id));
    }
    const refused = await api("POST", "/api/tokens", { name: "one too many", scopes: ["read"] });
    expect(refused).toEqual({
      status: 403,
      body: {
        code: "QUOTA_EXCEEDED",
        message: `tokens: at most ${LIMITS.API_TOKENS} active per account (this account has ${LIMITS.API_TOKENS}); revoke one first`,
      },
    });
    expect((await api("DELETE", `/api/tokens/${ids[0]}`)).status).toBe(200);
    expect((await api("POST", "/api/tokens", { name: "in its place", scopes: ["read"] })).status).toBe(201);
  });
});
