import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sharedDevServer } from "../support/shared-server";

/**
 * Webhooks end to end: `wrangler dev` (private targets allowed, 200 ms backoff base) delivers
 * to a real Node HTTP receiver on 127.0.0.1 that answers 500 a few times before accepting.
 */
type Received = { headers: Record<string, string | string[] | undefined>; body: string; at: number };

let server: ReturnType<typeof sharedDevServer>;
let receiver: Server;
let receiverUrl = "";
const received: Received[] = [];
/** Statuses the receiver answers, in order; 200 once exhausted. */
const answers: number[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      response.statusCode = answers.shift() ?? 200;
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  server = sharedDevServer();
});
afterAll(async () => {
  await server?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json", ...(init.headers ?? {}) },
  });

async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content?: { text?: string }[];
    structuredContent?: Record<string, unknown>;
  };
  if (result.isError) throw new Error(`${name}: ${result.content?.[0]?.text}`);
  return result.structuredContent ?? {};
}

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What a receiver should do: recompute the HMAC over "<t>.<raw body>" and compare in constant time. */
function verify(secret: string, header: string, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match?.[1] || !match[2]) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2], "hex"));
}

describe("webhooks through wrangler dev", () => {
  it("delivers a signed POST, retries after 500s with growing delays, and reports the status", async () => {
    const created = await api("/api/webhooks", { method: "POST", body: JSON.stringify({ url: receiverUrl }) });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: string; secret: string };

    answers.push(500, 500, 500);
    const client = new Client({ name: "e2e-webhooks", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
      }),
    );
    const { workflow_id } = (await tool(client, "start_workflow", { name: "E2E hooks" })) as { workflow_id: string };
    const { task_id } = (await tool(client, "start_task", { workflow_id, name: "Doomed", goal: "fail" })) as { task_id: string };
    await tool(client, "complete_task", { task_id, status: "failed", outcome: { summary: "It broke" } });

    await until(
      () => received.length,
      (n) => n >= 4,
      "four attempts",
    );
    const attempts = received.slice(0, 4);
    expect(new Set(attempts.map((r) => r.headers["waymark-delivery"])).size).toBe(1);
    for (const attempt of attempts) {
      expect(attempt.headers["waymark-event"]).toBe("task.failed");
      expect(attempt.headers["content-type"]).toBe("application/json");
      expect(verify(hook.secret, String(attempt.headers["waymark-signature"]), attempt.body)).toBe(true);
      expect(verify("whsec_wrong", String(attempt.headers["waymark-signature"]), attempt.body)).toBe(false);
    }
    const body = JSON.parse(attempts[0]?.body ?? "{}") as {
      event: string;
      account: string;
      workflow: { id: string };
      task: { id: string };
    };
    expect(body).toMatchObject({ event: "task.failed", account: server.account, workflow: { id: workflow_id }, task: { id: task_id } });
    // Exponential backoff from a 200 ms base: the gaps grow (≈200, 400, 800 ms).
    const gaps = attempts.slice(1).map((r, i) => r.at - (attempts[i]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(150);
    expect(gaps[2]).toBeGreaterThan(gaps[0] ?? 0);

    const status = await until(
      async () => ((await (await api("/api/webhooks")).json()) as { webhooks: Record<string, unknown>[] }).webhooks[0],
      (w) => w?.last_status === "ok",
      "status ok",
    );
    expect(status).toMatchObject({ id: hook.id, url: receiverUrl, last_http_status: 200, last_error: null, delivered: 1, pending: 0 });

    const deleted = await api(`/api/webhooks/${hook.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    await client.close();
  });
});
