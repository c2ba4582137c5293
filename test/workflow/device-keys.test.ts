/**
 * A workflow object verifies device signatures from its own copy of the account's device keys
 * (src/workflow/device-keys.ts): once it has the copy, a signed start_task or complete_task makes
 * no call to the account object before it answers (counted by the deployment's meter). The copy's
 * trust is bounded: a revocation whose push did not arrive is caught by the next answer of the
 * account to the workflow's outbox push, and a copy past its trust is fetched again.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import app from "../../src/index";
import { nonceOf, signedCleanStart, signedOneNewFile, type TestDevice } from "../support/device-keys";
import { connect, ok } from "../support/mcp-client";
import { accountIndexed, approvedDevice, ORIGIN, TOKENS, workerFetch } from "../support/worker";

const METERED = { ...env, WAYMARK_METER: "1" };

/** An MCP client through the Worker with metering on, and the meter's account-object requests. */
async function meteredClient() {
  const client = await connect({
    url: ORIGIN,
    token: TOKENS.acme,
    fetch: async (input, init) => app.fetch(new Request(input, init), METERED),
  });
  /** Calls to the account object's deviceKeys, the one way a workflow asks for the keys. */
  const keyFetches = async () => {
    const response = await app.fetch(new Request(`${ORIGIN}/meter`, { headers: { Host: "localhost" } }), METERED);
    return (
      ((await response.json()) as { objects: { account: { methods: Record<string, number> } } }).objects.account.methods.deviceKeys ?? 0
    );
  };
  return { client, keyFetches };
}

type Client = Awaited<ReturnType<typeof meteredClient>>["client"];

async function signedTask(client: Client, device: TestDevice, workflowId: string) {
  const snapshot = await signedCleanStart(device, workflowId);
  const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id: workflowId, name: "T", goal: "g", snapshot });
  return { taskId: task_id, nonce: nonceOf(snapshot) };
}

async function complete(client: Client, device: TestDevice, task: { taskId: string; nonce: string }) {
  const changes = await signedOneNewFile(device, task);
  const done = await ok<{ files_changed: { source: { kind: string; reason?: string } } }>(client, "complete_task", {
    task_id: task.taskId,
    status: "success",
    outcome: { summary: "s" },
    changes,
  });
  return done.files_changed.source;
}

const workflowStub = (id: string) => env.WORKFLOW.get(env.WORKFLOW.idFromName(id));

describe("device keys kept by the workflow", () => {
  it("signed calls ask the account nothing once the workflow keeps the keys", async () => {
    const { client, keyFetches } = await meteredClient();
    const { device } = await approvedDevice("bench box");
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "No hop", force_new: true });
    const first = await keyFetches();
    // The first signature fetches the keys: one call to the account.
    expect(await complete(client, device, await signedTask(client, device, workflow_id))).toMatchObject({ kind: "signed" });
    expect(await keyFetches()).toBe(first + 1);
    for (let i = 0; i < 3; i++)
      expect(await complete(client, device, await signedTask(client, device, workflow_id))).toMatchObject({ kind: "signed" });
    expect(await keyFetches()).toBe(first + 1);
  });

  it("a revocation whose push was lost is caught by the answer to the workflow's next push", async () => {
    const { client } = await meteredClient();
    const { device, id } = await approvedDevice("lost push laptop");
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Lost push", force_new: true });
    await complete(client, device, await signedTask(client, device, workflow_id));
    // The account forgets that this workflow keeps the keys: the revocation is not pushed to it.
    await runInDurableObject(env.ACCOUNT.get(env.ACCOUNT.idFromName("acme")), async (_instance, state) => {
      state.storage.sql.exec("DELETE FROM device_subscribers WHERE workflow_id = ?", workflow_id);
    });
    const revoked = await workerFetch(`${ORIGIN}/api/devices/${id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${TOKENS.acme}` },
    });
    expect(revoked.status).toBe(200);
    // Until the workflow hears from the account, its copy still holds the device (the documented bound).
    const stale = await signedTask(client, device, workflow_id);
    // Its outbox push (run now) is answered with the newer generation: the copy is fetched again.
    await accountIndexed(workflow_id);
    const source = await complete(client, device, stale);
    expect(source.kind).toBe("claimed");
    expect(source.reason).toMatch(/revoked/);
  });

  it("a copy past its trust is fetched again before the next verification", async () => {
    const { client, keyFetches } = await meteredClient();
    const { device } = await approvedDevice("aged copy laptop");
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Aged copy", force_new: true });
    const task = await signedTask(client, device, workflow_id);
    await runInDurableObject(workflowStub(workflow_id), async (_instance, state) => {
      // The copy is a column of the totals row every workflow has (no table of its own: no schema rows written for it).
      const kept = state.storage.sql.exec<{ keys: string }>("SELECT device_keys AS keys FROM totals").one().keys;
      expect((JSON.parse(kept) as { devices: { name: string }[] }).devices.map((d) => d.name)).toContain("aged copy laptop");
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'device_keys'").toArray()).toEqual([]);
      state.storage.sql.exec("UPDATE totals SET device_keys = json_set(device_keys, '$.fresh_until', 0)");
    });
    // The object's parsed copy is its own memory: a new instance reads the stored one.
    await runInDurableObject(workflowStub(workflow_id), async (instance) => {
      (instance as unknown as { deviceKeys: { kept: unknown } }).deviceKeys.kept = undefined;
    });
    const before = await keyFetches();
    expect((await complete(client, device, task)).kind).toBe("signed");
    expect(await keyFetches()).toBe(before + 1);
  });
});
