/**
 * The workflow object's schema: a new workflow gets the whole current schema in one script
 * (WORKFLOW_SCHEMA) while existing objects replay the migrations, and both end the same; data
 * written at the schema before the last migration reads back the same after it.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { migrate } from "../../src/storage/migrations";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { WORKFLOW_MIGRATIONS, WORKFLOW_SCHEMA } from "../../src/workflow/workflow-schema";
import { file } from "../domain/fixtures";
import { ON_PAGE } from "../support/worker";
import { readWhole, stubFor, value } from "./rpc";

const ACME = "acme";
const HEAD = "1".repeat(40);
const LAST = WORKFLOW_MIGRATIONS.at(-1)?.version ?? 0;

type Stub = DurableObjectStub<WorkflowObject>;

/**
 * What sqlite_master says of each table, in a form the way it was created does not change: its
 * columns (name, type, not null, default, key), whether it has a rowid, its indexes with their
 * columns, uniqueness and origin, its foreign keys; the rows every new object starts with.
 */
function describeSchema(sql: SqlStorage) {
  const all = <T>(query: string, ...args: string[]) => sql.exec(query, ...args).toArray() as T[];
  const tables = all<{ name: string; sql: string }>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
  );
  return {
    tables: tables.map(({ name, sql: text }) => ({
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
    versions: all("SELECT version FROM schema_version"),
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

/** Everything a reader gets of a workflow: the paged whole with its events and feedback, the resume, a task with its files. */
async function readEverything(stub: Stub, id: string, taskId: string) {
  return {
    whole: value(await readWhole(stub, ACME, true, true)),
    resume: value(await stub.resume(ACME, 10, false)),
    task: value(await stub.readTask(ACME, taskId)),
    files: value(await stub.readFiles(ACME, taskId, "added", null, 100)),
    chain: value(await stub.readHead(ACME, true)).chain,
    id,
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
    // Written by the object itself, at the older schema.
    value(await stub.startWorkflow(ACME, id, { name: "Old", plan: [{ step: "1", goal: "g" }] }));
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "P", goal: "g", areas: ["keep/**"] }));
    const child = value(
      await stub.startTask(ACME, {
        workflow_id: id,
        parent_task_id: parent.task_id,
        name: "C",
        goal: "g",
        snapshot: { type: "git", head: HEAD, dirty: [] },
      }),
    );
    const decision = value(
      await stub.logDecision(ACME, { task_id: child.task_id, category: "architecture", question: "Q", chosen: "A", reasoning: "R" }),
    );
    const issue = value(
      await stub.logIssue(ACME, { task_id: child.task_id, type: "other", description: "D", resolution: "R", requires_human_review: true }),
    );
    for (const message of ["one", "two", "three"]) value(await stub.logMilestone(ACME, { task_id: child.task_id, message }));
    value(await stub.logDecision(ACME, { task_id: parent.task_id, category: "design", question: "Q2", chosen: "B", reasoning: "R2" }));
    value(
      await stub.completeTask(ACME, {
        task_id: child.task_id,
        status: "success",
        outcome: { summary: "s" },
        changes: {
          type: "git",
          start_head: HEAD,
          head: "2".repeat(40),
          committed: [
            { path: "keep/a.ts", before: null, after: file("a") },
            { path: "other/b.ts", before: file("b0"), after: file("b1") },
          ],
          dirty: [],
        },
      }),
    );
    value(await stub.addFeedback(ACME, { target: "decision", target_id: decision.id, verdict: "comment", body: "Why A?", ...ON_PAGE }));
    value(await stub.addFeedback(ACME, { target: "issue", target_id: issue.id, verdict: "approved", body: "Fine", ...ON_PAGE }));
    const before = await readEverything(stub, id, child.task_id);
    const rowsBefore = await runInDurableObject(stub, async (_instance, state) => ({
      decisions: state.storage.sql.exec("SELECT * FROM decisions ORDER BY created_at, id").toArray(),
      issues: state.storage.sql.exec("SELECT * FROM issues ORDER BY created_at, id").toArray(),
      milestones: state.storage.sql.exec("SELECT * FROM milestones ORDER BY created_at, id").toArray(),
    }));
    expect(rowsBefore.milestones).toHaveLength(3);

    // The object starts again on the newer code: the last migration runs.
    const after = await runInDurableObject(stub, async (_instance, state) => {
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA);
      return {
        schema: describeSchema(state.storage.sql),
        decisions: state.storage.sql.exec("SELECT * FROM decisions ORDER BY created_at, id").toArray(),
        issues: state.storage.sql.exec("SELECT * FROM issues ORDER BY created_at, id").toArray(),
        milestones: state.storage.sql.exec("SELECT * FROM milestones ORDER BY created_at, id").toArray(),
      };
    });
    expect(after.schema.versions.map((v) => v.version).sort()).toEqual([LAST - 1, LAST]);
    expect({ decisions: after.decisions, issues: after.issues, milestones: after.milestones }).toEqual(rowsBefore);
    expect(await readEverything(stub, id, child.task_id)).toEqual(before);

    // And it keeps working: a log on the migrated tables, feedback on an entry found by its id.
    value(await stub.logMilestone(ACME, { task_id: parent.task_id, message: "after" }));
    value(await stub.addFeedback(ACME, { target: "decision", target_id: decision.id, verdict: "approved", body: "OK", ...ON_PAGE }));
    const whole = value(await readWhole(stub, ACME, true, true));
    expect(whole.milestones.map((m) => m.message)).toEqual(["one", "two", "three", "after"]);
    expect(whole.totals).toMatchObject({ decisions: 2, issues: 1 });
  });
});
