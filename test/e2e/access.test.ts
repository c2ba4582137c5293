/**
 * Access that ends when it should, attacked as an outsider would: one `wrangler dev`, Chromium
 * signing in and clicking, real MCP clients (SDK v2 with tokens, SDK v1 with OAuth), a real
 * webhook receiver, plain HTTP for what scripts do. Each test replays one attack:
 *   - a credential revoked, expiring or removed from configuration: its OAuth grant (calls and
 *     refresh), its dashboard session and the live socket that session opened stop;
 *   - a credential minting a stronger one (tokens, webhooks);
 *   - reads with side effects (feedback consumed by a reader, share links created by a GET);
 *   - sign-ins evicting another credential's session, bidi controls in an OAuth client's name,
 *     a confidential client without PKCE, spoofed CF-Connecting-IP, two Origin rules.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Client } from "@modelcontextprotocol/client";
import type { Browser, BrowserContext, Page, WebSocket as PageSocket } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomDocument } from "../browser/dom";
import { launchChromium, skipBrowser } from "../support/chromium";
import { type DevServer, startDevServer } from "../support/dev-server";
import { eventually } from "../support/eventually";
import { connect, ok } from "../support/mcp-client";
import * as oauth from "../support/oauth-client";

declare const document: DomDocument;

/** The "acme" account has two bootstrap tokens; the first is removed from configuration in one test. */
const BOOTSTRAP_A = `acme-first-${randomBytes(12).toString("hex")}`;
const BOOTSTRAP_B = `acme-second-${randomBytes(12).toString("hex")}`;

let server: DevServer;
let browser: Browser;
let callback: oauth.CallbackServer;
let receiver: Server;
let receiverUrl = "";
/** Webhook deliveries by the path they were sent to. */
const deliveries: { path: string; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      deliveries.push({ path: request.url ?? "", body: Buffer.concat(chunks).toString("utf8") });
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  [server, browser, callback] = await Promise.all([
    startDevServer({
      vars: {
        WAYMARK_TOKENS: `acme:${BOOTSTRAP_A},acme:${BOOTSTRAP_B}`,
        WAYMARK_WEBHOOK_ALLOW_PRIVATE: "true",
        WAYMARK_WEBHOOK_RETRY_BASE_MS: "200",
      },
    }),
    launchChromium(),
    oauth.callbackServer(),
  ]);
}, 180_000);

afterAll(async () => {
  await callback?.close();
  await browser?.close();
  await server?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

// ── what a script, a browser and an agent do ────────────────────────────────

async function api(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** A managed token of the dev account, made with the dev (bootstrap) token, or with `creator`. */
async function managedToken(scopes: string[], expiresInSeconds: number | null = null, creator = server.token) {
  const made = await api("POST", "/api/tokens", creator, {
    name: `access ${scopes.join("+")}`,
    scopes,
    expires_in_seconds: expiresInSeconds,
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return { id: String(made.body.id), token: String(made.body.token) };
}

const revoke = async (id: string) => expect((await api("DELETE", `/api/tokens/${id}`, server.token)).status).toBe(200);

/** tools/list with a raw bearer token, as any client sends it: the HTTP status. */
async function listTools(token: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** Clicks a form's submit button and waits for the answer to its POST and the page it leads to. */
async function submit(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForResponse((r) => r.request().method() === "POST"), page.locator(selector).click()]);
  await page.waitForLoadState("load");
}

/** A browser signed in with `token` through the sign-in form. */
async function signedIn(token: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/login`);
  await page.fill('input[name="token"]', token);
  await submit(page, 'button[type="submit"]');
  expect(new URL(page.url()).pathname).not.toBe("/login");
  return { context, page };
}

/** An OAuth client approved (scope `scope`) in `context`'s session; returns its provider holding the tokens. */
async function approvedApp(context: BrowserContext, scope: "read" | "write", name = "Access test app"): Promise<oauth.MemoryOAuthProvider> {
  const provider = new oauth.MemoryOAuthProvider(callback.url, { name });
  await expect(oauth.connectWithOAuth(server.url, provider)).rejects.toThrow(/Unauthorized/i);
  const page = await context.newPage();
  await page.goto(String(provider.authorizationUrl));
  expect(new URL(page.url()).pathname).toBe("/oauth/authorize");
  await page.locator(`input[name="scope"][value="${scope}"]`).check();
  const code = callback.code();
  await Promise.all([page.waitForURL(/\/callback\?/), page.locator("#approve").click()]);
  await oauth.finishAuthorization(server.url, provider, await code);
  await page.close();
  return provider;
}

/** The owner view of a workflow in `context`, following it live; every frame its socket receives is kept. */
async function livePage(context: BrowserContext, workflowId: string): Promise<{ page: Page; frames: string[]; sockets: PageSocket[] }> {
  const page = await context.newPage();
  const frames: string[] = [];
  const sockets: PageSocket[] = [];
  page.on("websocket", (socket) => {
    sockets.push(socket);
    socket.on("framereceived", (frame) => frames.push(String(frame.payload)));
  });
  await page.goto(`${server.url}/w/${workflowId}`);
  await page.waitForFunction(() => document.getElementById("wm")?.dataset.state === "live");
  return { page, frames, sockets };
}

/** A workflow with an open task, recorded by `agent`. */
async function openWorkflow(agent: Client, name: string): Promise<{ workflowId: string; taskId: string }> {
  const workflow = await ok(agent, "start_workflow", { name, force_new: true });
  const workflowId = String(workflow.workflow_id);
  const task = await ok(agent, "start_task", { workflow_id: workflowId, name: "t", goal: "g" });
  return { workflowId, taskId: String(task.task_id) };
}

describe.skipIf(skipBrowser)("access follows its source (wrangler dev, Chromium, real clients)", () => {
  let agent: Client;
  beforeAll(async () => {
    agent = await connect({ url: server.url, token: server.token }, { name: "bootstrap agent" });
  });
  afterAll(async () => {
    await agent?.close();
  });

  // ── 1. Revoking a credential ends everything derived from it ──────────────

  it("an OAuth grant approved while signed in with a managed token stops, refresh included, when that token is revoked", async () => {
    const { id, token } = await managedToken(["read", "write"]);
    const { context } = await signedIn(token);
    const provider = await approvedApp(context, "write", "App of a revoked token");
    const access = String(provider.saved?.access_token);
    expect(await listTools(access)).toBe(200);
    const owner = await signedIn(server.token);
    await owner.page.goto(`${server.url}/dashboard/tokens`);
    expect(await owner.page.locator("tr.grant", { hasText: "App of a revoked token" }).count()).toBe(1);
    await revoke(id);
    // Revoked with the token: it leaves the owner's connected apps at once.
    await owner.page.goto(`${server.url}/dashboard/tokens`);
    expect(await owner.page.locator("tr.grant", { hasText: "App of a revoked token" }).count()).toBe(0);
    await owner.context.close();
    // The attack: the app keeps calling tools and refreshing after its owner's token is gone.
    expect(await listTools(access)).toBe(401);
    const refreshed = await oauth.refresh(server.url, provider);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
    await context.close();
  }, 90_000);

  it("an owner page's live socket opened in a managed token's session closes when the token is revoked, and no event reaches it", async () => {
    const { workflowId, taskId } = await openWorkflow(agent, "Watched after revocation");
    const { id, token } = await managedToken(["read"]);
    const revoked = await signedIn(token);
    const watched = await livePage(revoked.context, workflowId);
    const control = await signedIn(server.token);
    const controlPage = await livePage(control.context, workflowId);
    await revoke(id);
    // The attack: the socket kept streaming full events after the token was revoked.
    const secret = `written after revocation ${randomBytes(6).toString("hex")}`;
    await ok(agent, "log_milestone", { task_id: taskId, message: secret });
    await eventually(
      "the owner's own page receives the event",
      async () => (controlPage.frames.some((f) => f.includes(secret)) ? true : null),
      10_000,
    );
    expect(
      watched.frames.filter((f) => f.includes(secret)),
      "events the revoked session's socket received",
    ).toEqual([]);
    await eventually(
      "the revoked session's socket is closed",
      async () => (watched.sockets.every((s) => s.isClosed()) ? true : null),
      5_000,
    );
    expect(await watched.page.evaluate(() => document.getElementById("wm")?.dataset.state)).toBe("gone");
    // Its HTTP requests are refused too: the session is over.
    await watched.page.goto(`${server.url}/dashboard`);
    expect(new URL(watched.page.url()).pathname).toBe("/login");
    await revoked.context.close();
    await control.context.close();
  }, 90_000);

  it("a session and a grant made with an expiring token end no later than the token", async () => {
    const { token } = await managedToken(["read", "write"], 120);
    const { context } = await signedIn(token);
    const cookie = (await context.cookies()).find((c) => c.name === "waymark_session");
    expect(cookie?.expires).toBeGreaterThan(Date.now() / 1000);
    expect(cookie?.expires).toBeLessThanOrEqual(Date.now() / 1000 + 121);
    const provider = await approvedApp(context, "read");
    expect(provider.saved?.expires_in).toBeLessThanOrEqual(120);
    const refreshed = await oauth.refresh(server.url, provider);
    expect(refreshed.status).toBe(200);
    expect(Number(refreshed.body.expires_in)).toBeLessThanOrEqual(120);
    await context.close();
  }, 90_000);

  // ── 2. A credential never creates a stronger one ─────────────────────────

  it("an admin-only token cannot mint a token holding read, write or a later expiry, nor register a webhook", async () => {
    const admin = await managedToken(["admin"]);
    // The attack: mint read/write/admin without expiry, then read every workflow with it.
    const minted = await api("POST", "/api/tokens", admin.token, { name: "escalated", scopes: ["read", "write", "admin"] });
    expect(minted).toEqual({
      status: 403,
      body: { code: "FORBIDDEN", message: "scopes: this credential cannot give read, write; it holds only admin" },
    });
    expect((await api("POST", "/api/tokens", admin.token, { name: "as strong", scopes: ["admin"] })).status).toBe(201);
    const expiring = await managedToken(["admin"], 3600);
    const forever = await api("POST", "/api/tokens", expiring.token, { name: "outlives", scopes: ["admin"] });
    expect(forever.status).toBe(403);
    expect(String(forever.body.message)).toMatch(/^expires_in_seconds: must end by /);
    expect((await api("POST", "/api/tokens", expiring.token, { name: "later", scopes: ["admin"], expires_in_seconds: 7200 })).status).toBe(
      403,
    );
    expect((await api("POST", "/api/tokens", expiring.token, { name: "sooner", scopes: ["admin"], expires_in_seconds: 600 })).status).toBe(
      201,
    );
    // A webhook delivers workflow text: registering one needs read as well.
    const hook = await api("POST", "/api/webhooks", admin.token, { url: `${receiverUrl}/admin-only`, events: ["workflow.completed"] });
    expect(hook).toEqual({ status: 403, body: { code: "FORBIDDEN", message: "this credential lacks the read scope (read or write)" } });
  });

  it("a webhook stops delivering when the token that registered it is revoked", async () => {
    const owner = await managedToken(["admin", "read"]);
    const byToken = await api("POST", "/api/webhooks", owner.token, { url: `${receiverUrl}/by-token`, events: ["workflow.completed"] });
    expect(byToken.status).toBe(201);
    const control = await api("POST", "/api/webhooks", server.token, {
      url: `${receiverUrl}/by-bootstrap`,
      events: ["workflow.completed"],
    });
    expect(control.status).toBe(201);
    const complete = async (name: string) => {
      const workflow = await ok(agent, "start_workflow", { name, force_new: true });
      await ok(agent, "complete_workflow", { workflow_id: workflow.workflow_id, status: "success", summary: "done" });
      return String(workflow.workflow_id);
    };
    const delivered = (path: string, workflowId: string) => deliveries.some((d) => d.path === path && d.body.includes(workflowId));
    const before = await complete("Delivered to both");
    await eventually(
      "both webhooks deliver",
      async () => (delivered("/by-token", before) && delivered("/by-bootstrap", before) ? true : null),
      15_000,
    );
    await revoke(owner.id);
    // The attack: a webhook outlives the token that registered it and keeps sending workflow text.
    const after = await complete("Delivered to the bootstrap token's webhook only");
    await eventually("the bootstrap token's webhook delivers", async () => (delivered("/by-bootstrap", after) ? true : null), 15_000);
    // The event's deliveries were queued together: once none is pending, none is still to come.
    await eventually(
      "every queued delivery attempted",
      async () => {
        const hooks = (await api("GET", "/api/webhooks", server.token)).body.webhooks as { pending: number }[];
        return hooks.every((hook) => hook.pending === 0) ? true : null;
      },
      15_000,
    );
    expect(delivered("/by-token", after)).toBe(false);
    const listed = (await api("GET", "/api/webhooks", server.token)).body.webhooks as { id: string; expires_at: string | null }[];
    expect(listed.find((w) => w.id === byToken.body.id)?.expires_at).not.toBeNull();
  }, 60_000);

  // ── 3. Reads have no side effects ─────────────────────────────────────────

  it("a read-only client's get_workflow leaves reviewer feedback for the agent's next call", async () => {
    const { workflowId, taskId } = await openWorkflow(agent, "Feedback waits for the agent");
    const owner = await signedIn(server.token);
    await owner.page.goto(`${server.url}/w/${workflowId}`);
    await owner.page.fill('textarea[name="body"]', "Please rename the flag.");
    await submit(owner.page, '#feedback button[type="submit"]');
    const reader = await connect({ url: server.url, token: (await managedToken(["read"])).token }, { name: "read-only client" });
    // The attack: a reader's look marked the feedback delivered, so the agent never received it.
    const read = await ok(reader, "get_workflow", { workflow_id: workflowId });
    expect(read.reviewer_feedback).toBeUndefined();
    expect(JSON.stringify(read.feedback)).toContain("Please rename the flag.");
    const next = await ok(agent, "log_milestone", { task_id: taskId, message: "next" });
    expect(next.reviewer_feedback, "the agent's next call carries the feedback").toBeDefined();
    expect(JSON.stringify(next.reviewer_feedback)).toContain("Please rename the flag.");
    await reader.close();
    await owner.context.close();
  }, 60_000);

  it("neither GET /api/workflows/:id/share nor the dashboard's ?shown= creates a link on an account that turned sharing off", async () => {
    const owner = await signedIn(server.token);
    const setSharing = async (on: boolean) => {
      await owner.page.goto(`${server.url}/dashboard`);
      await owner.page.locator("#settings summary").click();
      await owner.page.locator('input[name="share_new_workflows"]').setChecked(on);
      await submit(owner.page, '#settings button[type="submit"]');
    };
    await setSharing(false);
    try {
      const workflow = await ok(agent, "start_workflow", { name: "Not shared", force_new: true });
      expect(workflow.share_url).toBeUndefined();
      const id = String(workflow.workflow_id);
      const reader = await managedToken(["read"]);
      // The attack: a read-only GET (and a reader's dashboard link) created an active public link.
      const first = await api("GET", `/api/workflows/${id}/share`, reader.token);
      expect(first).toMatchObject({ status: 200, body: { status: "none", share_url: null } });
      const session = await signedIn(reader.token);
      await session.page.goto(`${server.url}/dashboard?shown=${id}`);
      expect(await session.page.locator("#shown-link").textContent()).toContain("No active link");
      expect((await api("GET", `/api/workflows/${id}/share`, reader.token)).body.status).toBe("none");
      // Creating one is a write.
      expect((await api("POST", `/api/workflows/${id}/share`, reader.token, { action: "rotate" })).status).toBe(403);
      const created = await api("POST", `/api/workflows/${id}/share`, server.token, { action: "rotate" });
      expect(created.body.status).toBe("active");
      await session.context.close();
    } finally {
      await setSharing(true);
      await owner.context.close();
    }
  }, 60_000);

  // ── 6. Smaller holes ──────────────────────────────────────────────────────

  it("twenty sign-ins with a read-only token never end the owner's session, only that token's oldest", async () => {
    const owner = await signedIn(server.token);
    const reader = await managedToken(["read"]);
    const signIn = async () => {
      const response = await fetch(`${server.url}/login`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: server.url },
        body: new URLSearchParams({ token: reader.token }).toString(),
        redirect: "manual",
      });
      expect(response.status).toBe(303);
      return (response.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
    };
    const first = await signIn();
    for (let i = 0; i < 20; i++) await signIn();
    await owner.page.goto(`${server.url}/dashboard`);
    expect(new URL(owner.page.url()).pathname).toBe("/dashboard");
    const oldest = await fetch(`${server.url}/dashboard`, { headers: { Cookie: first }, redirect: "manual" });
    expect(oldest.headers.get("Location")).toBe("/login");
    await owner.context.close();
  }, 60_000);

  /** An authorization URL with S256 PKCE (or none), as a client builds it. */
  function authorizeUrl(clientId: string, pkce: boolean): string {
    const verifier = randomBytes(32).toString("base64url");
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: callback.url, state: "st" });
    if (pkce) {
      query.set("code_challenge", createHash("sha256").update(verifier).digest("base64url"));
      query.set("code_challenge_method", "S256");
    }
    return `${server.url}/oauth/authorize?${query}`;
  }

  async function register(metadata: Record<string, unknown>): Promise<string> {
    const response = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [callback.url], ...metadata }),
    });
    expect(response.status).toBe(201);
    return String(((await response.json()) as { client_id: string }).client_id);
  }

  it("an OAuth client's name with bidi controls is revealed on the consent and tokens pages", async () => {
    const clientId = await register({ client_name: "Waymark Helper\u202Eexe.txt", token_endpoint_auth_method: "none" });
    const owner = await signedIn(server.token);
    await owner.page.goto(authorizeUrl(clientId, true));
    // The attack: the name reads as another app's once the browser applies the right-to-left override.
    expect(await owner.page.locator("#client-name").textContent()).toBe("Waymark Helper[U+202E]exe.txt");
    const code = callback.code();
    await Promise.all([owner.page.waitForURL(/\/callback\?/), owner.page.locator("#approve").click()]);
    await code;
    await owner.page.goto(`${server.url}/dashboard/tokens`);
    const row = await owner.page.locator("tr.grant", { hasText: "Waymark Helper" }).textContent();
    expect(row).toContain("Waymark Helper[U+202E]exe.txt");
    expect(row).not.toContain("\u202E");
    await owner.context.close();
  }, 60_000);

  it("a confidential client without S256 PKCE is sent back with invalid_request", async () => {
    const clientId = await register({ client_name: "Confidential", token_endpoint_auth_method: "client_secret_basic" });
    const owner = await signedIn(server.token);
    // The attack: a client with a secret was given a code (and tokens) without PKCE.
    await owner.page.goto(authorizeUrl(clientId, false));
    const landed = new URL(owner.page.url());
    expect(`${landed.origin}${landed.pathname}`).toBe(callback.url);
    expect(landed.searchParams.get("error")).toBe("invalid_request");
    await owner.context.close();
  }, 60_000);

  it("/mcp follows the app's one Origin rule", async () => {
    // `npm start` lets browser pages on any loopback port call it (an MCP web client in development).
    expect(await listTools(server.token, { Origin: "http://localhost:6274" })).toBe(200);
    expect(await listTools(server.token, { Origin: "https://evil.example" })).toBe(403);
  });

  // Restarts the server with new configuration: after the tests that share its state.
  it("removing a bootstrap token from configuration ends the grants, sessions and live pages made with it", async () => {
    const acme = await connect({ url: server.url, token: BOOTSTRAP_B }, { name: "acme agent" });
    const { workflowId, taskId } = await openWorkflow(acme, "acme's workflow");
    const { context } = await signedIn(BOOTSTRAP_A);
    const provider = await approvedApp(context, "write");
    const access = String(provider.saved?.access_token);
    expect(await listTools(access)).toBe(200);
    const watched = await livePage(context, workflowId);
    await acme.close();
    await server.restart({ WAYMARK_TOKENS: `acme:${BOOTSTRAP_B}` });
    // The attack: the app approved under the removed token keeps calling tools and refreshing.
    expect(await listTools(access)).toBe(401);
    const refreshed = await oauth.refresh(server.url, provider);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
    const after = await connect({ url: server.url, token: BOOTSTRAP_B }, { name: "acme agent after" });
    const control = await signedIn(BOOTSTRAP_B);
    const controlPage = await livePage(control.context, workflowId);
    const secret = `after removal ${randomBytes(6).toString("hex")}`;
    await ok(after, "log_milestone", { task_id: taskId, message: secret });
    await eventually(
      "a page of a session whose token still holds receives the event",
      async () => (controlPage.frames.some((f) => f.includes(secret)) ? true : null),
      10_000,
    );
    expect(watched.frames.some((f) => f.includes(secret))).toBe(false);
    await control.context.close();
    const page = await context.newPage();
    await page.goto(`${server.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await after.close();
    await context.close();
    agent = await connect({ url: server.url, token: server.token }, { name: "bootstrap agent after restart" });
  }, 180_000);

  // Spends the loopback client's whole budget of failed attempts: last.
  it("a spoofed CF-Connecting-IP does not buy more failed sign-ins under wrangler dev", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await fetch(`${server.url}/login`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: server.url, "CF-Connecting-IP": `198.51.100.${i + 1}` },
        body: new URLSearchParams({ token: `wrong-token-${i}-0123456789` }).toString(),
        redirect: "manual",
      });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    // The attack: a new address per guess was a new budget per guess.
    expect(statuses).toContain(429);
  }, 60_000);
});
