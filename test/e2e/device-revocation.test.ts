/**
 * Device signatures are verified by the workflow object itself, from its copy of the account's
 * device keys (src/workflow/device-keys.ts), and a revocation still takes effect at once: the
 * account pushes it to every workflow that keeps a copy before the owner's DELETE answers. Through
 * a real `wrangler dev` and a real MCP client signing as a device's helper does: a task open when
 * its device is revoked, and a workflow that verified the device earlier with no task open, both
 * read "claimed" on the device's next signature, with the revocation as the reason.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { DevServer } from "../support/dev-server";
import { nonceOf, signedCleanStart, signedOneNewFile, type TestDevice, testDevice } from "../support/device-keys";
import { connect, ok } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

type Client = Awaited<ReturnType<typeof connect>>;
type Files = { source: { kind: string; reason?: string; device?: { name: string } } };

let server: DevServer;
let client: Client;

beforeAll(async () => {
  server = sharedDevServer();
  client = await connect(server, { negotiation: "auto" });
});

async function approve(name: string): Promise<{ device: TestDevice; id: string }> {
  const device = await testDevice();
  const response = await fetch(`${server.url}/api/devices`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name, key: device.key }),
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return { device, id: ((await response.json()) as { id: string }).id };
}

async function revoke(id: string): Promise<void> {
  const response = await fetch(`${server.url}/api/devices/${id}`, {
    method: "DELETE",
    headers: { Authorization: `Bearer ${server.token}` },
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

async function workflow(name: string): Promise<string> {
  return (await ok<{ workflow_id: string }>(client, "start_workflow", { name, force_new: true })).workflow_id;
}

/** A task started with a snapshot `device` signed; its id and the start's nonce. */
async function signedStart(device: TestDevice, workflowId: string, name: string) {
  const snapshot = await signedCleanStart(device, workflowId);
  const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id: workflowId, name, goal: "g", snapshot });
  return { taskId: task_id, nonce: nonceOf(snapshot) };
}

/** Completes the task with changes `device` signed; the files' provenance as recorded. */
async function signedCompletion(device: TestDevice, task: { taskId: string; nonce: string }): Promise<Files> {
  const changes = await signedOneNewFile(device, task);
  await ok(client, "complete_task", { task_id: task.taskId, status: "success", outcome: { summary: "s" }, changes });
  const { task: view } = await ok<{ task: { files_changed: Files } }>(client, "get_workflow", { task_id: task.taskId });
  return view.files_changed;
}

describe("a revoked device's next signature", () => {
  it("is refused on a task that was open when the device was revoked", async () => {
    const { device, id } = await approve("open task laptop");
    const wf = await workflow("Revoked while open");
    const task = await signedStart(device, wf, "Open");
    await revoke(id);
    const files = await signedCompletion(device, task);
    expect(files.source.kind).toBe("claimed");
    expect(files.source.reason).toMatch(/revoked/);
  });

  it("is refused in a workflow that verified the device before, with no task open", async () => {
    const { device, id } = await approve("earlier laptop");
    const wf = await workflow("Verified before");
    // Signed both ends while approved: computed and signed, and this workflow keeps the keys.
    const before = await signedCompletion(device, await signedStart(device, wf, "Before"));
    expect(before.source).toMatchObject({ kind: "signed", device: { name: "earlier laptop" } });
    await revoke(id);
    const after = await signedCompletion(device, await signedStart(device, wf, "After"));
    expect(after.source.kind).toBe("claimed");
    expect(after.source.reason).toMatch(/revoked|not signed by the same device/);
  });

  it("a device approved after a workflow kept the keys is known there at once", async () => {
    const wf = await workflow("Approved later");
    const { device: first } = await approve("first laptop");
    await signedCompletion(first, await signedStart(first, wf, "First"));
    const { device: second } = await approve("second laptop");
    const files = await signedCompletion(second, await signedStart(second, wf, "Second"));
    expect(files.source).toMatchObject({ kind: "signed", device: { name: "second laptop" } });
  });
});
