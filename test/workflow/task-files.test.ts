/**
 * A task's files as rows (workflow/task-files): one value lists the first files and counts the
 * rest, the file pages give every list back in the record's order, and tasks completed before
 * files were rows (their whole lists in the task's JSON) read as before, later overlaps included.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FilesChanged } from "../../src/domain/changes";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { sqlFor } from "../../src/storage/sql";
import type { FilesPage } from "../../src/workflow/reader";
import { FILE_CHANGES, type FileList } from "../../src/workflow/task-files";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { file } from "../domain/fixtures";
import { failure, readWhole, stubFor, value } from "./rpc";

const ACME = "acme";
const HEAD = "1".repeat(40);

async function newWorkflow() {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(ACME, id, { name: "Files" }));
  return { id, stub };
}

/** Every item of one list, through the file pages of `pageSize`. */
async function allOf(stub: DurableObjectStub<WorkflowObject>, taskId: string, list: FileList, pageSize: number): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page: FilesPage = value(await stub.readFiles(ACME, taskId, list, cursor, pageSize));
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return items;
}

/** A task that changed `count` files: added, modified, deleted, one rename, some committed, half outside its areas. */
async function bigTask(stub: DurableObjectStub<WorkflowObject>, id: string, count: number) {
  const snapshot = { type: "git" as const, head: HEAD, dirty: [] };
  const task = value(await stub.startTask(ACME, { workflow_id: id, name: "Big", goal: "g", areas: ["keep/**"], snapshot }));
  const path = (n: number) => `${n % 2 === 0 ? "keep" : "other"}/f${String(n).padStart(5, "0")}-${"x".repeat(180)}`;
  const committed = Array.from({ length: count }, (_, n) => {
    const kind = n % 3;
    return { path: path(n), before: kind === 0 ? null : file(`old${n}`), after: kind === 2 ? null : file(`new${n}`) };
  });
  // A rename: the content of a deleted file added under a new name.
  committed.push({ path: "moved/to.txt", before: null, after: file("old2") });
  const done = value(
    await stub.completeTask(ACME, {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "s" },
      changes: {
        type: "git",
        start_head: HEAD,
        head: "2".repeat(40),
        committed,
        dirty: [],
        review: { lines: committed.map((c) => ({ path: c.path, added: 1, removed: 1 })), commits: [], branch: "main" },
      },
    }),
  );
  return { taskId: task.task_id, done };
}

describe("a task's files as rows", () => {
  it("one value lists the first files, every list covering the same ones; the pages give the whole record in order", async () => {
    const { id, stub } = await newWorkflow();
    const { taskId, done } = await bigTask(stub, id, 3000);
    const f = done.files_changed;
    const shown = f.added.length + f.modified.length + f.deleted.length;
    expect(f.more).toBe(3001 - shown);
    expect(JSON.stringify(f).length).toBeLessThan(LIMITS.VIEW_FILE_BYTES + 2000);
    const pages = Object.fromEntries(
      await Promise.all(
        (["added", "modified", "deleted", "renamed", "uncommitted", "lines", "unexpected_files"] as const).map(
          async (list) => [list, await allOf(stub, taskId, list, 700)] as const,
        ),
      ),
    ) as unknown as FilesChanged & { unexpected_files: string[] };
    // What a value shows is the start of what the pages give.
    expect(pages.added.slice(0, f.added.length)).toEqual(f.added);
    expect(pages.added.length + pages.modified.length + pages.deleted.length).toBe(3001);
    expect(pages.added).toEqual([...pages.added].sort());
    expect(pages.renamed).toEqual([{ from: expect.stringMatching(/^keep\/f00002-/), to: "moved/to.txt" }]);
    expect(pages.uncommitted).toEqual([]);
    expect(pages.lines).toHaveLength(3001);
    expect(pages.unexpected_files).toHaveLength(1500 + 1);
    expect(done.verification.unexpected_files.length + (done.verification.more?.unexpected_files ?? 0)).toBe(1501);
    // The completion's own view (its listed files kept from the write, not read back) is the view every later read gives, byte for byte.
    const read = value(await stub.task(ACME, taskId));
    expect(JSON.stringify({ f: read.files_changed, v: read.verification })).toBe(JSON.stringify({ f, v: done.verification }));
    // The JSON export holds them all too, as if the task had been one value.
    const whole = value(await readWhole(stub, ACME));
    expect(whole.tasks[0]?.files_changed?.more).toBe(f.more);
  });

  it("a completion that overlapped with a concurrent task answers with the view later reads give, overlaps included", async () => {
    const { id, stub } = await newWorkflow();
    const snapshot = { type: "git" as const, head: HEAD, dirty: [] };
    const first = value(await stub.startTask(ACME, { workflow_id: id, name: "First", goal: "g", snapshot }));
    const second = value(await stub.startTask(ACME, { workflow_id: id, name: "Second", goal: "g", snapshot }));
    const changes = (paths: string[], content: string) => ({
      type: "git" as const,
      start_head: HEAD,
      head: HEAD,
      committed: [],
      dirty: paths.map((path) => ({ path, head: null, worktree: file(`${content}${path}`) })),
    });
    const answers = [];
    for (const [task, content] of [
      [first, "a"],
      [second, "b"],
    ] as const) {
      const done = value(
        await stub.completeTask(ACME, {
          task_id: task.task_id,
          status: "success",
          outcome: { summary: "s" },
          changes: changes(["both/one.ts", "both/two.ts", `own/${task.task_id}.ts`], content),
        }),
      );
      answers.push({ done, read: value(await stub.task(ACME, task.task_id)) });
    }
    expect(answers[1]?.done.verification.overlapping?.map((o) => o.path)).toEqual(["both/one.ts", "both/two.ts"]);
    for (const { done, read } of answers) {
      expect(JSON.stringify({ f: read.files_changed, v: read.verification })).toBe(
        JSON.stringify({ f: done.files_changed, v: done.verification }),
      );
    }
  });

  it("a read through the files' select (no view since v29) writes the select into the query and still binds every value", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Select" }));
    const { taskId } = await bigTask(stub, id, 30);
    const counts = await runInDurableObject(stub, async (_instance, state) => {
      const sql = sqlFor(state.storage, { kind: "workflow", id });
      const count = (task: string) =>
        sql<{ n: number }>`SELECT count(*) AS n FROM ${FILE_CHANGES} file_changes WHERE task_id = ${task}`[0]?.n;
      const views = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'view'").toArray();
      return { own: count(taskId), injected: count(`${taskId}' OR 1 = 1 --`), views };
    });
    // 30 files and the rename's added path; a value that reads as SQL is compared as text, never run.
    expect(counts).toEqual({ own: 31, injected: 0, views: [] });
  });

  it("a page's cursor names its task and list: another one is refused", async () => {
    const { id, stub } = await newWorkflow();
    const { taskId } = await bigTask(stub, id, 1200);
    const page = value(await stub.readFiles(ACME, taskId, "added", null, 10));
    expect(page.next_cursor).not.toBeNull();
    expect(failure(await stub.readFiles(ACME, taskId, "modified", page.next_cursor, 10)).code).toBe("INPUT_VALIDATION_ERROR");
    expect(failure(await stub.readFiles(ACME, taskId, "added", null, LIMITS.FILE_PAGE_ITEMS + 1)).message).toBe(
      `limit: must be a whole number from 1 to ${LIMITS.FILE_PAGE_ITEMS}`,
    );
    expect(failure(await stub.readFiles("globex", taskId, "added", null, 10)).code).toBe("NOT_FOUND");
  });

  it("a task completed before files were rows reads from its JSON, and a later overlap joins it", async () => {
    const { id, stub } = await newWorkflow();
    const snapshot = { type: "git" as const, head: HEAD, dirty: [] };
    const a = value(await stub.startTask(ACME, { workflow_id: id, name: "Old", goal: "g", snapshot }));
    const b = value(await stub.startTask(ACME, { workflow_id: id, name: "New", goal: "g", snapshot }));
    const changes = (path: string) => ({
      type: "git" as const,
      start_head: HEAD,
      head: HEAD,
      committed: [],
      dirty: [{ path, head: null, worktree: file(path) }],
    });
    value(
      await stub.completeTask(ACME, { task_id: a.task_id, status: "success", outcome: { summary: "s" }, changes: changes("shared.txt") }),
    );
    // As a task completed before v12 was stored: whole lists in its JSON, no counts.
    const legacy = {
      added: ["shared.txt", "z-only-in-json.txt"],
      modified: [],
      deleted: [],
      renamed: [],
      uncommitted: ["shared.txt", "z-only-in-json.txt"],
    };
    await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE tasks SET files_changed = ?, verification = ?, files_count = NULL, files_listed = NULL WHERE id = ?",
        JSON.stringify(legacy),
        JSON.stringify({ scope_match: true, unexpected_files: [], warnings: [] }),
        a.task_id,
      );
    });
    expect(value(await stub.task(ACME, a.task_id)).files_changed).toEqual(legacy);
    expect(await allOf(stub, a.task_id, "added", 1)).toEqual(legacy.added);
    value(
      await stub.completeTask(ACME, { task_id: b.task_id, status: "success", outcome: { summary: "s" }, changes: changes("shared.txt") }),
    );
    const old = value(await stub.task(ACME, a.task_id));
    expect(old.files_changed).toEqual(legacy);
    expect(old.verification?.overlapping).toEqual([{ path: "shared.txt", task_id: b.task_id, same_change: true }]);
    expect(await allOf(stub, a.task_id, "overlapping", 2)).toEqual(old.verification?.overlapping);
  });
});
