/**
 * The workflow's set of changed paths (workflow/changed-paths): a small set packed in one row of
 * hashes, a larger one a row per path past it, exact in what it counts as new either way, with
 * paths recorded before v24 in their own rows.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { LazyTables } from "../../src/storage/lazy-tables";
import { migrate } from "../../src/storage/migrations";
import { sqlFor } from "../../src/storage/sql";
import { ChangedPaths, pathHash } from "../../src/workflow/changed-paths";
import { WORKFLOW_LAZY_TABLES, WORKFLOW_MIGRATIONS, WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW } from "../../src/workflow/workflow-schema";
import { stubFor } from "./rpc";

const path = (n: number) => `src/module-${n % 97}/file-${n}.ts`;

/** Runs `body` in a new workflow object at the current schema, with its set of changed paths. */
function inNewWorkflow<T>(body: (set: ChangedPaths, state: DurableObjectState) => T): Promise<T> {
  return runInDurableObject(stubFor(newWorkflowId()), async (_instance, state) => {
    migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW);
    // The workflow's row, which keeps the packed set (start_workflow writes it).
    state.storage.sql.exec("INSERT INTO workflow (id, account, name, plan, created_at, updated_at) VALUES ('wf', 'acme', 'W', '[]', 0, 0)");
    return body(
      new ChangedPaths(
        sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }),
        new LazyTables(state.storage, "workflow", WORKFLOW_LAZY_TABLES),
      ),
      state,
    );
  });
}

describe("the changed paths", () => {
  it("count each path once, whatever the order and repeats, packed and past the packed row", async () => {
    const result = await inNewWorkflow((set, state) => {
      const counts: number[] = [];
      // 30,000 distinct paths in tasks of 1,000, each task repeating 200 paths of the one before.
      for (let task = 0; task < 30; task++) {
        const own = Array.from({ length: 1000 }, (_, n) => path(task * 1000 + n));
        const again = task === 0 ? [] : Array.from({ length: 200 }, (_, n) => path((task - 1) * 1000 + n));
        counts.push(set.add([...again, ...own, own[0] ?? ""]));
      }
      const everyPathAgain = set.add(Array.from({ length: 30_000 }, (_, n) => path(n)));
      const packed = state.storage.sql.exec("SELECT length(path_hashes) AS chars FROM workflow").toArray();
      const rows = state.storage.sql.exec("SELECT count(*) AS n FROM changed_paths").one().n;
      return { counts, everyPathAgain, packed, rows };
    });
    expect(result.counts).toEqual(Array.from({ length: 30 }, () => 1000));
    expect(result.everyPathAgain).toBe(0);
    // The first two tasks' 2,000 paths packed in the workflow row's hashes; every later path a row of its own.
    expect(result.packed).toEqual([{ chars: 2000 * 32 }]);
    expect(result.rows).toBe(28_000);
  });

  it("write one row for a completion while the set is small, and bounded bytes past it", async () => {
    const written = await inNewWorkflow((set, state) => {
      const sizes: number[] = [];
      for (let task = 0; task < 40; task++) {
        set.add(Array.from({ length: 100 }, (_, n) => path(task * 100 + n)));
        sizes.push(Number(state.storage.sql.exec("SELECT coalesce(length(path_hashes), 0) AS n FROM workflow").one().n));
      }
      return sizes;
    });
    // The packed row grows to 2,000 hashes (64 KB) and no further, however many tasks follow.
    expect(written.at(19)).toBe(2000 * 32);
    expect(written.at(-1)).toBe(2000 * 32);
  });

  it("take paths recorded before v24 (one row each) as already changed", async () => {
    const added = await runInDurableObject(stubFor(newWorkflowId()), async (_instance, state) => {
      // Replayed, as an object from before v24 was: its changed_paths table exists (a new object creates it past the packed set).
      migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", undefined, WORKFLOW_VERSION_ROW);
      state.storage.sql.exec(
        "INSERT INTO workflow (id, account, name, plan, created_at, updated_at) VALUES ('wf', 'acme', 'W', '[]', 0, 0)",
      );
      state.storage.sql.exec("INSERT INTO changed_paths (path) VALUES ('old/a.ts'), ('old/b.ts')");
      const set = new ChangedPaths(
        sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }),
        new LazyTables(state.storage, "workflow", WORKFLOW_LAZY_TABLES),
      );
      return [set.add(["old/a.ts", "new/c.ts"]), set.add(["old/b.ts", "new/c.ts", "new/d.ts"])];
    });
    expect(added).toEqual([1, 1]);
  });

  it("move a set of one bucket to the workflow row (v30) and keep a set split in buckets where it was, each path still counted once", async () => {
    const hashes = (from: number, to: number) => Array.from({ length: to - from }, (_, n) => pathHash(path(from + n))).join("");
    const migrated = async (buckets: string[]) =>
      runInDurableObject(stubFor(newWorkflowId()), async (_instance, state) => {
        const sql = state.storage.sql;
        migrate(
          state.storage,
          WORKFLOW_MIGRATIONS.filter((m) => m.version < 30),
          "workflow",
        );
        sql.exec("INSERT INTO workflow (id, account, name, plan, created_at, updated_at) VALUES ('wf', 'acme', 'W', '[]', 0, 0)");
        for (const [bucket, text] of buckets.entries())
          sql.exec("INSERT INTO changed_path_sets VALUES (?, ?, ?)", bucket, text.length / 32, text);
        migrate(state.storage, WORKFLOW_MIGRATIONS, "workflow", undefined, WORKFLOW_VERSION_ROW);
        const set = new ChangedPaths(
          sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }),
          new LazyTables(state.storage, "workflow", WORKFLOW_LAZY_TABLES),
        );
        // Paths 0-99 were recorded before; 100-149 are new.
        const added = set.add(Array.from({ length: 150 }, (_, n) => path(n)));
        return {
          added,
          again: set.add(Array.from({ length: 150 }, (_, n) => path(n))),
          row: sql.exec("SELECT length(path_hashes) AS chars FROM workflow").one().chars,
          buckets: sql.exec("SELECT bucket, n FROM changed_path_sets ORDER BY bucket").toArray(),
        };
      });
    expect(await migrated([hashes(0, 100)])).toEqual({ added: 50, again: 0, row: 150 * 32, buckets: [] });
    expect(await migrated([hashes(0, 60), hashes(60, 100)])).toEqual({
      added: 50,
      again: 0,
      row: 50 * 32,
      buckets: [
        { bucket: 0, n: 60 },
        { bucket: 1, n: 40 },
      ],
    });
  });

  it("hash 200,000 distinct paths to 200,000 distinct values", () => {
    const hashes = new Set<string>();
    for (let n = 0; n < 200_000; n++) hashes.add(pathHash(`${path(n)}/${"é".repeat(n % 5)}`));
    expect(hashes.size).toBe(200_000);
    // SHA-256's first 128 bits (its published value for "a"): no agent picks two names that count once.
    expect(pathHash("a")).toBe("ca978112ca1bbdcafac231b39a23dc4d");
  });
});
