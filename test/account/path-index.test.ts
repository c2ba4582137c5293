import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PATH_SETS_PAGE, type PathHit } from "../../src/account/path-index";
import type { PathEntry } from "../../src/domain/path-entries";
import { LIMITS } from "../../src/limits";
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

    const broadHits = await stub.searchPaths("lib/", true, 20);
    expect(broadHits.map((h) => `${h.at} ${h.path}`)).toEqual(
      [expected("/lib/", 1)[0], ...expected("lib/", 19)].map((h) => `${h?.at} ${h?.path}`),
    );
    expect(broadHits[0]?.path).toBe("/lib/caf%E9.ts");
    expect(broadHits[1]?.path).toBe("lib/latest.ts");

    const narrow = await stub.searchPaths("lib/m3/", true, 20);
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
      const hits = await stub.searchPaths(path, false, 5);
      expect(
        hits.map((h) => [h.path, h.status]),
        path,
      ).toEqual([[path, path === "src/a.ts" ? "D" : "M"]]);
    }
  });

  it("stops at PATHS_PER_WORKFLOW per workflow", async () => {
    const many = Array.from({ length: LIMITS.PATHS_PER_WORKFLOW + 50 }, (_, i) => entry(`bulk/f${i}.ts`));
    await stub.recordWorkflow("path-record", workflowSummary("wf_bulk", "bulk"), { paths: many });
    expect(await stub.searchPaths(`bulk/f${LIMITS.PATHS_PER_WORKFLOW - 1}.ts`, false, 5)).toHaveLength(1);
    expect(await stub.searchPaths(`bulk/f${LIMITS.PATHS_PER_WORKFLOW}.ts`, false, 5)).toEqual([]);
  });
});
