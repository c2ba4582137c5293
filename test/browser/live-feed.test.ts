import { beforeAll, describe, expect, it } from "vitest";
import { type CallTool, toolCaller } from "../pages/fixture";
import type { DevServer } from "../support/dev-server";
import { clockPast } from "../support/eventually";
import { sharedDevServer } from "../support/shared-server";

/**
 * The live feed attacked the way it was broken: a real WebSocket to `wrangler dev` on the
 * percent-encoded path `/s/<token>/%77s`, which routes like `/ws` once decoded. A revoked,
 * rotated-away, expired or forged token must never open the feed, whatever the spelling of
 * the path; a valid one must, on either spelling.
 */
type Feed = { opened: boolean; events: number; closeCode: number | null };

function openFeed(url: string, waitMs = 1500): Promise<Feed> {
  return new Promise((resolve) => {
    const feed: Feed = { opened: false, events: 0, closeCode: null };
    const socket = new WebSocket(url);
    const done = () => {
      clearTimeout(timer);
      try {
        socket.close();
      } catch {
        // already closed
      }
      resolve(feed);
    };
    const timer = setTimeout(done, waitMs);
    // Node's WebSocket, typed here by the Workers types: listeners rather than on* properties.
    socket.addEventListener("open", () => {
      feed.opened = true;
    });
    socket.addEventListener("message", (message) => {
      if (String(message.data).includes('"type":"event"')) feed.events++;
    });
    socket.addEventListener("close", (event) => {
      feed.closeCode = event.code;
      done();
    });
    socket.addEventListener("error", () => undefined);
  });
}

describe("live feed access over a real socket", () => {
  let server: DevServer;
  let callTool: CallTool;
  beforeAll(async () => {
    server = sharedDevServer();
    callTool = toolCaller(fetch, `${server.url}/mcp`, server.token);
  });

  const wsUrl = (token: string, tail: string) => `${server.url.replace("http:", "ws:")}/s/${token}/${tail}?after=0`;
  const tokenOf = (shareUrl: unknown) => String(shareUrl).split("/s/")[1] ?? "";

  async function manage(
    workflowId: unknown,
    body: Record<string, unknown>,
  ): Promise<{ share_url: string | null; expires_at: string | null }> {
    const response = await fetch(`${server.url}/api/workflows/${String(workflowId)}/share`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as { share_url: string | null; expires_at: string | null };
  }

  async function recorded(name: string) {
    const wf = await callTool("start_workflow", { name });
    const task = await callTool("start_task", { workflow_id: wf.workflow_id, name: "Secret task", goal: "private" });
    await callTool("log_milestone", { task_id: task.task_id, message: "secret progress" });
    return { workflowId: wf.workflow_id, token: tokenOf(wf.share_url) };
  }

  it.each(["ws", "%77s", "%77%73"])("a valid link opens the feed on /%s and replays its events", async (tail) => {
    const { token } = await recorded(`Open ${tail}`);
    const feed = await openFeed(wsUrl(token, tail));
    expect(feed.opened).toBe(true);
    expect(feed.events).toBeGreaterThanOrEqual(3);
  });

  it.each(["ws", "%77s", "%77%73", "%2577s"])("a revoked link never opens the feed on /%s", async (tail) => {
    const { workflowId, token } = await recorded(`Revoked ${tail}`);
    await manage(workflowId, { action: "revoke" });
    const feed = await openFeed(wsUrl(token, tail));
    expect(feed).toMatchObject({ opened: false, events: 0 });
  });

  it("a rotated-away link never opens the feed, the new one does", async () => {
    const { workflowId, token } = await recorded("Rotated");
    const rotated = await manage(workflowId, { action: "rotate" });
    expect(await openFeed(wsUrl(token, "%77s"))).toMatchObject({ opened: false, events: 0 });
    expect((await openFeed(wsUrl(tokenOf(rotated.share_url), "%77s"))).opened).toBe(true);
  });

  it("an expired link never opens the feed", async () => {
    const { workflowId } = await recorded("Expiring");
    const rotated = await manage(workflowId, { action: "rotate", expires_in_seconds: 1 });
    await clockPast(Date.parse(String(rotated.expires_at)));
    expect(await openFeed(wsUrl(tokenOf(rotated.share_url), "%77s"))).toMatchObject({ opened: false, events: 0 });
  });

  it("a made-up token for a known workflow id never opens the feed", async () => {
    const { workflowId, token } = await recorded("Forged");
    const idPart = String(workflowId).slice(3);
    for (const forged of [
      `sh_${idPart}_${"a".repeat(32)}`,
      `sh_${idPart}_aaaaaaaa_${"b".repeat(26)}`,
      `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`,
    ]) {
      for (const tail of ["ws", "%77s"]) expect(await openFeed(wsUrl(forged, tail))).toMatchObject({ opened: false, events: 0 });
    }
  });
});
