import { reviewCounts } from "@waymark/protocol/review-counts";
import { describe, expect, it } from "vitest";
import type { TaskEntry, TaskPage, TaskView } from "../../src/domain/view";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { PagedReadError, recordRows, taskEntries } from "../../src/pages/paged-reads";
import { BAD_CURSOR } from "../../src/workflow/cursor";
import { file } from "../domain/fixtures";
import { ON_PAGE } from "../support/worker";
import { failure, readWhole, stubFor, value } from "./rpc";

const ACME = "acme";
const OUTCOME = { summary: "Done." };

async function newWorkflow(name = "Paged") {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(ACME, id, { name, plan: [{ step: "1", goal: "Do it" }] }));
  return { id, stub };
}

type Stub = ReturnType<typeof stubFor>;

async function start(stub: Stub, id: string, name: string, parent?: string): Promise<string> {
  return value(
    await stub.startTask(ACME, { workflow_id: id, name, goal: `goal of ${name}`, ...(parent ? { parent_task_id: parent } : {}) }),
  ).task_id;
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The timeline rule, computed from the whole view: top-level tasks by start, each followed depth-first by its subtasks. */
function timeline(tasks: TaskView[]): { id: string; depth: number }[] {
  const byStart = [...tasks].sort((a, b) => a.started_at.localeCompare(b.started_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const out: { id: string; depth: number }[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const task of byStart.filter((t) => t.parent_task_id === parent)) {
      out.push({ id: task.id, depth });
      walk(task.id, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

/** Two top-level tasks open side by side, subtasks started after the later top-level task, two levels deep. */
async function nestedWorkflow() {
  const { id, stub } = await newWorkflow();
  const a = await start(stub, id, "A");
  const b = await start(stub, id, "B");
  const a1 = await start(stub, id, "A1", a);
  const b1 = await start(stub, id, "B1", b);
  const a1x = await start(stub, id, "A1x", a1);
  const a2 = await start(stub, id, "A2", a);
  value(await stub.logDecision(ACME, { task_id: a1, category: "other", question: "Which?", chosen: "this", reasoning: "because" }));
  value(await stub.logIssue(ACME, { task_id: a1, type: "other", description: "odd", resolution: "fixed" }));
  value(await stub.logMilestone(ACME, { task_id: a1, message: "half" }));
  value(await stub.logMilestone(ACME, { task_id: a1, message: "most" }));
  for (const task of [a1x, a1, a2, a, b1, b]) value(await stub.completeTask(ACME, { task_id: task, status: "success", outcome: OUTCOME }));
  const c = await start(stub, id, "C");
  return { id, stub, ids: { a, b, a1, b1, a1x, a2, c } };
}

describe("paged reads: the timeline", () => {
  it("lists top-level tasks by start, each followed depth-first by its subtasks, with their own logs", async () => {
    const { stub, ids } = await nestedWorkflow();
    const page = value(await stub.readTasks(ACME, null, LIMITS.READ_PAGE_ITEMS));
    expect(page.next_cursor).toBeNull();
    expect(page.entries.map((e) => [e.task.name, e.depth, e.subtasks])).toEqual([
      ["A", 0, 2],
      ["A1", 1, 1],
      ["A1x", 2, 0],
      ["A2", 1, 0],
      ["B", 0, 1],
      ["B1", 1, 0],
      ["C", 0, 0],
    ]);
    const whole = value(await readWhole(stub, ACME));
    expect(page.entries.map((e) => ({ id: e.task.id, depth: e.depth }))).toEqual(timeline(whole.tasks));
    const a1 = page.entries.find((e) => e.task.id === ids.a1) as TaskEntry;
    expect(a1.task).toEqual(whole.tasks.find((t) => t.id === ids.a1));
    expect(a1.decisions).toEqual(whole.decisions);
    expect(a1.issues).toEqual(whole.issues);
    expect(a1.milestones.map((m) => m.message)).toEqual(["half", "most"]);
    expect(
      page.entries.filter((e) => e.task.id !== ids.a1).every((e) => e.decisions.length + e.issues.length + e.milestones.length === 0),
    ).toBe(true);
  });

  it("gives the same timeline page by page, whatever the page size, and a cursor that resumes inside a subtree", async () => {
    const { stub } = await nestedWorkflow();
    const whole = value(await stub.readTasks(ACME, null, LIMITS.READ_PAGE_ITEMS)).entries;
    for (const size of [1, 2, 3, 4]) {
      const seen: TaskEntry[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: TaskPage = value(await stub.readTasks(ACME, cursor, size));
        expect(page.entries.length).toBeLessThanOrEqual(size);
        seen.push(...page.entries);
        cursor = page.next_cursor;
        pages++;
      } while (cursor !== null);
      expect(seen).toEqual(whole);
      expect(pages).toBe(Math.ceil(whole.length / size));
    }
    // The generator the renderers use yields the same entries.
    expect(await collect(taskEntries(stub, ACME, { pageSize: 2 }))).toEqual(whole);
  });

  it("tells a parent which of its files its subtasks list, so its own table leaves them out", async () => {
    const { id, stub } = await newWorkflow();
    const parent = await start(stub, id, "Parent");
    const child = await start(stub, id, "Child", parent);
    const grandchild = await start(stub, id, "Grandchild", child);
    const changes = (paths: string[]) => ({
      type: "checksum" as const,
      transitions: paths.map((path) => ({ path, before: null, after: file(path) })),
    });
    value(await stub.completeTask(ACME, { task_id: grandchild, status: "success", outcome: OUTCOME, changes: changes(["deep.ts"]) }));
    value(await stub.completeTask(ACME, { task_id: child, status: "success", outcome: OUTCOME, changes: changes(["mid.ts", "deep.ts"]) }));
    value(
      await stub.completeTask(ACME, {
        task_id: parent,
        status: "success",
        outcome: OUTCOME,
        changes: changes(["own.ts", "mid.ts", "deep.ts"]),
      }),
    );
    const entries = value(await stub.readTasks(ACME, null, 10)).entries;
    expect(entries.map((e) => [e.task.name, e.paths_in_subtasks])).toEqual([
      ["Parent", ["deep.ts", "mid.ts"]],
      ["Child", ["deep.ts"]],
      ["Grandchild", []],
    ]);
  });

  it("bounds a page in bytes as well as in count (one entry always fits)", async () => {
    const { id, stub } = await newWorkflow();
    const long = "x".repeat(LIMITS.LONG_TEXT);
    const task = await start(stub, id, "Talkative");
    // Each decision is ~16 KB of text: 70 of them put the task's entry past the page's byte budget alone.
    for (let i = 0; i < 70; i++) {
      value(
        await stub.logDecision(ACME, { task_id: task, category: "other", question: long, chosen: long, reasoning: long, trade_offs: long }),
      );
    }
    for (let i = 0; i < 3; i++) await start(stub, id, `Quiet ${i}`);
    const first = value(await stub.readTasks(ACME, null, 10));
    expect(first.entries.map((e) => e.task.name)).toEqual(["Talkative"]);
    expect(JSON.stringify(first.entries).length).toBeGreaterThan(LIMITS.READ_PAGE_BYTES);
    const rest = value(await stub.readTasks(ACME, first.next_cursor, 10));
    // Tasks started in the same millisecond are ordered by id, not by call: compare as a set.
    expect(rest.entries.map((e) => e.task.name).sort()).toEqual(["Quiet 0", "Quiet 1", "Quiet 2"]);
    expect(rest.next_cursor).toBeNull();
  });
});

describe("paged reads: the head and the whole view's arrays", () => {
  it("heads the pages with the whole view's figures and pages each array in the whole view's order", async () => {
    const { id, stub, ids } = await nestedWorkflow();
    const whole = value(await readWhole(stub, ACME, true));
    const head = value(await stub.readHead(ACME, false));
    const last = whole.events?.at(-1);
    expect(head).toEqual({
      workflow: expect.objectContaining({ id, status: "active" }),
      totals: expect.objectContaining({ tasks: 7, decisions: 1, issues: 1 }),
      last_seq: last?.seq,
      chain: { algorithm: "sha256", genesis: expect.any(String), head: last?.hash, events: last?.seq },
      task_count: 7,
      line_totals: null,
      review_items: { tasks: 0, issues: 0 },
      // The counts kept facts give are the ones the whole view gives.
      review: reviewCounts(whole, []),
    });
    // Pages of two give what pages of the largest size give, in the same order.
    for (const kind of ["tasks", "decisions", "issues", "milestones"] as const) {
      expect(await collect(recordRows(stub, ACME, kind, { pageSize: 2 }))).toEqual(whole[kind]);
    }
    expect(ids.c.startsWith(`tk_${id.slice(3)}`)).toBe(true);
  });

  it("gives the owner the share link's state and feedback, and a link's reader the feedback only", async () => {
    const { id, stub } = await newWorkflow();
    const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
    value(await stub.addFeedback(ACME, { target: "workflow", target_id: id, verdict: "comment", body: "Looks right", ...ON_PAGE }));
    const owner = value(await stub.readHead(ACME, true));
    expect(owner.share?.status).toBe("active");
    expect(owner.feedback?.map((f) => f.body)).toEqual(["Looks right"]);
    const plain = value(await stub.readHead(ACME, false));
    expect(plain.share).toBeUndefined();
    expect(plain.feedback).toBeUndefined();
    // A link's reader never sees the link's own state, even asking as an owner would.
    const shared = value(await stub.readHead({ share_token: token }, true));
    expect(shared.share).toBeUndefined();
    expect(shared.feedback?.map((f) => f.body)).toEqual(["Looks right"]);
  });
});

describe("paged reads: who may read", () => {
  it("refuses another account exactly as the whole view does, on every paged read", async () => {
    const { stub } = await nestedWorkflow();
    const whole = { code: "NOT_FOUND", message: "workflow_id: no workflow or task this id in this account" };
    expect(failure(await stub.readHead("globex", true))).toEqual(whole);
    expect(failure(await stub.readTasks("globex", null, 10))).toEqual(whole);
    expect(failure(await stub.readRows("globex", "decisions", null, 10))).toEqual(whole);
    expect(failure(await stub.events("globex", 0, 10))).toEqual(whole);
    // And a workflow that does not exist at all looks the same.
    const nowhere = stubFor(newWorkflowId());
    expect(failure(await nowhere.readHead(ACME, false))).toEqual(whole);
  });

  it("lets a share link read while it is active, never with a forged token, and stops at revocation mid-read", async () => {
    const { id, stub } = await nestedWorkflow();
    const token = value(await stub.manageShare(ACME, "rotate", null)).token as string;
    const reader = { share_token: token };
    const first = value(await stub.readTasks(reader, null, 3));
    expect(first.entries).toHaveLength(3);
    const forged = { share_token: `${token.slice(0, -4)}aaaa` };
    expect(failure(await stub.readHead(forged, false)).code).toBe("NOT_FOUND");
    expect(failure(await stub.readTasks(forged, null, 3)).code).toBe("NOT_FOUND");
    // Another workflow's genuine token opens nothing here.
    const other = await newWorkflow();
    const otherToken = value(await other.stub.manageShare(ACME, "rotate", null)).token as string;
    expect(failure(await stub.readHead({ share_token: otherToken }, false)).code).toBe("NOT_FOUND");

    value(await stub.manageShare(ACME, "revoke", null));
    expect(failure(await stub.readTasks(reader, first.next_cursor, 3))).toEqual({
      code: "UNAUTHORIZED",
      message: "share_token: this link was revoked",
    });
    expect(failure(await stub.events(reader, 0, 10)).code).toBe("UNAUTHORIZED");
    await expect(collect(taskEntries(stub, reader))).rejects.toThrow(PagedReadError);
    expect(id).toMatch(/^wf_/);
  });
});

describe("paged reads: bad input", () => {
  it.each([
    ["not base64url", "not a cursor!"],
    ["base64 of something else", btoa("hello")],
    ["a position of another array", "rows"],
    ["a task of another workflow", "foreign"],
    ["too long", "A".repeat(600)],
  ])("refuses a cursor that is %s, naming the field", async (_what, given) => {
    const { stub } = await nestedWorkflow();
    let cursor = given;
    if (given === "rows") {
      const page = value(await stub.readRows(ACME, "tasks", null, 1));
      cursor = page.next_cursor as string;
    }
    if (given === "foreign") {
      const other = await nestedWorkflow();
      cursor = value(await other.stub.readTasks(ACME, null, 1)).next_cursor as string;
    }
    const refused = failure(await stub.readTasks(ACME, cursor, 2));
    expect(refused.code).toBe("INPUT_VALIDATION_ERROR");
    expect(refused.message).toMatch(/^cursor: /);
    if (given !== "foreign") expect(refused.message).toBe(BAD_CURSOR);
  });

  it("refuses a timeline cursor given to an array's pages, and a page size out of bounds", async () => {
    const { stub } = await nestedWorkflow();
    const cursor = value(await stub.readTasks(ACME, null, 1)).next_cursor as string;
    expect(failure(await stub.readRows(ACME, "tasks", cursor, 2)).message).toBe(BAD_CURSOR);
    for (const limit of [0, -1, 1.5, LIMITS.READ_PAGE_ITEMS + 1]) {
      expect(failure(await stub.readTasks(ACME, null, limit))).toEqual({
        code: "INPUT_VALIDATION_ERROR",
        message: `limit: must be a whole number from 1 to ${LIMITS.READ_PAGE_ITEMS}`,
      });
    }
  });
});
