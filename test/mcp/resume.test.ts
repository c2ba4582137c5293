import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { accountIndexed, TOKENS, workerTarget } from "../support/worker";

type Started = { workflow_id: string; created_at: string; resumed?: boolean; resume_candidate?: Record<string, unknown> };

describe("start_workflow with the name of an open workflow", () => {
  it("returns the open one as a resume candidate instead of creating a twin (trimmed, case-insensitive)", async () => {
    const client = await connect(workerTarget());
    const first = await ok<Started>(client, "start_workflow", { name: "Checkout Revamp" });
    await ok(client, "start_task", { workflow_id: first.workflow_id, name: "T", goal: "g" });
    // The index counts the open task within half a second; the candidate's count comes from it.
    await accountIndexed(first.workflow_id);
    const again = await callTool(client, "start_workflow", { name: "  checkout REVAMP " });
    expect(again.isError).toBe(false);
    expect(again.structured).toMatchObject({
      workflow_id: first.workflow_id,
      created_at: first.created_at,
      resumed: true,
      resume_candidate: { workflow_id: first.workflow_id, name: "Checkout Revamp", open_tasks: 1 },
    });
    expect(typeof (again.structured.resume_candidate as { updated_at: unknown }).updated_at).toBe("string");
    expect(again.text).toContain(`An open workflow with this name exists: ${first.workflow_id} "Checkout Revamp"`);
    expect(again.text).toContain("Call get_workflow to resume it, or start_workflow with force_new: true.");
    const open = await ok<{ workflows: { workflow_id: string; name: string }[] }>(client, "get_workflow", {});
    expect(open.workflows.filter((w) => w.name === "Checkout Revamp")).toHaveLength(1);
  });

  it("creates a new one with force_new: true", async () => {
    const client = await connect(workerTarget());
    const first = await ok<Started>(client, "start_workflow", { name: "Forced" });
    const second = await ok<Started>(client, "start_workflow", { name: "Forced", force_new: true });
    expect(second.workflow_id).not.toBe(first.workflow_id);
    expect(second.resumed).toBeUndefined();
  });

  it("ignores completed workflows and other accounts", async () => {
    const client = await connect(workerTarget());
    const done = await ok<Started>(client, "start_workflow", { name: "Finished thing" });
    await ok(client, "complete_workflow", { workflow_id: done.workflow_id, status: "success", summary: "ok" });
    const fresh = await ok<Started>(client, "start_workflow", { name: "Finished thing" });
    expect(fresh.workflow_id).not.toBe(done.workflow_id);
    expect(fresh.resumed).toBeUndefined();

    const globex = await connect(workerTarget(TOKENS.globex));
    const theirs = await ok<Started>(globex, "start_workflow", { name: "Finished thing" });
    expect(theirs.workflow_id).not.toBe(fresh.workflow_id);
    expect(theirs.resumed).toBeUndefined();
  });

  it("still replays an idempotent retry as the first result (no resume candidate)", async () => {
    const client = await connect(workerTarget());
    const first = await ok<Started>(client, "start_workflow", { name: "Keyed", idempotency_key: "resume-key-1" });
    const retry = await ok<Started>(client, "start_workflow", { name: "Keyed", idempotency_key: "resume-key-1" });
    expect(retry).toEqual(first);
    // A different key with the same name is a new request: it gets the open one.
    const other = await ok<Started>(client, "start_workflow", { name: "Keyed", idempotency_key: "resume-key-2" });
    expect(other).toMatchObject({ workflow_id: first.workflow_id, resumed: true });
  });

  it("keeps a reference client working: it reads workflow_id and carries on in the open workflow", async () => {
    const v1 = await connect(workerTarget(), { sdk: "v1" });
    const first = await ok<Started>(v1, "start_workflow", { name: "Reference client flow" });
    const again = await ok<Started>(v1, "start_workflow", { name: "Reference client flow" });
    const task = await ok<{ task_id: string }>(v1, "start_task", { workflow_id: again.workflow_id, name: "T", goal: "g" });
    expect(task.task_id.slice(3, 23)).toBe(first.workflow_id.slice(3));
  });

  it("refuses a non-boolean force_new by name", async () => {
    const client = await connect(workerTarget());
    const bad = await callTool(client, "start_workflow", { name: "x", force_new: "yes" });
    expect(bad.text).toBe("INPUT_VALIDATION_ERROR: force_new: must be a boolean");
  });
});
