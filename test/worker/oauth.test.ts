import { describe, expect, it } from "vitest";
import { looksLikeOAuthToken } from "../../src/oauth/provider";
import { isReturnPath } from "../../src/oauth/return-path";
import { ORIGIN, rpc, TOKENS, workerFetch } from "../support/worker";

const LIST = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const CALLBACK = "http://127.0.0.1:9/callback";

async function register(body: unknown = { client_name: "Worker test", redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" }) {
  const response = await workerFetch(`${ORIGIN}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function signIn(): Promise<string> {
  const response = await workerFetch(`${ORIGIN}/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
    body: new URLSearchParams({ token: TOKENS.acme }).toString(),
    redirect: "manual",
  });
  return (response.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
}

function authorizePath(clientId: string, extra: Record<string, string> = {}) {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: CALLBACK,
    state: "st-1",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    ...extra,
  });
  return `/oauth/authorize?${query}`;
}

describe("OAuth metadata and registration", () => {
  it("serves protected-resource and authorization-server metadata", async () => {
    const resource = await (await workerFetch(`${ORIGIN}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${ORIGIN}/mcp`, authorization_servers: [ORIGIN] });
    const server = await (await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`)).json();
    expect(server).toMatchObject({
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      scopes_supported: ["read", "write"],
      grant_types_supported: expect.arrayContaining(["authorization_code", "refresh_token"]),
    });
  });

  it("the /mcp challenge names the metadata, for every kind of failed bearer", async () => {
    for (const token of [null, "not-a-token-at-all", "acme:grant:forged-secret"]) {
      const response = await rpc(LIST, { token });
      expect(response.status).toBe(401);
      expect(response.headers.get("WWW-Authenticate")).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    }
  });

  it("registers a public client with only its redirect URIs", async () => {
    const registered = await register();
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ client_name: "Worker test", redirect_uris: [CALLBACK] });
  });

  it("charges anonymous registrations to the caller's address", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 35; i++) {
      const response = await workerFetch(`${ORIGIN}/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": "203.0.113.50" },
        body: JSON.stringify({ client_name: `flood ${i}`, redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" }),
      });
      statuses.push(response.status);
    }
    expect(statuses[0]).toBe(201);
    expect(statuses.at(-1)).toBe(429);
  });

  it("keeps the guard and the body cap on the OAuth routes", async () => {
    for (const path of ["/oauth/register", "/oauth/token", "/.well-known/oauth-authorization-server", "/oauth/authorize"]) {
      const rebound = await workerFetch(`http://attacker.example${path}`, { method: "GET" });
      expect(rebound.status, path).toBe(403);
      const crossSite = await workerFetch(`${ORIGIN}${path}`, { method: "POST", headers: { Origin: "https://evil.example" } });
      expect(crossSite.status, path).toBe(403);
    }
    const huge = await register({ client_name: "x".repeat(9000), redirect_uris: [CALLBACK] });
    expect(huge.status).toBe(413);
  });
});

describe("the consent page", () => {
  it("sends a signed-out owner to /login and back to the same request", async () => {
    const { body } = await register();
    const path = authorizePath(String(body.client_id));
    const first = await workerFetch(`${ORIGIN}${path}`, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("Location")).toBe("/login");
    const remembered = (first.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
    expect(remembered).toMatch(/^waymark_return=/);
    const login = await workerFetch(`${ORIGIN}/login`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN, Cookie: remembered },
      body: new URLSearchParams({ token: TOKENS.acme }).toString(),
      redirect: "manual",
    });
    expect(login.status).toBe(303);
    expect(login.headers.get("Location")).toBe(path);
  });

  it.each([
    ["/oauth/authorize?client_id=x", true],
    ["https://evil.example/", false],
    ["//evil.example/oauth/authorize?x", false],
    ["/dashboard", false],
    ["/oauth/authorizeX?x", false],
    ["/oauth/authorize?x\\y", false],
    ["/oauth/authorize? x", false],
  ])("return path %s accepted: %s", (path, accepted) => {
    expect(isReturnPath(path)).toBe(accepted);
  });

  it.each([
    ["acme:grant:secret", true],
    [`wmk_acme_aaaaaaaaaaaa_${"a".repeat(40)}`, false],
    ["token-acme-0123456789", false],
    ["a:b", false],
  ])("%s is routed to the OAuth provider: %s", (token, oauth) => {
    expect(looksLikeOAuthToken(token)).toBe(oauth);
  });

  it("shows the client escaped, refuses cross-site approval, and completes a same-site one", async () => {
    const { body } = await register({
      client_name: "<img src=x onerror=alert(1)>",
      redirect_uris: [CALLBACK],
      token_endpoint_auth_method: "none",
    });
    const path = authorizePath(String(body.client_id));
    const cookie = await signIn();
    const page = await workerFetch(`${ORIGIN}${path}`, { headers: { Cookie: cookie } });
    const text = await page.text();
    expect(page.status).toBe(200);
    // Never framed (clickjacking an Approve button), never cached.
    expect(page.headers.get("X-Frame-Options")).toBe("DENY");
    expect(page.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("Cache-Control")).toBe("no-store");
    expect(text).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(text).not.toContain("<img src=x");
    const approve = (origin: string) =>
      workerFetch(`${ORIGIN}${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, Origin: origin },
        body: new URLSearchParams({ decision: "approve", scope: "write" }).toString(),
        redirect: "manual",
      });
    expect((await approve("https://evil.example")).status).toBe(403);
    const approved = await approve(ORIGIN);
    expect(approved.status).toBe(200);
    expect(await approved.text()).toMatch(/http:\/\/127\.0\.0\.1:9\/callback\?code=[^"&]+&amp;state=st-1/);
  });

  it("a public client without PKCE is sent back with invalid_request", async () => {
    const cookie = await signIn();
    const { body } = await register();
    const path = authorizePath(String(body.client_id)).replace(/&code_challenge=[^&]+&code_challenge_method=S256/, "");
    const response = await workerFetch(`${ORIGIN}${path}`, { headers: { Cookie: cookie }, redirect: "manual" });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get("Location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.searchParams.get("state")).toBe("st-1");
  });

  it("an unknown client or an unregistered redirect is answered here, never redirected", async () => {
    const cookie = await signIn();
    const unknown = await workerFetch(`${ORIGIN}${authorizePath("no-such-client")}`, { headers: { Cookie: cookie }, redirect: "manual" });
    expect(unknown.status).toBe(400);
    const { body } = await register();
    const elsewhere = await workerFetch(`${ORIGIN}${authorizePath(String(body.client_id), { redirect_uri: "https://evil.example/cb" })}`, {
      headers: { Cookie: cookie },
      redirect: "manual",
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.headers.get("Location")).toBeNull();
  });
});
