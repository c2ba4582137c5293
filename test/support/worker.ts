import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { testDevice } from "./device-keys";
import type { McpTarget } from "./mcp-client";

/** Tokens configured for the workerd test project (vitest.config.ts). */
export const TOKENS = { acme: "token-acme-0123456789", globex: "token-globex-0123456789" } as const;
export const ORIGIN = "http://localhost";
/** Feedback as the owner's page posts it (signed in with a bootstrap token): the channel whose verdicts count. */
export const ON_PAGE = { author: { kind: "bootstrap_token", credential: null, via: "session" }, channel: "page" } as const;

/**
 * Waits until the account index has taken these workflows' writes: it sees tasks, decisions and
 * issues within half a second of the reply, so a test that reads the index (search, related work,
 * lists, resume candidates) right after writing asks for the push instead of sleeping.
 */
export async function accountIndexed(...workflowIds: string[]): Promise<void> {
  for (const id of workflowIds) {
    // The workflow's own alarm, run now: what pushes the backlog when a timed push was lost.
    const stub = env.WORKFLOW.get(env.WORKFLOW.idFromName(id));
    await runInDurableObject(stub, (_instance, state) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(stub);
  }
}

/** The Worker's own fetch, inside workerd. Requests built here lack Host, which the MCP handler requires. */
export async function workerFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  if (!headers.has("Host")) headers.set("Host", new URL(request.url).host);
  return exports.default.fetch(new Request(request, { headers }));
}

/** The Worker itself as an MCP client's target (test/support/mcp-client.ts `connect`), with an account's token. */
export function workerTarget(token: string = TOKENS.acme): McpTarget {
  return { url: ORIGIN, token, fetch: workerFetch };
}

/** Signs in through the /login form as a browser does; returns the session cookie (name=value). */
export async function signIn(token: string = TOKENS.acme): Promise<string> {
  const response = await workerFetch(`${ORIGIN}/login`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: ORIGIN },
    body: new URLSearchParams({ token }).toString(),
    redirect: "manual",
  });
  return (response.headers.get("Set-Cookie") ?? "").split(";")[0] ?? "";
}

/** A raw JSON-RPC POST to /mcp; answers are parsed from JSON or SSE. */
export async function rpc(body: unknown, options: { token?: string | null; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
    ...options.headers,
  };
  const token = options.token === undefined ? TOKENS.acme : options.token;
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const response = await workerFetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const json =
    text.startsWith("event:") || text.startsWith("data:")
      ? text
          .split("\n")
          .find((l) => l.startsWith("data: "))
          ?.slice(6)
      : text;
  return { status: response.status, headers: response.headers, body: json ? (JSON.parse(json) as Record<string, unknown>) : null };
}

/** An approved device of the acme account (added by an admin through the API), and its key. */
export async function approvedDevice(name: string) {
  const device = await testDevice();
  const response = await workerFetch(`${ORIGIN}/api/devices`, {
    method: "POST",
    headers: { Authorization: `Bearer ${TOKENS.acme}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name, key: device.key }),
  });
  if (response.status !== 201) throw new Error(`approving a device: HTTP ${response.status} ${await response.text()}`);
  const approved = (await response.json()) as { id: string; fingerprint: string };
  return { device, id: approved.id, fingerprint: approved.fingerprint };
}
