/**
 * The helper lists every task open on the same working tree (`concurrent`). A parent is open
 * whenever its subtask runs, and its work includes the subtask's by design, so the edge never
 * warns about a task's own ancestors or subtasks; a truly concurrent task is still reported.
 * The lists below are what a real helper sends in that situation (client-helper's
 * worktree-overlap test shows the shape).
 */
import { describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { workerTarget } from "../support/worker";

const HEAD = "c".repeat(40);
const source = { kind: "helper", version: "0.1.0" };
const open = (taskId: string) => ({ task_id: taskId, started_at: Date.now() - 1000, completed_at: null });
const snapshot = (concurrent: object[]) => ({ type: "git", head: HEAD, dirty: [], concurrent });
const changes = (concurrent: object[]) => ({ type: "git", start_head: HEAD, head: HEAD, committed: [], dirty: [], source, concurrent });

type Started = { task_id: string; warnings?: string[] };
type Completed = { verification: { warnings: string[] } };
const ALSO_OPEN = "was also open on this working tree";

describe("warnings about tasks open on the same working tree", () => {
  it("leave out the task's own parent chain and subtasks, and keep an unrelated task", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Lineage", force_new: true });
    const elsewhere = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Elsewhere", force_new: true });
    const other = await ok<Started>(client, "start_task", { workflow_id: elsewhere.workflow_id, name: "x", goal: "g" });
    const root = await ok<Started>(client, "start_task", { workflow_id, name: "Root", goal: "g", snapshot: snapshot([]) });
    const child = await ok<Started>(client, "start_task", {
      workflow_id,
      parent_task_id: root.task_id,
      name: "Child",
      goal: "g",
      snapshot: snapshot([open(root.task_id), open(other.task_id)]),
    });
    expect(child.warnings?.join("\n")).toContain(`Task ${other.task_id} ${ALSO_OPEN}`);
    expect(child.warnings?.join("\n")).not.toContain(root.task_id);

    const grandchild = await ok<Started>(client, "start_task", {
      workflow_id,
      parent_task_id: child.task_id,
      name: "Grandchild",
      goal: "g",
      snapshot: snapshot([open(root.task_id), open(child.task_id)]),
    });
    expect(grandchild.warnings ?? []).toEqual([]);

    const outcome = { summary: "done" };
    const grandchildDone = await ok<Completed>(client, "complete_task", {
      task_id: grandchild.task_id,
      status: "success",
      outcome,
      changes: changes([open(root.task_id), open(child.task_id), open(other.task_id)]),
    });
    const grandchildWarnings = grandchildDone.verification.warnings.join("\n");
    expect(grandchildWarnings).toContain(`Task ${other.task_id} ${ALSO_OPEN}`);
    expect(grandchildWarnings).not.toContain(root.task_id);
    expect(grandchildWarnings).not.toContain(child.task_id);

    const completed = (taskId: string) => ({
      task_id: taskId,
      started_at: Date.now() - 1000,
      completed_at: Date.now(),
      shared_paths: [],
      shared_count: 0,
    });
    await ok(client, "complete_task", {
      task_id: child.task_id,
      status: "success",
      outcome,
      changes: changes([open(root.task_id), completed(grandchild.task_id)]),
    });
    const rootDone = await ok<Completed>(client, "complete_task", {
      task_id: root.task_id,
      status: "success",
      outcome,
      changes: changes([completed(child.task_id), completed(grandchild.task_id), open(other.task_id)]),
    });
    const rootWarnings = rootDone.verification.warnings.join("\n");
    expect(rootWarnings).toContain(`Task ${other.task_id} ${ALSO_OPEN}`);
    expect(rootWarnings).not.toContain(child.task_id);
    expect(rootWarnings).not.toContain(grandchild.task_id);
  });
});
