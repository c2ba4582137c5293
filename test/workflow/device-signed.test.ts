/**
 * Where device-signed payloads are kept (workflow/device-signed): one of one part on its event's
 * row, a larger one in parts of its own, those kept before v25 where they were; the export's pages
 * read them all in the order they were kept.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { meter } from "../../src/meter";
import { LazyTables } from "../../src/storage/lazy-tables";
import { migrate } from "../../src/storage/migrations";
import { sqlFor } from "../../src/storage/sql";
import { DeviceSignedRecords } from "../../src/workflow/device-signed";
import { WORKFLOW_LAZY_TABLES, WORKFLOW_MIGRATIONS, WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW } from "../../src/workflow/workflow-schema";
import { stubFor } from "./rpc";

/** Longer than one part (512 Ki UTF-16 units): kept as rows. */
const big = (c: string) => `{"big":"${c.repeat(600 * 1024)}"}`;

/** Every payload through the pages, joined from their parts. */
function allPayloads(records: DeviceSignedRecords, throughSeq: number): { payloads: string[]; pages: number } {
  const payloads: string[] = [];
  let after = 0;
  let pages = 0;
  for (;;) {
    const page = records.page(after, throughSeq);
    pages++;
    for (const part of page.parts) {
      if (part.first) payloads.push(part.text);
      else payloads[payloads.length - 1] += part.text;
    }
    if (page.next === null) return { payloads, pages };
    after = page.next;
  }
}

function insertEvent(sql: SqlStorage, seq: number, signed?: string) {
  if (signed === undefined)
    sql.exec("INSERT INTO events (seq, at, type, task_id, data) VALUES (?, ?, 'task.updated', 'tk_a', '{}')", seq, seq);
  else
    sql.exec("INSERT INTO events (seq, at, type, task_id, data, signed) VALUES (?, ?, 'task.updated', 'tk_a', '{}', ?)", seq, seq, signed);
}

describe("device-signed payloads", () => {
  it("keep one of one part on its event's row and a larger one in parts, read back whole and in order", async () => {
    const result = await runInDurableObject(stubFor(newWorkflowId()), async (_instance, state) => {
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW);
      const tables = new LazyTables(state.storage, "workflow", WORKFLOW_LAZY_TABLES);
      const records = new DeviceSignedRecords(sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }), tables);
      const sql = state.storage.sql;
      sql.exec("INSERT INTO tasks (id, name, goal, snapshot_type, started_at) VALUES ('tk_a', 'A', 'g', 'none', 1)");
      insertEvent(sql, 1, '{"n":1}');
      const small = records.page(0, 10);
      const before = tables.has("device_signed");
      insertEvent(sql, 2);
      records.store(2, "tk_a", big("b"));
      insertEvent(sql, 3, '{"n":3}');
      records.store(3, "tk_a", big("c"));
      insertEvent(sql, 4, '{"n":4}');
      return {
        small,
        before,
        rows: sql.exec("SELECT seq, part FROM device_signed ORDER BY rowid").toArray(),
        whole: allPayloads(records, 10),
        throughTwo: allPayloads(records, 2).payloads,
      };
    });
    // One small payload: on its event's row, no table of rows created for it.
    expect(result.small).toEqual({ parts: [{ first: true, text: '{"n":1}' }], next: null });
    expect(result.before).toBe(false);
    expect(result.rows).toEqual([
      { seq: 2, part: 0 },
      { seq: 2, part: 1 },
      { seq: 3, part: 0 },
      { seq: 3, part: 1 },
    ]);
    expect(result.whole.payloads).toEqual(['{"n":1}', big("b"), '{"n":3}', big("c"), '{"n":4}']);
    expect(result.whole.pages).toBeGreaterThan(1);
    expect(result.throughTwo).toEqual(['{"n":1}', big("b")]);
  });

  it("read the payloads kept before v25 as rows in the order they were kept", async () => {
    const payloads = await runInDurableObject(stubFor(newWorkflowId()), async (_instance, state) => {
      const sql = state.storage.sql;
      migrate(
        state.storage,
        WORKFLOW_MIGRATIONS.filter((m) => m.version < 25),
        "workflow",
      );
      sql.exec("INSERT INTO tasks (id, name, goal, snapshot_type, started_at) VALUES ('tk_a', 'A', 'g', 'none', 1)");
      for (const seq of [1, 2, 3])
        sql.exec("INSERT INTO events (seq, at, type, task_id, data) VALUES (?, ?, 'task.updated', 'tk_a', '{}')", seq, seq);
      sql.exec(`INSERT INTO device_signed (seq, task_id, part, text) VALUES (1, 'tk_a', 0, '{"old":1}'), (3, 'tk_a', 0, '{"old":3,'),
        (3, 'tk_a', 1, '"more":true}')`);
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW);
      const records = new DeviceSignedRecords(
        sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }),
        new LazyTables(state.storage, "workflow", WORKFLOW_LAZY_TABLES),
      );
      // A payload kept after the migration, on its event's row.
      sql.exec("INSERT INTO events (seq, at, type, task_id, data, signed) VALUES (4, 4, 'task.updated', 'tk_a', '{}', '{\"new\":4}')");
      return allPayloads(records, 10).payloads;
    });
    expect(payloads).toEqual(['{"old":1}', '{"old":3,"more":true}', '{"new":4}']);
  });

  it("read a page of events a page, not every event after the cursor, once the table of parts exists", async () => {
    const events = 5 * LIMITS.READ_PAGE_ITEMS;
    const result = await runInDurableObject(stubFor(newWorkflowId()), async (_instance, state) => {
      const sql = state.storage.sql;
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW);
      const tables = new LazyTables(state.storage, "workflow", WORKFLOW_LAZY_TABLES);
      const records = new DeviceSignedRecords(sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }), tables);
      sql.exec("INSERT INTO tasks (id, name, goal, snapshot_type, started_at) VALUES ('tk_a', 'A', 'g', 'none', 1)");
      const expected: string[] = [];
      for (let seq = 1; seq <= events; seq++) {
        // Every event keeps a payload on its row; every 300th also a large one in parts (two rows).
        insertEvent(sql, seq, `{"n":${seq}}`);
        expected.push(`{"n":${seq}}`);
        if (seq % 300 === 0) {
          records.store(seq, "tk_a", big(String.fromCharCode(97 + ((seq / 300) % 26))));
          expected.push(big(String.fromCharCode(97 + ((seq / 300) % 26))));
        }
      }
      const wasOn = meter.on;
      meter.on = true;
      const readPerPage: number[] = [];
      const payloads: string[] = [];
      let after = 0;
      try {
        for (;;) {
          const before = meter.read().objects.workflow.rows_read;
          const page = records.page(after, events);
          readPerPage.push(meter.read().objects.workflow.rows_read - before);
          for (const part of page.parts) {
            if (part.first) payloads.push(part.text);
            else payloads[payloads.length - 1] += part.text;
          }
          if (page.next === null) break;
          after = page.next;
        }
      } finally {
        meter.on = wasOn;
      }
      return { same: JSON.stringify(payloads) === JSON.stringify(expected), count: payloads.length, readPerPage };
    });
    expect(result.count).toBe(events + 3);
    expect(result.same).toBe(true);
    // A page reads what a page holds, whatever is left after it: SQLite counts each row its sorts
    // and the page's texts pass too, about nine rows per item at most. Read before by every page:
    // every event after the cursor (6,632 rows for the first of these five pages, 1,844 for the fifth).
    const full = result.readPerPage.slice(0, -1);
    expect(full).toHaveLength(5);
    expect(Math.max(...full)).toBeLessThan(10 * (LIMITS.READ_PAGE_ITEMS + 2));
    expect(Math.max(...full) / Math.min(...full)).toBeLessThan(1.2);
  });
});
