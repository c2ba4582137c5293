import { createServer, type Server } from "node:http";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserMissing, launchChromium } from "../support/chromium";
import { type DevServer, freePort } from "../support/dev-server";
import { callTool } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

const skip = browserMissing && process.env.CI !== "true";

/** A remote MCP client's side of OAuth, as the SDK asks applications to provide it: kept in memory. */
class MemoryOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | null = null;
  constructor(private readonly callback: string) {}
  get redirectUrl() {
    return this.callback;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "E2E <Agent> & Co",
      redirect_uris: [this.callback],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The client application's redirect endpoint: it receives the authorization code from the browser. */
async function callbackServer(): Promise<{ url: string; code: () => Promise<string>; close: () => Promise<void> }> {
  const port = await freePort();
  let deliver: (code: string) => void = () => {};
  const received = new Promise<string>((resolve) => {
    deliver = resolve;
  });
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", `http://127.0.0.1:${port}`);
    const code = url.searchParams.get("code");
    response.end(code ? "Authorized; you can close this window." : `error: ${url.searchParams.get("error")}`);
    if (code) deliver(code);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${port}/callback`, code: () => received, close: () => new Promise((r) => server.close(() => r())) };
}

async function connect(server: DevServer, provider: MemoryOAuthProvider) {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { authProvider: provider });
  const client = new Client({ name: "oauth-e2e", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

async function clickAndWait(page: Page, selector: string) {
  await Promise.all([page.waitForLoadState("load"), page.locator(selector).click()]);
}

describe.skipIf(skip)("OAuth 2.1 for a remote MCP client, consent clicked in Chromium", () => {
  let server: DevServer;
  let browser: Browser;
  let callback: Awaited<ReturnType<typeof callbackServer>>;
  beforeAll(async () => {
    server = sharedDevServer();
    [browser, callback] = await Promise.all([launchChromium(), callbackServer()]);
  });
  afterAll(async () => {
    await callback?.close();
    await browser?.close();
  });

  it("discovers, registers, is sent to consent, signs in, approves, calls tools, refreshes; a revoked grant is refused", async () => {
    const provider = new MemoryOAuthProvider(callback.url);

    // 1. The unauthenticated connection: the 401 challenge names the protected-resource metadata.
    const challenge = await fetch(`${server.url}/mcp`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get("WWW-Authenticate")).toContain(
      `resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const resource = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(resource).toMatchObject({ resource: `${server.url}/mcp`, authorization_servers: [server.url] });
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/oauth/token`,
      registration_endpoint: `${server.url}/oauth/register`,
      code_challenge_methods_supported: expect.arrayContaining(["S256"]),
    });

    // 2. The SDK discovers and registers, then sends the user to the authorization URL.
    await expect(connect(server, provider)).rejects.toThrow(/Unauthorized/i);
    expect(provider.client?.client_id).toBeTruthy();
    const authorizationUrl = provider.authorizationUrl;
    expect(authorizationUrl?.searchParams.get("code_challenge_method")).toBe("S256");

    // 3. Chromium: not signed in → /login → back to the consent page → approve by clicking.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(String(authorizationUrl));
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill('input[name="token"]', server.token);
    await clickAndWait(page, 'button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe("/oauth/authorize");
    expect(await page.locator("#client-name").textContent()).toBe("E2E <Agent> & Co");
    await page.locator('input[name="scope"][value="write"]').check();
    await Promise.all([page.waitForURL(/\/callback\?/), page.locator("#approve").click()]);
    const code = await callback.code();
    expect(new URL(page.url()).searchParams.get("state")).toBe(authorizationUrl?.searchParams.get("state"));

    // 4. Code + PKCE verifier for tokens; the client then calls tools with the access token.
    const first = await (async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { authProvider: provider });
      await transport.finishAuth(code);
      return transport;
    })();
    await first.close();
    expect(provider.saved?.access_token).toBeTruthy();
    expect(provider.saved?.refresh_token).toBeTruthy();
    const { client } = await connect(server, provider);
    const started = await callTool(client, "start_workflow", { name: "Started over OAuth" });
    expect(started.isError, started.text).toBe(false);
    const resumed = await callTool(client, "get_workflow", { workflow_id: started.structured.workflow_id });
    expect(resumed.isError, resumed.text).toBe(false);
    await client.close();

    // 5. Refresh: the refresh token yields a new working access token.
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: String(provider.saved?.refresh_token),
        client_id: String(provider.client?.client_id),
      }).toString(),
    });
    expect(refreshed.status).toBe(200);
    const renewed = (await refreshed.json()) as OAuthTokens;
    provider.saveTokens(renewed);
    const list = (token: string) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    expect((await list(renewed.access_token)).status).toBe(200);

    // 6. The owner revokes the grant on the tokens page, by clicking; its tokens are refused.
    await page.goto(`${server.url}/dashboard/tokens`);
    const grant = page.locator("tr.grant", { hasText: "E2E <Agent> & Co" });
    expect(await grant.textContent()).toContain("write");
    await clickAndWait(page, 'tr.grant:has-text("E2E <Agent> & Co") button');
    expect(await page.locator("tr.grant").count()).toBe(0);
    expect((await list(renewed.access_token)).status).toBe(401);
    const again = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { authProvider: provider });
    const refused = new Client({ name: "oauth-e2e-after-revoke", version: "1.0.0" });
    // The SDK answers the 401 by trying the refresh token, which died with the grant.
    await expect(refused.connect(again)).rejects.toThrow(/Grant not found|Unauthorized/i);
    expect((await list(String(provider.saved?.access_token))).status).toBe(401);
    await context.close();
  }, 120_000);

  it("a session opened with a read-only token can grant read only; deny goes back with access_denied", async () => {
    const admin = await fetch(`${server.url}/api/tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "reader", scopes: ["read"] }),
    });
    const reader = ((await admin.json()) as { token: string }).token;
    const provider = new MemoryOAuthProvider(callback.url);
    await expect(connect(server, provider)).rejects.toThrow(/Unauthorized/i);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(String(provider.authorizationUrl));
    await page.fill('input[name="token"]', reader);
    await clickAndWait(page, 'button[type="submit"]');
    expect(await page.locator('input[name="scope"]').evaluateAll((inputs) => inputs.map((input) => input.getAttribute("value")))).toEqual([
      "read",
    ]);
    await Promise.all([page.waitForURL(/\/callback\?/), page.locator("#deny").click()]);
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
    await context.close();
  }, 60_000);
});
