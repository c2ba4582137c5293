import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/limits";
import { connect, ok } from "../support/mcp-client";
import { ON_PAGE, ORIGIN, TOKENS, workerFetch, workerTarget } from "../support/worker";

/** A client of protocol 2026-07-28: its subscriptions are `subscriptions/listen` streams. */
async function modernClient(token: string = TOKENS.acme): Promise<Client> {
  const client = new Client({ name: "follower", version: "1" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: workerFetch,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function feedback(workflowId: string, body: string) {
  const added = await env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId)).addFeedback("acme", {
    target: "workflow",
    target_id: workflowId,
    verdict: "comment",
    body,
    ...ON_PAGE,
  });
  if (!added.ok) throw new Error(added.message);
}

/** An agent's new workflow and its resource URI. */
async function followedWorkflow(name: string) {
  const agent = await connect(workerTarget(), { sdk: "v1" });
  const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", { name });
  return { agent, workflow_id, uri: `waymark://workflows/${workflow_id}` };
}

describe("following a workflow over MCP", () => {
  it("subscriptions/listen (2026-07-28): a new task, its completion and reviewer feedback each notify the workflow's URI", async () => {
    const { agent, workflow_id, uri } = await followedWorkflow("Followed");
    const follower = await modernClient();
    const updates: string[] = [];
    follower.setNotificationHandler("notifications/resources/updated", (notification) => {
      updates.push(notification.params.uri);
    });
    const subscription = await follower.listen({ resourceSubscriptions: [uri] });
    expect(subscription.honoredFilter).toEqual({ resourceSubscriptions: [uri] });

    const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "T", goal: "g" });
    await expect.poll(() => updates).toEqual([uri]);
    await ok(agent, "log_milestone", { task_id, message: "not a change a follower is told about" });
    await ok(agent, "complete_task", { task_id, status: "success", outcome: { summary: "done" } });
    await expect.poll(() => updates.length).toBe(2);
    // Revoking the share link closes the link's readers, never the owner's subscription.
    const revoked = await env.WORKFLOW.get(env.WORKFLOW.idFromName(workflow_id)).manageShare("acme", "revoke", null);
    expect(revoked.ok).toBe(true);
    await feedback(workflow_id, "Looks good");
    await expect.poll(() => updates.length).toBe(3);
    await subscription.close();
    expect(await subscription.closed).toBe("local");
  });

  it("resources/subscribe (SDK v1, 2025 era): answered at once, notified on the same stream", async () => {
    const { workflow_id, uri } = await followedWorkflow("Followed by v1");
    const follower = await connect(workerTarget(), { sdk: "v1" });
    const updates: string[] = [];
    follower.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    expect(follower.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await follower.subscribeResource({ uri });
    await feedback(workflow_id, "Please add tests");
    await expect.poll(() => updates).toEqual([uri]);
    await follower.close();
  });

  it("follows only the account's own workflows, and a bounded number of them", async () => {
    const { workflow_id } = await followedWorkflow("Acme only");
    const stranger = await modernClient(TOKENS.globex);
    for (const uri of [`waymark://workflows/${workflow_id}`, "waymark://workflows/wf_nosuchworkflow", "waymark://server/info"]) {
      await expect(stranger.listen({ resourceSubscriptions: [uri] })).rejects.toThrow(`NOT_FOUND: ${uri}`);
    }
    const many = Array.from({ length: 11 }, () => `waymark://workflows/${workflow_id}`);
    const owner = await modernClient();
    await expect(owner.listen({ resourceSubscriptions: many })).rejects.toThrow("at most 10 workflows per subscription");
    // A credential's subscriptions are one client of the live feed, capped like a reader's pages.
    const uri = `waymark://workflows/${workflow_id}`;
    const open = [];
    for (let i = 0; i < LIMITS.LIVE_SOCKETS_PER_CLIENT; i++) open.push(await owner.listen({ resourceSubscriptions: [uri] }));
    await expect(owner.listen({ resourceSubscriptions: [uri] })).rejects.toThrow(`TOO_MANY_SUBSCRIPTIONS: ${uri}`);
    await open[0]?.close();
    await expect
      .poll(async () => {
        const again = await owner.listen({ resourceSubscriptions: [uri] }).catch(() => null);
        await again?.close();
        return again !== null;
      })
      .toBe(true);
    for (const subscription of open) await subscription.close();
  });
});
