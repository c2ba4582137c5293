import { runInDurableObject } from "cloudflare:test";
import { type ChainedEvent, verifyChain } from "@waymark/protocol/chain";
import { describe, expect, it } from "vitest";
import type { DirtyEntry, FileState, Transition } from "../../src/domain/changes";
import { newWorkflowId } from "../../src/ids";
import { FILE_CHANGES } from "../../src/workflow/task-files";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { WORKFLOW_MIGRATIONS } from "../../src/workflow/workflow-schema";
import { file, objectId } from "../domain/fixtures";
import { failure, readWhole, stubFor, value } from "./rpc";

const ACME = "acme";

async function newWorkflow(name = "Workflow") {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(ACME, id, { name, plan: [{ step: "1", goal: "Do it" }] }));
  return { id, stub };
}

const OUTCOME = { summary: "Done." };

async function rows<T>(stub: DurableObjectStub<WorkflowObject>, query: string): Promise<T[]> {
  return runInDurableObject(stub, async (_instance, state) => state.storage.sql.exec(query).toArray() as T[]);
}

describe("WorkflowObject storage", () => {
  it("keeps the workflow, its tasks tree and logs in SQLite, with a versioned schema", async () => {
    const { id, stub } = await newWorkflow("Auth refactor");
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "Parent", goal: "Everything", areas: ["auth"] }));
    const child = value(await stub.startTask(ACME, { workflow_id: id, parent_task_id: parent.task_id, name: "Child", goal: "A part" }));
    value(
      await stub.logDecision(ACME, {
        task_id: child.task_id,
        category: "architecture",
        question: "Q?",
        chosen: "A",
        reasoning: "Because",
        options_considered: ["A", "B"],
      }),
    );
    value(
      await stub.logIssue(ACME, { task_id: child.task_id, type: "other", description: "D", resolution: "R", requires_human_review: true }),
    );
    value(await stub.logMilestone(ACME, { task_id: child.task_id, message: "Half", progress: 50, metadata: { suite: "auth" } }));

    const [workflow] = await rows<{ id: string; account: string; name: string; plan: string }>(
      stub,
      "SELECT id, account, name, plan FROM workflow",
    );
    expect(workflow).toEqual({ id, account: ACME, name: "Auth refactor", plan: JSON.stringify([{ step: "1", goal: "Do it" }]) });
    const tasks = await rows<{ id: string; parent_id: string | null; areas: string }>(
      stub,
      "SELECT id, parent_id, areas FROM tasks ORDER BY started_at, parent_id IS NOT NULL",
    );
    expect(tasks).toEqual([
      { id: parent.task_id, parent_id: null, areas: '["auth"]' },
      { id: child.task_id, parent_id: parent.task_id, areas: "[]" },
    ]);
    expect(await rows(stub, "SELECT category, options, chosen FROM log_entries WHERE kind = 'decisions'")).toEqual([
      { category: "architecture", options: '["A","B"]', chosen: "A" },
    ]);
    expect(await rows(stub, "SELECT requires_human_review FROM log_entries WHERE kind = 'issues'")).toEqual([{ requires_human_review: 1 }]);
    expect(await rows(stub, "SELECT progress, metadata FROM log_entries WHERE kind = 'milestones'")).toEqual([
      { progress: 50, metadata: '{"suite":"auth"}' },
    ]);
    // A new object's schema is at the last version, kept on the totals row (no table of its own).
    expect(await rows(stub, "SELECT schema_version FROM totals")).toEqual([{ schema_version: WORKFLOW_MIGRATIONS.at(-1)?.version }]);
    expect(await rows(stub, "SELECT name FROM sqlite_master WHERE name = 'schema_version'")).toEqual([]);
  });

  it("numbers events without gaps, one per write, and serves them from a cursor", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G" }));
    for (let i = 0; i < 4; i++) value(await stub.logMilestone(ACME, { task_id: task.task_id, message: `m${i}` }));
    value(await stub.completeTask(ACME, { task_id: task.task_id, status: "success", outcome: OUTCOME }));
    const seqs = (await rows<{ seq: number }>(stub, "SELECT seq FROM events ORDER BY seq")).map((r) => r.seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const types = (await rows<{ type: string }>(stub, "SELECT type FROM events ORDER BY seq")).map((r) => r.type);
    expect(types).toEqual([
      "workflow.started",
      "task.started",
      "milestone.logged",
      "milestone.logged",
      "milestone.logged",
      "milestone.logged",
      "task.completed",
    ]);
    const page = value(await stub.events(ACME, 2, 3));
    expect(page.events.map((e) => e.seq)).toEqual([3, 4, 5]);
    expect(page).toMatchObject({ next_seq: 5, has_more: true });
    const rest = value(await stub.events(ACME, page.next_seq, 10));
    expect(rest.events.map((e) => e.seq)).toEqual([6, 7]);
    expect(rest.has_more).toBe(false);
  });

  it("answers NOT_FOUND to another account, and writes nothing for it", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G" }));
    const before = await rows(stub, "SELECT count(*) AS n FROM events");
    expect(failure(await stub.startTask("globex", { workflow_id: id, name: "X", goal: "Y" })).code).toBe("NOT_FOUND");
    expect(failure(await stub.logIssue("globex", { task_id: task.task_id, type: "other", description: "d", resolution: "r" })).code).toBe(
      "NOT_FOUND",
    );
    expect(failure(await stub.completeTask("globex", { task_id: task.task_id, status: "failed", outcome: OUTCOME })).code).toBe(
      "NOT_FOUND",
    );
    expect(failure(await stub.readHead("globex", false)).code).toBe("NOT_FOUND");
    expect(failure(await stub.resume("globex", 5, true)).code).toBe("NOT_FOUND");
    expect(await rows(stub, "SELECT count(*) AS n FROM events")).toEqual(before);
  });
});

describe("WorkflowObject lifecycle rules", () => {
  it("refuses to complete a task twice, but replays the first result for the same idempotency key", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G" }));
    const first = value(
      await stub.completeTask(ACME, { task_id: task.task_id, status: "success", outcome: OUTCOME, idempotency_key: "done-1" }),
    );
    const replay = value(
      await stub.completeTask(ACME, { task_id: task.task_id, status: "success", outcome: OUTCOME, idempotency_key: "done-1" }),
    );
    expect(replay).toEqual(first);
    const again = failure(await stub.completeTask(ACME, { task_id: task.task_id, status: "success", outcome: OUTCOME }));
    expect(again.code).toBe("CONFLICT");
    expect(again.message).toMatch(/^task_id: .*already completed/);
    const reused = failure(
      await stub.completeTask(ACME, { task_id: task.task_id, status: "failed", outcome: OUTCOME, idempotency_key: "done-1" }),
    );
    expect(reused).toMatchObject({ code: "CONFLICT" });
    expect(reused.message).toMatch(/^idempotency_key:/);
    expect(await rows(stub, "SELECT count(*) AS n FROM events WHERE type = 'task.completed'")).toEqual([{ n: 1 }]);
  });

  it("creates one task for a retried start_task with the same key", async () => {
    const { id, stub } = await newWorkflow();
    const input = { workflow_id: id, name: "T", goal: "G", idempotency_key: "start-1" };
    const a = value(await stub.startTask(ACME, input));
    const b = value(await stub.startTask(ACME, input));
    expect(b.task_id).toBe(a.task_id);
    expect(await rows(stub, "SELECT count(*) AS n FROM tasks")).toEqual([{ n: 1 }]);
  });

  it("refuses to complete a parent while subtasks are open, naming them", async () => {
    const { id, stub } = await newWorkflow();
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "Parent", goal: "G" }));
    const child = value(await stub.startTask(ACME, { workflow_id: id, parent_task_id: parent.task_id, name: "Open child", goal: "G" }));
    const refused = failure(await stub.completeTask(ACME, { task_id: parent.task_id, status: "success", outcome: OUTCOME }));
    expect(refused.code).toBe("CONFLICT");
    expect(refused.message).toContain(child.task_id);
    expect(refused.message).toContain("Open child");
    value(await stub.completeTask(ACME, { task_id: child.task_id, status: "success", outcome: OUTCOME }));
    value(await stub.completeTask(ACME, { task_id: parent.task_id, status: "success", outcome: OUTCOME }));
  });

  it("refuses logs and subtasks on a completed task, and tasks on a completed workflow", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G" }));
    value(await stub.completeTask(ACME, { task_id: task.task_id, status: "success", outcome: OUTCOME }));
    expect(
      failure(await stub.logDecision(ACME, { task_id: task.task_id, category: "other", question: "q", chosen: "c", reasoning: "r" })).code,
    ).toBe("CONFLICT");
    expect(failure(await stub.logMilestone(ACME, { task_id: task.task_id, message: "late" })).code).toBe("CONFLICT");
    expect(failure(await stub.startTask(ACME, { workflow_id: id, parent_task_id: task.task_id, name: "S", goal: "G" })).code).toBe(
      "CONFLICT",
    );
    value(
      await stub.completeWorkflow(ACME, {
        workflow_id: id,
        status: "success",
        summary: "All done",
        achievements: ["a"],
        limitations: ["l"],
      }),
    );
    expect(failure(await stub.startTask(ACME, { workflow_id: id, name: "Late", goal: "G" })).code).toBe("CONFLICT");
    const [wf] = await rows<{ status: string; outcome: string }>(stub, "SELECT status, outcome FROM workflow");
    expect(wf).toEqual({ status: "success", outcome: JSON.stringify({ summary: "All done", achievements: ["a"], limitations: ["l"] }) });
  });

  it("refuses to complete a workflow with open tasks", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "Still open", goal: "G" }));
    const refused = failure(await stub.completeWorkflow(ACME, { workflow_id: id, status: "success", summary: "s" }));
    expect(refused.code).toBe("CONFLICT");
    expect(refused.message).toContain(task.task_id);
  });

  it("accepts more than five milestones with a warning", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G" }));
    for (let i = 1; i <= 5; i++)
      expect(value(await stub.logMilestone(ACME, { task_id: task.task_id, message: `m${i}` })).warnings).toBeUndefined();
    const sixth = value(await stub.logMilestone(ACME, { task_id: task.task_id, message: "m6" }));
    expect(sixth.warnings?.[0]).toMatch(/6 milestones/);
  });
});

const HEAD_1 = objectId("commit 1");
const HEAD_2 = objectId("commit 2");
const dirty = (path: string, head: FileState | null, worktree: FileState | null): DirtyEntry => ({ path, head, worktree });
const moved = (path: string, before: FileState | null, after: FileState | null): Transition => ({ path, before, after });

describe("WorkflowObject change attribution", () => {
  it("computes files_changed, commit state and scope from the helper's snapshot and changes", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(
      await stub.startTask(ACME, {
        workflow_id: id,
        name: "Auth",
        goal: "G",
        areas: ["auth"],
        snapshot: { type: "git", head: HEAD_1, branch: "main", dirty: [dirty("notes.txt", null, file("scratch"))] },
      }),
    );
    expect(task).toMatchObject({ snapshot_type: "git", snapshot_id: HEAD_1 });
    const done = value(
      await stub.completeTask(ACME, {
        task_id: task.task_id,
        status: "success",
        outcome: OUTCOME,
        changes: {
          type: "git",
          start_head: HEAD_1,
          head: HEAD_2,
          committed: [moved("src/auth/login.ts", file("v1"), file("v2")), moved("src/auth/new.ts", null, file("n"))],
          dirty: [dirty("notes.txt", null, file("scratch")), dirty("utils.ts", file("u1"), file("u2")), dirty("old.ts", file("o"), null)],
        },
      }),
    );
    expect(done.files_changed).toEqual({
      added: ["src/auth/new.ts"],
      modified: ["src/auth/login.ts", "utils.ts"],
      deleted: ["old.ts"],
      renamed: [],
      uncommitted: ["old.ts", "utils.ts"],
      // Provenance: these changes carry no device signature: the client's claim.
      source: { kind: "claimed", reason: "not signed by a device" },
    });
    expect(done.verification.scope_match).toBe(false);
    expect(done.verification.unexpected_files).toEqual(["old.ts", "utils.ts"]);
    const stored = await rows(stub, `SELECT path, status, committed, in_scope FROM ${FILE_CHANGES.text} ORDER BY path`);
    expect(stored).toEqual([
      { path: "old.ts", status: "D", committed: 0, in_scope: 0 },
      { path: "src/auth/login.ts", status: "M", committed: 1, in_scope: 1 },
      { path: "src/auth/new.ts", status: "A", committed: 1, in_scope: 1 },
      { path: "utils.ts", status: "M", committed: 0, in_scope: 0 },
    ]);
  });

  it("rejects changes that do not match the start snapshot, and stores nothing", async () => {
    const { id, stub } = await newWorkflow();
    const task = value(
      await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G", snapshot: { type: "git", head: HEAD_1, dirty: [] } }),
    );
    const refused = failure(
      await stub.completeTask(ACME, {
        task_id: task.task_id,
        status: "success",
        outcome: OUTCOME,
        changes: { type: "git", start_head: HEAD_2, head: HEAD_2, committed: [], dirty: [] },
      }),
    );
    expect(refused.code).toBe("INPUT_VALIDATION_ERROR");
    expect(refused.message).toMatch(/start_head/);
    expect(await rows(stub, "SELECT status FROM tasks")).toEqual([{ status: "in_progress" }]);
    expect(await rows(stub, `SELECT count(*) AS n FROM ${FILE_CHANGES.text}`)).toEqual([{ n: 0 }]);
    expect(await rows(stub, "SELECT count(*) AS n FROM events WHERE type = 'task.completed'")).toEqual([{ n: 0 }]);
  });

  it("attributes a change seen by two concurrently open tasks once, and reports the overlap", async () => {
    const { id, stub } = await newWorkflow();
    const snapshot = { type: "git" as const, head: HEAD_1, dirty: [] };
    const a = value(await stub.startTask(ACME, { workflow_id: id, name: "A", goal: "G", snapshot }));
    const b = value(await stub.startTask(ACME, { workflow_id: id, name: "B", goal: "G", snapshot }));
    const end = { type: "git" as const, start_head: HEAD_1, head: HEAD_1, committed: [] };
    const shared = dirty("shared.ts", file("s1"), file("s2"));
    const first = value(
      await stub.completeTask(ACME, { task_id: a.task_id, status: "success", outcome: OUTCOME, changes: { ...end, dirty: [shared] } }),
    );
    expect(first.files_changed.modified).toEqual(["shared.ts"]);
    const second = value(
      await stub.completeTask(ACME, {
        task_id: b.task_id,
        status: "success",
        outcome: OUTCOME,
        changes: { ...end, dirty: [shared, dirty("only-b.ts", null, file("b"))] },
      }),
    );
    expect(second.files_changed.modified).toEqual([]);
    expect(second.files_changed.added).toEqual(["only-b.ts"]);
    expect(second.verification.overlapping).toEqual([{ path: "shared.ts", task_id: a.task_id, same_change: true }]);
    expect(second.verification.warnings.join(" ")).toMatch(/concurrently open/);
    // The task that completed first learns of the overlap too.
    const earlier = value(await stub.task(ACME, a.task_id));
    expect(earlier.verification?.overlapping).toEqual([{ path: "shared.ts", task_id: b.task_id, same_change: true }]);
    expect(earlier.verification?.warnings.join(" ")).toMatch(new RegExp(`also changed by task ${b.task_id}`));
    const view = value(await readWhole(stub, ACME));
    expect(view.totals.files_changed).toBe(2);
  });

  it("keeps a change that a task made after an earlier task completed: sequential tasks never overlap", async () => {
    const { id, stub } = await newWorkflow();
    const snapshot = { type: "git" as const, head: HEAD_1, dirty: [] };
    const changes = {
      type: "git" as const,
      start_head: HEAD_1,
      head: HEAD_1,
      committed: [],
      dirty: [dirty("same.ts", file("1"), file("2"))],
    };
    const first = value(await stub.startTask(ACME, { workflow_id: id, name: "First", goal: "G", snapshot }));
    value(await stub.completeTask(ACME, { task_id: first.task_id, status: "success", outcome: OUTCOME, changes }));
    const second = value(await stub.startTask(ACME, { workflow_id: id, name: "Second", goal: "G", snapshot }));
    const done = value(await stub.completeTask(ACME, { task_id: second.task_id, status: "success", outcome: OUTCOME, changes }));
    expect(done.files_changed.modified).toEqual(["same.ts"]);
    expect(done.verification.overlapping).toBeUndefined();
  });

  it("lets a parent include its subtasks' changes without calling them overlaps", async () => {
    const { id, stub } = await newWorkflow();
    const snapshot = { type: "git" as const, head: HEAD_1, dirty: [] };
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "P", goal: "G", snapshot }));
    const child = value(await stub.startTask(ACME, { workflow_id: id, parent_task_id: parent.task_id, name: "C", goal: "G", snapshot }));
    const changes = { type: "git" as const, start_head: HEAD_1, head: HEAD_1, committed: [], dirty: [dirty("x.ts", file("1"), file("2"))] };
    value(await stub.completeTask(ACME, { task_id: child.task_id, status: "success", outcome: OUTCOME, changes }));
    const done = value(await stub.completeTask(ACME, { task_id: parent.task_id, status: "success", outcome: OUTCOME, changes }));
    expect(done.files_changed.modified).toEqual(["x.ts"]);
    expect(done.verification.overlapping).toBeUndefined();
  });
});

describe("WorkflowObject hash chain", () => {
  it("chains every event, exports the log with its head, and chains events written before the chain existed", async () => {
    const { id, stub } = await newWorkflow("Chained");
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "G" }));
    value(await stub.logMilestone(ACME, { task_id: task.task_id, message: "half", metadata: { é: "ü", n: 1.5 } }));
    value(await stub.completeTask(ACME, { task_id: task.task_id, status: "success", outcome: OUTCOME }));
    const exported = value(await readWhole(stub, ACME, true));
    const events = (exported.events ?? []) as ChainedEvent[];
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(exported.chain).toMatchObject({ algorithm: "sha256", events: 4, head: events.at(-1)?.hash });
    // What a reader does offline with the JSON export.
    const roundTripped = JSON.parse(JSON.stringify(exported)) as { events: ChainedEvent[]; chain: { head: string } };
    expect(verifyChain(id, roundTripped.events, roundTripped.chain.head)).toMatchObject({ ok: true, events: 4 });
    // A log from before the chain: hashes missing, filled in order when the object starts.
    await runInDurableObject(stub, async (instance, state) => {
      state.storage.sql.exec("UPDATE events SET hash = NULL");
      (instance as unknown as { log: { backfillChain(): void } }).log.backfillChain();
    });
    const again = value(await readWhole(stub, ACME, true));
    expect(again.chain?.head).toBe(exported.chain?.head);
  });
});
