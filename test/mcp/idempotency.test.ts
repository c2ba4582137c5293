import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { TOKENS, workerTarget } from "../support/worker";

describe("idempotency keys through the endpoint", () => {
  it("start_workflow: the same key lands on the same workflow; another account's same key does not", async () => {
    const acme = await connect(workerTarget(TOKENS.acme));
    const globex = await connect(workerTarget(TOKENS.globex));
    const first = await ok<{ workflow_id: string }>(acme, "start_workflow", { name: "Retry me", idempotency_key: "wf-key-1" });
    const retry = await ok<{ workflow_id: string }>(acme, "start_workflow", { name: "Retry me", idempotency_key: "wf-key-1" });
    expect(retry).toEqual(first);
    const theirs = await ok<{ workflow_id: string }>(globex, "start_workflow", { name: "Retry me", idempotency_key: "wf-key-1" });
    expect(theirs.workflow_id).not.toBe(first.workflow_id);
    const changed = await callTool(acme, "start_workflow", { name: "Something else", idempotency_key: "wf-key-1" });
    expect(changed.isError).toBe(true);
    expect(changed.text).toMatch(/^CONFLICT: idempotency_key: /);
  });

  it("complete_task: a retry after a lost answer returns the first result and counts once", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Retries" });
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id,
      name: "T",
      goal: "G",
      idempotency_key: "task-1",
    });
    const again = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "G", idempotency_key: "task-1" });
    expect(again.task_id).toBe(task_id);
    const args = { task_id, status: "success", outcome: { summary: "ok" }, idempotency_key: "complete-1" };
    const first = await ok(client, "complete_task", args);
    const second = await ok(client, "complete_task", args);
    expect(second).toEqual(first);
    const state = await ok<{ totals: { tasks: number; open_tasks: number } }>(client, "get_workflow", { workflow_id });
    expect(state.totals).toMatchObject({ tasks: 1, open_tasks: 0 });
  });
});
