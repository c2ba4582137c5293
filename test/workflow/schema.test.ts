/**
 * The workflow object's schema: a new workflow gets the whole current schema in one script
 * (WORKFLOW_SCHEMA) while existing objects replay the migrations, and both end the same; data
 * written at the schema before the last migration reads back the same after it.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { migrate } from "../../src/storage/migrations";
import type { FilesPage } from "../../src/workflow/reader";
import { FILE_LISTS, type FileList } from "../../src/workflow/task-files";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { WORKFLOW_MIGRATIONS, WORKFLOW_SCHEMA } from "../../src/workflow/workflow-schema";
import { ON_PAGE } from "../support/worker";
import { readWhole, stubFor, value } from "./rpc";

const ACME = "acme";
const HEAD = "1".repeat(40);
const LAST = WORKFLOW_MIGRATIONS.at(-1)?.version ?? 0;
/** Files of the task written at the older schema: about 300,000 characters of paths, more than one page. */
const FILES = 1500;

type Stub = DurableObjectStub<WorkflowObject>;

/** A file's row as the table held it before v24, as the view reads it since. */
const FILE_COLUMNS = `task_id, ord, path, status, before_mode, before_blob, after_mode, after_blob, committed, in_scope, renamed_to,
  lines_added, lines_removed, lines_binary, agent_edit, lines_agent, lines_others, lines_not_observed, line_ranges`;

/**
 * What sqlite_master says of each table, in a form the way it was created does not change: its
 * columns (name, type, not null, default, key), whether it has a rowid, its indexes with their
 * columns, uniqueness and origin, its foreign keys; each view's columns; the rows every new
 * object starts with.
 */
function describeSchema(sql: SqlStorage) {
  const all = <T>(query: string, ...args: string[]) => sql.exec(query, ...args).toArray() as T[];
  const tables = all<{ type: string; name: string; sql: string }>(
    "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
  );
  return {
    tables: tables.map(({ type, name, sql: text }) => ({
      type,
      name,
      withoutRowid: /WITHOUT ROWID\s*$/i.test(text),
      columns: all(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid`, name),
      indexes: all<{ name: string; unique: number; origin: string; partial: number }>(
        `SELECT name, "unique", origin, partial FROM pragma_index_list(?) ORDER BY name`,
        name,
      ).map((index) => ({ ...index, columns: all("SELECT seqno, name FROM pragma_index_info(?) ORDER BY seqno", index.name) })),
      foreignKeys: all(`SELECT "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`, name),
    })),
    others: all("SELECT type, name, tbl_name FROM sqlite_master WHERE type NOT IN ('table', 'index') ORDER BY name"),
    totals: all("SELECT * FROM totals"),
    versions: all<{ version: number }>("SELECT version FROM schema_version"),
  };
}

/** An object that has never held a workflow: no schema yet (LazySchema). */
function emptyObject(): Stub {
  return stubFor(newWorkflowId());
}

/** Makes the object use the schema put in place by hand, as if it had found it when it started. */
function markReady(instance: unknown): void {
  (instance as { schema: { ready: boolean } }).schema.ready = true;
}

/** Every item of one of a task's file lists, through pages of `size`. */
async function wholeList(stub: Stub, taskId: string, list: FileList, size: number): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | null = null;
  do {
    const page: FilesPage = value(await stub.readFiles(ACME, taskId, list, cursor, size));
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return items;
}

/** The log entries and events a reader gets, page after page (nothing here reads a task's files). */
async function readLogs(stub: Stub) {
  const kinds: Record<string, unknown[]> = {};
  for (const kind of ["decisions", "issues", "milestones"] as const) {
    kinds[kind] = [];
    let cursor: string | null = null;
    do {
      const page: { rows: unknown[]; next_cursor: string | null } = value(await stub.readRows(ACME, kind, cursor, 2));
      kinds[kind].push(...page.rows);
      cursor = page.next_cursor;
    } while (cursor !== null);
  }
  return { ...kinds, events: value(await stub.events(ACME, 0, 100)).events };
}

/** The stored rows of the tables the last migration rebuilt, each read through the columns it had. */
function storedRows(sql: SqlStorage) {
  return {
    decisions: sql.exec("SELECT * FROM decisions ORDER BY created_at, id").toArray(),
    issues: sql.exec("SELECT * FROM issues ORDER BY created_at, id").toArray(),
    milestones: sql.exec("SELECT * FROM milestones ORDER BY created_at, id").toArray(),
    files: sql.exec(`SELECT ${FILE_COLUMNS} FROM file_changes ORDER BY task_id, ord`).toArray(),
    snapshotEntries: sql.exec("SELECT * FROM snapshot_entries ORDER BY task_id, path").toArray(),
    idempotency: sql.exec("SELECT * FROM idempotency ORDER BY key").toArray(),
  };
}

describe("the workflow object's schema", () => {
  it("a new object's one script ends where every migration replayed ends", async () => {
    const replayed = await runInDurableObject(emptyObject(), async (_instance, state) => {
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow");
      return describeSchema(state.storage.sql);
    });
    const fresh = await runInDurableObject(emptyObject(), async (_instance, state) => {
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA);
      return describeSchema(state.storage.sql);
    });
    expect(WORKFLOW_SCHEMA.version).toBe(LAST);
    expect(fresh.versions).toEqual([{ version: LAST }]);
    expect(fresh.tables.length).toBeGreaterThan(10);
    expect(fresh).toEqual(replayed);
  });

  it("a workflow started through the object gets the one script, and writes nothing but it when it starts", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "New" }));
    const schema = await runInDurableObject(stub, async (_instance, state) => describeSchema(state.storage.sql));
    expect(schema.versions).toEqual([{ version: LAST }]);
    const replayed = await runInDurableObject(emptyObject(), async (_instance, state) => {
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow");
      return describeSchema(state.storage.sql);
    });
    expect(schema.tables).toEqual(replayed.tables);
  });

  it(`data written at version ${LAST - 1} reads back the same after migrating to ${LAST}`, async () => {
    // What a completed task without files keeps as JSON (the lists are rows), from a workflow of today.
    const template = stubFor(newWorkflowId());
    const templateId = await runInDurableObject(template, async (_instance, state) => state.id.name ?? "");
    value(await template.startWorkflow(ACME, templateId, { name: "Template" }));
    const done = value(await template.startTask(ACME, { workflow_id: templateId, name: "T", goal: "g" }));
    value(await template.completeTask(ACME, { task_id: done.task_id, status: "success", outcome: { summary: "s" } }));
    const [json] = await runInDurableObject(template, async (_instance, state) =>
      state.storage.sql.exec("SELECT files_changed, verification FROM tasks").toArray(),
    );

    const id = newWorkflowId();
    const stub = stubFor(id);
    await runInDurableObject(stub, async (instance, state) => {
      migrate(
        state.storage,
        WORKFLOW_MIGRATIONS.filter((m) => m.version < LAST),
        "workflow",
      );
      markReady(instance);
    });
    // Written by the object itself, at the older schema: the workflow, tasks, logs, feedback.
    value(await stub.startWorkflow(ACME, id, { name: "Old", plan: [{ step: "1", goal: "g" }] }));
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "P", goal: "g", areas: ["keep/**"] }));
    const dirty = [
      { path: "src/a.ts", head: { mode: "100644", blob: "a".repeat(40) }, worktree: { mode: "100644", blob: "b".repeat(40) } },
    ];
    const child = value(
      await stub.startTask(ACME, {
        workflow_id: id,
        parent_task_id: parent.task_id,
        name: "C",
        goal: "g",
        snapshot: { type: "git", head: "1".repeat(40), dirty },
        idempotency_key: "start-child",
      }),
    );
    const decision = value(
      await stub.logDecision(ACME, { task_id: child.task_id, category: "architecture", question: "Q", chosen: "A", reasoning: "R" }),
    );
    const issue = value(
      await stub.logIssue(ACME, { task_id: child.task_id, type: "other", description: "D", resolution: "R", requires_human_review: true }),
    );
    for (const message of ["one", "two", "three"]) value(await stub.logMilestone(ACME, { task_id: child.task_id, message }));
    value(await stub.logDecision(ACME, { task_id: parent.task_id, category: "trade_off", question: "Q2", chosen: "B", reasoning: "R2" }));
    value(await stub.addFeedback(ACME, { target: "decision", target_id: decision.id, verdict: "comment", body: "Why A?", ...ON_PAGE }));
    value(await stub.addFeedback(ACME, { target: "issue", target_id: issue.id, verdict: "approved", body: "Fine", ...ON_PAGE }));
    const logsBefore = await readLogs(stub);
    // A completed task's files as the code before the last migration wrote them: a row each, in
    // path order, with every mark (long paths: more than one page of files once migrated).
    const rowsBefore = await runInDurableObject(stub, async (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE tasks SET status = 'success', completed_at = started_at + 1000, duration_seconds = 1, outcome = ?, files_changed = ?, verification = ?, files_count = ?, files_listed = 10 WHERE id = ?",
        JSON.stringify({ summary: "s" }),
        json?.files_changed ?? null,
        json?.verification ?? null,
        FILES,
        child.task_id,
      );
      state.storage.sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${FILES - 1})
        INSERT INTO file_changes (task_id, ord, path, status, before_mode, before_blob, after_mode, after_blob, committed, in_scope,
          renamed_to, lines_added, lines_removed, lines_binary, agent_edit, lines_agent, lines_others, lines_not_observed, line_ranges)
        SELECT ?, i, printf('%s/f%05d-%s', CASE i % 2 WHEN 0 THEN 'keep' ELSE 'other' END, i, replace(hex(zeroblob(90)), '00', 'x')),
          CASE i % 3 WHEN 0 THEN 'A' WHEN 1 THEN 'M' ELSE 'D' END,
          CASE i % 3 WHEN 0 THEN NULL ELSE '100644' END, CASE i % 3 WHEN 0 THEN NULL ELSE printf('%040d', i) END,
          CASE i % 3 WHEN 2 THEN NULL ELSE '100644' END, CASE i % 3 WHEN 2 THEN NULL ELSE printf('%040d', i + 1) END,
          i % 4 != 0, i % 2 = 0, CASE i WHEN 5 THEN 'moved/to.txt' END,
          CASE WHEN i % 7 = 0 THEN NULL ELSE i END, CASE WHEN i % 7 = 0 THEN NULL ELSE 1 END, CASE WHEN i % 7 = 0 THEN NULL ELSE 0 END,
          CASE WHEN i % 5 = 0 THEN NULL ELSE i % 2 END, CASE WHEN i % 3 = 0 THEN i END, CASE WHEN i % 3 = 0 THEN 0 END,
          CASE WHEN i % 3 = 0 THEN 1 END,
          CASE WHEN i % 11 = 0 THEN json_object('ranges', json_array(json_array(1, i, 'agent', 'h' || i))) END
        FROM n`,
        child.task_id,
      );
      return storedRows(state.storage.sql);
    });
    expect(rowsBefore.files).toHaveLength(FILES);
    expect(rowsBefore.milestones).toHaveLength(3);
    expect(rowsBefore.snapshotEntries).toHaveLength(1);
    expect(rowsBefore.idempotency).toHaveLength(1);

    // The object starts again on the newer code: the last migration runs.
    const after = await runInDurableObject(stub, async (_instance, state) => {
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA);
      return {
        schema: describeSchema(state.storage.sql),
        rows: storedRows(state.storage.sql),
        pages: state.storage.sql.exec("SELECT first_ord, last_ord FROM file_pages ORDER BY first_ord").toArray(),
      };
    });
    expect(after.schema.versions.map((v) => v.version).sort()).toEqual([LAST - 1, LAST]);
    // Every stored value as it was, read through the same columns.
    expect(after.rows).toEqual(rowsBefore);
    // Pages that follow each other, more than one.
    expect(after.pages.length).toBeGreaterThan(1);
    expect(after.pages.at(-1)).toMatchObject({ last_ord: FILES - 1 });
    // What readers get: the logs and events as before; every file list, paged, as the rows say.
    expect(await readLogs(stub)).toEqual(logsBefore);
    const files = rowsBefore.files as unknown as {
      path: string;
      status: string;
      renamed_to: string | null;
      in_scope: number;
      line_ranges: string | null;
    }[];
    const lists = Object.fromEntries(
      await Promise.all(FILE_LISTS.map(async (list) => [list, await wholeList(stub, child.task_id, list, 97)])),
    );
    expect(lists.added).toEqual(files.filter((f) => f.status === "A").map((f) => f.path));
    expect(lists.deleted).toEqual(files.filter((f) => f.status === "D").map((f) => f.path));
    expect(lists.unexpected_files).toEqual(files.filter((f) => f.in_scope === 0).map((f) => f.path));
    expect(lists.renamed).toEqual([{ from: files[5]?.path, to: "moved/to.txt" }]);
    expect((lists.line_ranges as { path: string }[]).map((r) => r.path)).toEqual(
      files.filter((f) => f.line_ranges !== null).map((f) => f.path),
    );
    // The task's view lists its first files; a window of its files page crosses a page of rows.
    const view = value(await stub.readTask(ACME, child.task_id));
    expect(view.files_changed?.more).toBe(FILES - 10);
    const window = value(await stub.readTask(ACME, child.task_id, 990));
    const shown = [
      ...(window.files_changed?.added ?? []),
      ...(window.files_changed?.modified ?? []),
      ...(window.files_changed?.deleted ?? []),
    ];
    expect(shown.sort()).toEqual(
      files
        .slice(990, 990 + shown.length)
        .map((f) => f.path)
        .sort(),
    );
    expect(shown.length).toBeGreaterThan(0);

    // And it keeps working: a log on the migrated tables, feedback on an entry found by its id.
    value(await stub.logMilestone(ACME, { task_id: parent.task_id, message: "after" }));
    value(await stub.addFeedback(ACME, { target: "decision", target_id: decision.id, verdict: "approved", body: "OK", ...ON_PAGE }));
    const whole = value(await readWhole(stub, ACME, true, true));
    expect(whole.milestones.map((m) => m.message)).toEqual(["one", "two", "three", "after"]);
    expect(whole.totals).toMatchObject({ decisions: 2, issues: 1 });
  });
});
