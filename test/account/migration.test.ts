import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { ACCOUNT_MIGRATIONS } from "../../src/account/account-schema";
import { bucketStart, dayNumber, dayOf } from "../../src/domain/insight-buckets";
import type { InsightTaskFact } from "../../src/domain/insight-facts";
import { addSums, type Sums, zeroSums } from "../../src/domain/insight-measures";
import { meter } from "../../src/meter";
import { migrate } from "../../src/storage/migrations";
import { workflowSummary } from "./fixtures";

/**
 * An account stored by the schema before the path index was packed (v17) keeps everything across
 * the migration: every path of every task is found again with its status, task and time (a task
 * with more paths than one packed part holds included), the workflows' summaries and their path
 * counts, the memory documents and the Insights rows, now in tables without a rowid; and through
 * v19, each memory document whole in its one FTS entry.
 */
const PACKED_MIGRATION = 18;
const minute = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 60_000).toISOString();

/** The object as a deployment at `version` left it: every table dropped, then the migrations up to `version`. */
function asDeployedAt(storage: DurableObjectStorage, version: number): void {
  const sql = storage.sql;
  const tables = sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'")
    .toArray()
    .map((row) => row.name)
    .filter((name) => !name.startsWith("memory_fts_"));
  for (const name of tables) sql.exec(`DROP TABLE IF EXISTS "${name}"`);
  migrate(
    storage,
    ACCOUNT_MIGRATIONS.filter((m) => m.version <= version),
    "account",
  );
}

describe("the account schema migration that packs the path index", () => {
  it("moves every path, summary, document and Insights row of a v17 account", async () => {
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("migration-packed-paths"));
    await stub.recordWorkflow("migration-packed-paths", workflowSummary("wf_seed", "Seed"));
    const big = Array.from({ length: 450 }, (_, i) => `src/many/f${String(i).padStart(3, "0")}.ts`);
    const odd = ["src/ünï cödé.ts", 'quote"d\\back.ts', "/lib/caf%E9.ts", "line\nbreak.txt"];
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      asDeployedAt(state.storage, PACKED_MIGRATION - 1);
      const insertWorkflow = (id: string, paths: number) =>
        sql.exec(
          `INSERT INTO workflows (id, name, name_key, status, created_at, updated_at, open_tasks, tasks, reviews_needed, paths_indexed)
           VALUES (?, ?, lower(?), 'active', ?, ?, 0, 2, 0, ?)`,
          id,
          id,
          id,
          minute(0),
          minute(5),
          paths,
        );
      insertWorkflow("wf_old_a", big.length + odd.length);
      insertWorkflow("wf_old_b", 1);
      for (const path of big) sql.exec("INSERT INTO workflow_paths VALUES (?, 'wf_old_a', 'tk_big', 'Big task', 'A', ?)", path, minute(1));
      for (const path of odd) sql.exec("INSERT INTO workflow_paths VALUES (?, 'wf_old_a', 'tk_odd', 'Odd names', 'M', ?)", path, minute(2));
      sql.exec("INSERT INTO workflow_paths VALUES ('src/many/f001.ts', 'wf_old_b', 'tk_b', 'Other', 'D', ?)", minute(3));
      sql.exec(
        "INSERT INTO memory_docs (entity_id, kind, workflow_id, task_id, text, at) VALUES ('dc_old', 'decision', 'wf_old_a', 'tk_odd', 'Zeppelin codec?', ?)",
        minute(2),
      );
      const doc = sql.exec<{ rowid: number }>("SELECT rowid FROM memory_docs WHERE entity_id = 'dc_old'").one().rowid;
      sql.exec("INSERT INTO memory_fts (rowid, title, body, context) VALUES (?, 'Zeppelin codec?', 'brotli', '')", doc);
      sql.exec(
        `INSERT INTO insight_tasks VALUES ('tk_big', 'wf_old_a', '2026-01-01', 'claude', 'opus', 'fp1', ?, '{"task_id":"tk_big"}', '[1,2]')`,
        Date.parse(minute(1)),
      );
      sql.exec("INSERT INTO insight_buckets VALUES ('day', '2026-01-01', 'claude', 'opus', 'fp1', '[1,2]')");
      sql.exec("INSERT INTO insight_groups VALUES ('claude', 'opus', 'fp1')");
      sql.exec("INSERT INTO insight_repositories VALUES ('fp1', 'git@example.com:a/b.git', ?)", minute(1));
      // The deployment with the packed index starts.
      migrate(state.storage, ACCOUNT_MIGRATIONS, "account");
      const shapes = sql
        .exec<{ name: string; sql: string }>(
          "SELECT name, sql FROM sqlite_master WHERE name IN ('insight_tasks', 'insight_buckets', 'insight_groups', 'insight_repositories', 'path_sets')",
        )
        .toArray();
      expect(shapes).toHaveLength(5);
      for (const shape of shapes) expect(shape.sql, shape.name).toContain("WITHOUT ROWID");
      expect(
        sql
          .exec("SELECT name FROM sqlite_master WHERE name IN ('workflow_paths', 'workflows_updated', 'memory_docs_kind', 'memory_docs')")
          .toArray(),
      ).toEqual([]);
      expect(sql.exec("SELECT count(*) AS n FROM path_sets WHERE task_id = 'tk_big'").one().n).toBe(3);
      expect(sql.exec("SELECT * FROM insight_tasks").toArray()).toHaveLength(1);
      expect(sql.exec("SELECT sums FROM insight_buckets").toArray()).toEqual([{ sums: "[1,2]" }]);
      expect(sql.exec("SELECT remote FROM insight_repositories").toArray()).toEqual([{ remote: "git@example.com:a/b.git" }]);
    });

    for (const path of [...big, ...odd]) {
      const hits = (await stub.searchPaths(path, false, 10)).hits;
      const expected = [{ path, workflow_id: "wf_old_a", ...(odd.includes(path) ? ODD : BIG) }];
      if (path === "src/many/f001.ts")
        expected.unshift({ path, workflow_id: "wf_old_b", task_id: "tk_b", task_name: "Other", status: "D", at: minute(3) });
      expect(hits, path).toEqual(expected);
    }
    // A prefix: newest first (the other workflow's later deletion), then the big task's paths in path order.
    const under = (await stub.searchPaths("src/many/", true, 20)).hits;
    expect(under.map((h) => `${h.workflow_id} ${h.path}`)).toEqual([
      "wf_old_b src/many/f001.ts",
      ...big.slice(0, 19).map((path) => `wf_old_a ${path}`),
    ]);
    // The document whole (v19 keeps it in its FTS entry), found by its text and by its id: pushed again, it is not added twice.
    const zeppelin = {
      kind: "decision" as const,
      id: "dc_old",
      workflow_id: "wf_old_a",
      task_id: "tk_odd",
      text: "Zeppelin codec?",
      at: minute(2),
    };
    expect((await stub.search("zeppelin", 5)).results).toEqual([zeppelin]);
    const again = { ...zeppelin, title: "Zeppelin codec?", body: "brotli zstd", context: "" };
    await stub.recordWorkflow("migration-packed-paths", workflowSummary("wf_old_a", "wf_old_a"), { documents: [again] });
    expect((await stub.search("zstd", 5)).results).toEqual([zeppelin]);
    expect((await stub.search("zeppelin", 5)).results).toHaveLength(1);
    // The summary's path count was kept: pushing the same paths again adds none, and the summary still updates.
    await stub.recordWorkflow(
      "migration-packed-paths",
      { ...workflowSummary("wf_old_a", "wf_old_a"), tasks: 3 },
      {
        paths: [{ path: big[0] as string, task_id: "tk_big", task_name: "Big task", status: "A", at: minute(1) }],
      },
    );
    await runInDurableObject(stub, (_instance, state) => {
      expect(state.storage.sql.exec("SELECT paths_indexed, tasks FROM workflows WHERE id = 'wf_old_a'").one()).toEqual({
        paths_indexed: big.length + odd.length,
        tasks: 3,
      });
    });
  });
});

const BIG = { task_id: "tk_big", task_name: "Big task", status: "A", at: minute(1) };
const ODD = { task_id: "tk_odd", task_name: "Odd names", status: "M", at: minute(2) };

describe("the account schema migration that drops the week buckets (v20)", () => {
  it("keeps every day and month bucket and task row of a v19 account, drops its weeks, and its Insights stay its tasks' own", async () => {
    const name = "migration-no-weeks";
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(name));
    const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString();
    const tasks = Array.from(
      { length: 90 },
      (_, i): InsightTaskFact => ({
        task_id: `tk_${String(i).padStart(20, "w")}_wwwwwwww`,
        workflow_id: "wf_weeks",
        completed_at: day(i),
        agent: "claude-code",
        model: i % 2 === 0 ? "opus" : "sonnet",
        repository: null,
        status: "success",
        files: "signed",
        tests: i % 3 === 0 ? "failed" : "passed",
        outside_areas: false,
        areas_declared: true,
        lines: { agent: 4, others: 0, not_observed: 0 },
        usage: null,
      }),
    );
    const kept = await runInDurableObject(stub, async (instance: AccountObject, state) => {
      const sql = state.storage.sql;
      asDeployedAt(state.storage, 19);
      await instance.recordWorkflow(
        name,
        { ...workflowSummary("wf_weeks", "Weeks"), repository: { fingerprint: "f".repeat(64), remote: "github.com/a/b", branch: "main" } },
        { insights: { tasks } },
      );
      await instance.recordWorkflow(name, { ...workflowSummary("wf_other", "Other"), tasks: 3, bytes_stored: 4096, status: "success" });
      sql.exec("UPDATE workflows SET share_created_at = '2026-01-02T00:00:00.000Z' WHERE id = 'wf_other'");
      // A week bucket beside the day and month ones, the sums of its days, as v19 wrote them.
      const weeks = new Map<string, { key: string[]; sums: Sums }>();
      for (const row of sql.exec<{ start: string; agent: string; model: string; repository: string; sums: string }>(
        "SELECT start, agent, model, repository, sums FROM insight_buckets WHERE kind = 'day'",
      )) {
        const start = dayOf(bucketStart(dayNumber(row.start), "week"));
        const id = [start, row.agent, row.model, row.repository].join("\u0000");
        const week = weeks.get(id) ?? { key: [start, row.agent, row.model, row.repository], sums: zeroSums() };
        addSums(week.sums, JSON.parse(row.sums) as Sums);
        weeks.set(id, week);
      }
      for (const { key, sums } of weeks.values())
        sql.exec("INSERT INTO insight_buckets VALUES ('week', ?, ?, ?, ?, ?)", ...key, JSON.stringify(sums));
      const rows = (query: string) => sql.exec(query).toArray();
      const before = {
        others: rows("SELECT * FROM insight_buckets WHERE kind != 'week' ORDER BY kind, start, model"),
        tasks: rows("SELECT * FROM insight_tasks ORDER BY task_id"),
        workflows: rows("SELECT * FROM workflows ORDER BY id"),
      };
      expect(sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'workflows'").one().sql).not.toContain("WITHOUT ROWID");
      expect(rows("SELECT * FROM insight_buckets WHERE kind = 'week'").length).toBeGreaterThan(10);
      migrate(state.storage, ACCOUNT_MIGRATIONS, "account");
      return {
        before,
        after: {
          others: rows("SELECT * FROM insight_buckets WHERE kind != 'week' ORDER BY kind, start, model"),
          tasks: rows("SELECT * FROM insight_tasks ORDER BY task_id"),
          workflows: rows("SELECT * FROM workflows ORDER BY id"),
        },
        shape: sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'workflows'").one().sql,
        indexes: rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'workflows' AND sql IS NOT NULL"),
        weeks: rows("SELECT * FROM insight_buckets WHERE kind = 'week'").length,
        version: sql.exec<{ v: number }>("SELECT max(version) AS v FROM schema_version").one().v,
      };
    });
    expect(kept.weeks).toBe(0);
    expect(kept.version).toBe(ACCOUNT_MIGRATIONS.at(-1)?.version);
    expect(kept.after).toEqual(kept.before);
    expect(kept.before.workflows).toHaveLength(2);
    expect(kept.shape).toContain("WITHOUT ROWID");
    expect(kept.indexes).toEqual([{ name: "workflows_name_key" }]);
    // Resume by name and the quota's usage still read the summaries.
    const prepared = await stub.prepareWorkflow({
      name: "weeks",
      fingerprint: "f".repeat(64),
      origin: "https://example.com",
      resume: true,
    });
    expect(prepared.candidate?.workflow_id).toBe("wf_weeks");
    expect(prepared.usage).toEqual({ workflows: 2, bytes_stored: 4096 });
    // 90 days: a week trend, each point's tasks read from its days.
    const insights = await stub.insights({
      from: day(0).slice(0, 10),
      to: day(89).slice(0, 10),
      by: ["model"],
      filters: {},
      trend: "tests_passed",
      compare: null,
    });
    expect(insights.trend.bucket).toBe("week");
    expect(insights.total.tasks).toBe(90);
    for (const point of insights.trend.points)
      insights.groups.forEach((group, g) => {
        const inPoint = tasks.filter(
          (t) => t.model === group.label && t.completed_at.slice(0, 10) >= point.start && t.completed_at.slice(0, 10) <= point.end,
        );
        expect(point.values[g]?.rests_on, `${point.start} ${group.label}`).toBe(inPoint.length);
      });
  });
});

describe("the account schema migration that keeps only open workflows in the resume index (v21)", () => {
  it("keeps every summary of a v20 account, resumes the same workflows, and a completion writes one row", async () => {
    const name = "migration-open-resume-index";
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName(name));
    const fingerprint = "e".repeat(64);
    const repository = { fingerprint, remote: "github.com/a/b", branch: "main" };
    const summary = (id: string, workflowName: string, status: "active" | "success", minutes: number) => ({
      ...workflowSummary(id, workflowName, status),
      repository,
      created_at: minute(0),
      updated_at: minute(minutes),
      tasks: 2,
    });
    const resume = (workflowName: string) =>
      stub.prepareWorkflow({ name: workflowName, fingerprint, origin: "https://waymark.example", resume: true });
    const result = await runInDurableObject(stub, async (instance: AccountObject, state) => {
      const sql = state.storage.sql;
      const rows = (query: string) => sql.exec(query).toArray();
      asDeployedAt(state.storage, 20);
      // One name done twice and open once, another only done, a third open: as v20 stored them.
      await instance.recordWorkflow(name, summary("wf_daily_1", "Daily", "success", 1));
      await instance.recordWorkflow(name, summary("wf_daily_2", "Daily", "success", 2));
      await instance.recordWorkflow(name, summary("wf_daily_3", " daily ", "active", 3));
      await instance.recordWorkflow(name, summary("wf_done", "Done", "success", 4));
      await instance.recordWorkflow(name, summary("wf_open", "Open", "active", 5));
      const before = rows("SELECT * FROM workflows ORDER BY id");
      migrate(state.storage, ACCOUNT_MIGRATIONS, "account");
      return {
        before,
        after: rows("SELECT * FROM workflows ORDER BY id"),
        index: sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'workflows_name_key'").one().sql,
        plan: rows(
          "EXPLAIN QUERY PLAN SELECT * FROM workflows WHERE name_key = 'daily' AND status = 'active' ORDER BY updated_at DESC LIMIT 1",
        ).map((row) => String(row.detail)),
      };
    });
    expect(result.after).toEqual(result.before);
    expect(result.after).toHaveLength(5);
    expect(result.index).toContain("WHERE status = 'active'");
    expect(result.plan.join(" ")).toContain("USING INDEX workflows_name_key");
    expect((await resume("DAILY")).candidate?.workflow_id).toBe("wf_daily_3");
    expect((await resume("Open")).candidate?.workflow_id).toBe("wf_open");
    expect((await resume("Done")).candidate).toBeNull();
    // A completion takes the workflow out of the index: one row written (two when the entry moved within (name_key, status)).
    const wasOn = meter.on;
    meter.on = true;
    try {
      const before = meter.read().objects.account.rows_written;
      await stub.recordWorkflow(name, summary("wf_open", "Open", "success", 6));
      expect(meter.read().objects.account.rows_written - before).toBe(1);
      // A new open workflow: its row and its entry.
      const beforeNew = meter.read().objects.account.rows_written;
      await stub.recordWorkflow(name, summary("wf_open_2", "Open", "active", 7));
      expect(meter.read().objects.account.rows_written - beforeNew).toBe(2);
    } finally {
      meter.on = wasOn;
    }
    expect((await resume("open")).candidate?.workflow_id).toBe("wf_open_2");
    expect((await stub.listWorkflows({ limit: 10 })).find((w) => w.id === "wf_open")?.status).toBe("success");
  });
});
