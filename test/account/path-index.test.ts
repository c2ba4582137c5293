import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PATH_SETS_PAGE, type PathHit } from "../../src/account/path-index";
import type { PathEntry } from "../../src/domain/path-entries";
import { LIMITS } from "../../src/limits";
import { renderDashboard } from "../../src/pages/dashboard";
import { workflowSummary } from "./fixtures";

/**
 * The path index answers newest first whichever way it reads: a narrow prefix sorts its matches,
 * a broad one walks the recency index. Both must give what sorting every match would.
 */
const minute = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + n * 60_000).toISOString();

describe("prefix search order", () => {
  const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("path-order"));
  const all: PathHit[] = [];

  const record = async (workflowId: string, entries: PathEntry[]) => {
    await stub.recordWorkflow("path-order", workflowSummary(workflowId, workflowId), { paths: entries });
    all.push(...entries.map((e) => ({ ...e, workflow_id: workflowId })));
  };
  const expected = (prefix: string, limit: number) =>
    all
      .filter((h) => h.path.startsWith(prefix))
      .sort((a, b) => (a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
      .slice(0, limit);

  it("a broad prefix (more matches than the dense threshold) and a narrow one both come newest first, ties by path", async () => {
    const broad = 2 * PATH_SETS_PAGE + 200;
    // Old paths under lib/ in a scrambled time order, several per minute; the newest rows are elsewhere.
    const lib = Array.from({ length: broad }, (_, i) => ({
      path: `lib/m${i % 7}/f${i}.ts`,
      task_id: `tk_${i % 9}`,
      task_name: `T${i % 9}`,
      status: "M",
      at: minute((i * 37) % 400),
    }));
    await record("wf_one", lib.slice(0, 700));
    await record("wf_two", lib.slice(700));
    await record("wf_three", [
      ...Array.from({ length: 50 }, (_, i) => ({
        path: `src/new${i}.ts`,
        task_id: "tk_n",
        task_name: "New",
        status: "A",
        at: minute(1000 + i),
      })),
      { path: "lib/latest.ts", task_id: "tk_l", task_name: "Latest", status: "A", at: minute(900) },
      { path: "/lib/caf%E9.ts", task_id: "tk_l", task_name: "Latest", status: "A", at: minute(901) },
    ]);

    const broadHits = (await stub.searchPaths("lib/", true, 20)).hits;
    expect(broadHits.map((h) => `${h.at} ${h.path}`)).toEqual(
      [expected("/lib/", 1)[0], ...expected("lib/", 19)].map((h) => `${h?.at} ${h?.path}`),
    );
    expect(broadHits[0]?.path).toBe("/lib/caf%E9.ts");
    expect(broadHits[1]?.path).toBe("lib/latest.ts");

    const narrow = (await stub.searchPaths("lib/m3/", true, 20)).hits;
    expect(narrow.map((h) => `${h.at} ${h.path}`)).toEqual(expected("lib/m3/", 20).map((h) => `${h.at} ${h.path}`));
    expect(narrow.length).toBe(20);
  });
});

describe("recording paths", () => {
  const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("path-record"));
  const entry = (path: string, status = "M"): PathEntry => ({ path, task_id: "tk_r", task_name: "Record", status, at: minute(1) });

  it("upserts in one batch: a replay does not duplicate, a changed status replaces, odd names survive", async () => {
    const odd = ["src/a.ts", "src/ünï cödé.ts", 'quote"d\\back.ts', "/lib/caf%E9.ts", "emoji 🧾.md"];
    await stub.recordWorkflow("path-record", workflowSummary("wf_rec", "rec"), { paths: odd.map((p) => entry(p)) });
    await stub.recordWorkflow("path-record", workflowSummary("wf_rec", "rec"), { paths: [entry("src/a.ts", "D")] });
    for (const path of odd) {
      const hits = (await stub.searchPaths(path, false, 5)).hits;
      expect(
        hits.map((h) => [h.path, h.status]),
        path,
      ).toEqual([[path, path === "src/a.ts" ? "D" : "M"]]);
    }
  });

  it("stops at PATHS_PER_WORKFLOW per workflow", async () => {
    const many = Array.from({ length: LIMITS.PATHS_PER_WORKFLOW + 50 }, (_, i) => entry(`bulk/f${i}.ts`));
    await stub.recordWorkflow("path-record", workflowSummary("wf_bulk", "bulk"), { paths: many });
    expect((await stub.searchPaths(`bulk/f${LIMITS.PATHS_PER_WORKFLOW - 1}.ts`, false, 5)).hits).toHaveLength(1);
    expect(await stub.searchPaths(`bulk/f${LIMITS.PATHS_PER_WORKFLOW}.ts`, false, 5)).toEqual({ hits: [], searched_all: true });
  });
});

describe("packed sets", () => {
  const setsOf = async (stub: DurableObjectStub<import("../../src/account/account-object").AccountObject>) =>
    runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<{ part: number; paths: string }>("SELECT part, paths FROM path_sets ORDER BY part").toArray(),
    );

  it("one row per task completion; the same paths again write nothing, a later new path is a part of its own", async () => {
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("path-sets"));
    const entries = Array.from({ length: 20 }, (_, i) => ({
      path: `src/f${i}.ts`,
      task_id: "tk_s",
      task_name: "S",
      status: "M",
      at: minute(5),
    }));
    await stub.recordWorkflow("path-sets", workflowSummary("wf_sets", "sets"), { paths: entries });
    const first = await setsOf(stub);
    expect(first).toHaveLength(1);
    // A task.updated event pushes the task's paths again.
    await stub.recordWorkflow("path-sets", workflowSummary("wf_sets", "sets"), { paths: entries });
    expect(await setsOf(stub)).toEqual(first);
    await stub.recordWorkflow("path-sets", workflowSummary("wf_sets", "sets"), {
      paths: [...entries, { path: "src/late.ts", task_id: "tk_s", task_name: "S", status: "A", at: minute(5) }],
    });
    const after = await setsOf(stub);
    expect(after.map((row) => row.part)).toEqual([0, 1]);
    expect(after[0]).toEqual(first[0]);
    expect((await stub.searchPaths("src/late.ts", false, 5)).hits.map((h) => h.status)).toEqual(["A"]);
    expect((await stub.searchPaths("src/", true, 20)).hits[0]?.path).toBe("src/f0.ts");
  });

  it(`reads at most the newest ${LIMITS.PATH_SETS_SCANNED} sets, at that size`, async () => {
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("path-sets-size"));
    const total = LIMITS.PATH_SETS_SCANNED + 100;
    await runInDurableObject(stub, (_instance, state) => {
      // Sets of 20 paths each, set n completed at minute n; each holds one path of its own (`own/n.ts`).
      state.storage.sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         INSERT INTO path_sets (at, workflow_id, task_id, part, task_name, paths)
         SELECT strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), 'wf_size', 'tk_' || i, 0, 'T' || i,
           (SELECT json_group_array(json_array(p, 'M')) FROM (SELECT 'common/module-' || j || '/index.ts' AS p FROM
             (WITH RECURSIVE m(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM m WHERE j + 1 < 19) SELECT j FROM m)
             UNION ALL SELECT 'own/' || i || '.ts'))
         FROM n`,
        total,
      );
    });
    const started = Date.now();
    const miss = await stub.searchPaths("nowhere/at-all.ts", false, 5);
    const missMs = Date.now() - started;
    // Nothing found within the bound is said as such: older completions were not searched.
    expect(miss).toEqual({ hits: [], searched_all: false });
    // The newest set and the oldest one still read are found; older ones are past the bound.
    expect((await stub.searchPaths(`own/${total - 1}.ts`, false, 5)).hits.map((h) => h.task_id)).toEqual([`tk_${total - 1}`]);
    expect((await stub.searchPaths("own/100.ts", false, 5)).hits.map((h) => h.task_id)).toEqual(["tk_100"]);
    expect(await stub.searchPaths("own/99.ts", false, 5)).toEqual({ hits: [], searched_all: false });
    // A broad prefix stops at its first page.
    const broadSearch = await stub.searchPaths("common/", true, 20);
    // Filled by the newest sets: no older one could rank before them.
    expect(broadSearch.searched_all).toBe(true);
    const broad = broadSearch.hits;
    // The newest set's 19 common paths, then the first of the set before it.
    expect(broad.map((h) => h.task_id)).toEqual([...Array.from({ length: 19 }, () => `tk_${total - 1}`), `tk_${total - 2}`]);
    console.log(`path lookup over ${LIMITS.PATH_SETS_SCANNED} sets of 20 paths, no match: ${missMs} ms`);
  });

  it(`reads at most ${LIMITS.PATH_SETS_SCANNED_BYTES / 1024 / 1024} MiB of sets, however long their paths`, async () => {
    const stub = env.ACCOUNT.get(env.ACCOUNT.idFromName("path-sets-bytes"));
    // 300 sets of about 240 KB each (60 paths of 4,000 bytes, then one of the set's own): 72 MB in all.
    const sets = 300;
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
         INSERT INTO path_sets (at, workflow_id, task_id, part, task_name, paths)
         SELECT strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes'), 'wf_long', 'tk_' || i, 0, 'T' || i,
           (SELECT json_group_array(json_array(p, 'M')) FROM (SELECT 'long/' || j || '/' || replace(hex(zeroblob(4000)), '00', 'x') AS p FROM
             (WITH RECURSIVE m(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM m WHERE j + 1 < 60) SELECT j FROM m)
             UNION ALL SELECT 'own/' || i || '.ts'))
         FROM n`,
        sets,
      );
    });
    // Fewer sets than one page, but more bytes than a lookup reads: a miss says older sets were not searched.
    expect(await stub.searchPaths("nowhere/at-all.ts", false, 5)).toEqual({ hits: [], searched_all: false });
    expect((await stub.searchPaths(`own/${sets - 1}.ts`, false, 5)).hits.map((h) => h.task_id)).toEqual([`tk_${sets - 1}`]);
    // The oldest sets are past the bytes read.
    expect(await stub.searchPaths("own/0.ts", false, 5)).toEqual({ hits: [], searched_all: false });
    // The dashboard's path filter says the same instead of "nothing matches".
    const query = { path: "own/0.ts" };
    const page = await stub.dashboardPage(query);
    expect(page).toMatchObject({ rows: [], total: 0, paths_searched_all: false });
    const filters = { q: "", path: query.path, status: "", review: false, page: 0 };
    const shown = String(
      renderDashboard("nonce", {
        account: "acme",
        page,
        totals: await stub.totals(),
        settings: await stub.settings(),
        filters,
        shown: null,
      }),
    );
    expect(shown).toContain("older ones were not searched");
  });
});
