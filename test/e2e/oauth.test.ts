import { createServer } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, skipBrowser } from "../support/chromium";
import { type DevServer, freePort } from "../support/dev-server";
import { callTool } from "../support/mcp-client";
import { type CallbackServer, callbackServer, connectWithOAuth, MemoryOAuthProvider, refresh } from "../support/oauth-client";
import { sharedDevServer } from "../support/shared-server";

const connect = (server: DevServer, provider: MemoryOAuthProvider) => connectWithOAuth(server.url, provider);

async function clickAndWait(page: Page, selector: string) {
  await Promise.all([page.waitForLoadState("load"), page.locator(selector).click()]);
}

describe.skipIf(skipBrowser)("OAuth 2.1 for a remote MCP client, consent clicked in Chromium", () => {
  let server: DevServer;
  let browser: Browser;
  let callback: CallbackServer;
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
    const refreshed = await refresh(server.url, provider);
    expect(refreshed.status).toBe(200);
    const renewed = refreshed.body as unknown as OAuthTokens;
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
    // A registered client is listed with where its answers go, as consent said (its name is its own choice).
    expect(await grant.locator("strong").textContent()).toBe(`E2E <Agent> & Co (redirects to a local app (${new URL(callback.url).host}))`);
    await clickAndWait(page, 'tr.grant:has-text("E2E <Agent> & Co") button');
    // Revoking asks first: until the owner confirms, the grant's tokens still work.
    await page.locator("#confirm-form button").waitFor();
    expect((await list(renewed.access_token)).status).toBe(200);
    await clickAndWait(page, "#confirm-form button");
    await page.waitForURL(/\/dashboard\/tokens/);
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

  it("a client identified by its metadata document (CIMD): no registration, consent names it safely, tools work; bad documents are refused", async () => {
    // The client's metadata documents, on a local server. A real client serves https on a public
    // host; in development (the dev token is set) a loopback https client_id is fetched over http.
    // Its own redirect endpoint: the shared one has already delivered the first test's code.
    const redirect = await callbackServer();
    const port = await freePort();
    const base = `https://127.0.0.1:${port}`;
    const clientId = `${base}/client.json`;
    const document = {
      client_id: clientId,
      client_name: "CIMD <Agent> \u202Egnp.exe",
      redirect_uris: [redirect.url],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
    const fetched: string[] = [];
    const agents = new Set<string>();
    const documents = createServer((request, response) => {
      fetched.push(request.url ?? "");
      agents.add(request.headers["user-agent"] ?? "");
      const hops = /^\/hop(\d+)$/.exec(request.url ?? "");
      if (hops) {
        response.writeHead(302, { Location: `/hop${Number(hops[1]) + 1}` }).end();
      } else if (request.url === "/big.json") {
        response
          .writeHead(200, { "Content-Type": "application/json" })
          .end(JSON.stringify({ ...document, client_id: `${base}/big.json`, pad: "x".repeat(6000) }));
      } else {
        response.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(document));
      }
    });
    await new Promise<void>((ready) => documents.listen(port, "127.0.0.1", ready));
    try {
      const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata.client_id_metadata_document_supported).toBe(true);
      expect(metadata.registration_endpoint).toBe(`${server.url}/oauth/register`);

      const provider = new MemoryOAuthProvider(redirect.url, { clientMetadataUrl: clientId });
      await expect(connect(server, provider)).rejects.toThrow(/Unauthorized/i);
      // The SDK used the URL as its client_id: nothing was registered.
      expect(provider.client?.client_id).toBe(clientId);
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(String(provider.authorizationUrl));
      await page.fill('input[name="token"]', server.token);
      await clickAndWait(page, 'button[type="submit"]');
      expect(new URL(page.url()).pathname).toBe("/oauth/authorize");
      // The name the document gives, escaped, its bidi control shown, and the host that serves it.
      expect(await page.locator("#client-name").textContent()).toBe(`CIMD <Agent> [U+202E]gnp.exe (127.0.0.1:${port})`);
      expect(await page.locator("#client-name b").count()).toBe(0);
      expect(fetched).toContain("/client.json");
      await page.locator('input[name="scope"][value="write"]').check();
      await Promise.all([page.waitForURL(/\/callback\?/), page.locator("#approve").click()]);
      const code = await redirect.code();
      const finishing = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { authProvider: provider });
      await finishing.finishAuth(code);
      await finishing.close();
      const { client } = await connect(server, provider);
      const started = await callTool(client, "start_workflow", { name: "Started by a CIMD client" });
      expect(started.isError, started.text).toBe(false);
      await client.close();
      // Wherever the client is listed it reads as consent named it: never its self-chosen name alone.
      await page.goto(`${server.url}/dashboard/tokens`);
      const listed = page.locator("tr.grant", { hasText: "CIMD <Agent>" });
      expect(await listed.locator("strong").textContent()).toBe(`CIMD <Agent> [U+202E]gnp.exe (127.0.0.1:${port})`);

      // Bounded: a document over 5 KB, and more than 3 redirects, are refused before consent.
      for (const bad of [`${base}/big.json`, `${base}/hop1`]) {
        const url = new URL(String(provider.authorizationUrl));
        url.searchParams.set("client_id", bad);
        await page.goto(url.href);
        expect(await page.locator("#client-name").count(), bad).toBe(0);
      }
      expect(fetched).toContain("/hop4");
      expect(fetched).not.toContain("/hop5");
      // Every fetch was the Worker's own, bounded one: the provider read what it fetched from its cache.
      expect([...agents].filter((agent) => agent.startsWith("workers-oauth-provider"))).toEqual([]);
      await context.close();
    } finally {
      await new Promise((closed) => documents.close(closed));
      await redirect.close();
    }
  }, 120_000);
});
