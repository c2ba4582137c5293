import type { Changes, LineRange } from "@waymark/protocol/wire";
import { afterAll, describe, expect, it } from "vitest";
import { LEDGER_TASKS, ledgerEntry, lookAgain, observe, pendingObservations, recordCompletion } from "../src/durability.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

/**
 * Durability as the helper observes it with real git (docs/insights.md): tasks' committed agent
 * lines kept in the ledger, then looked at again at a later HEAD through `git blame` and the
 * records, as `waymark blame` reads them: lines rewritten by a person or by a later task are gone,
 * lines moved by an insertion above them or carried through a rename are still there, a task whose
 * end commit left HEAD's history is not observed, a task is only observed again once HEAD moved.
 */
afterAll(cleanupTempDirs);

const numbered = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join("");
const range = (start: number, end: number, who: LineRange[2] = "agent"): LineRange => [start, end, who, "0".repeat(16)];
let counter = 0;
const taskId = () => `tk_${"a".repeat(19)}${String.fromCharCode(98 + counter++)}_aaaaaaaa`;

/** The changes a completion sent for a task that committed `files` (their ranges at the end commit). */
function changes(repo: Repo, files: Record<string, LineRange[]>, dirty: string[] = []): Changes {
  const head = repo.git("rev-parse", "HEAD").trim();
  return {
    type: "git",
    start_head: head,
    head,
    committed: [],
    dirty: dirty.map((path) => ({ path, head: null, worktree: { mode: "100644", blob: "b".repeat(40) } })),
    review: {
      lines: [],
      commits: [{ sha: head.slice(0, 7), subject: "task" }],
      branch: "main",
      line_attribution: { files: Object.entries(files).map(([path, ranges]) => ({ path, ranges })) },
    },
  };
}

describe("the ledger", () => {
  it("keeps a task's agent ranges in committed files only, and nothing for a task that committed nothing", () => {
    const repo = Repo.init().write("a.txt", numbered(5, "a")).write("b.txt", "b\n").commitAll("task");
    const entry = ledgerEntry(
      "tk_x",
      changes(repo, { "a.txt": [range(1, 2), range(3, 3, "others"), range(4, 5)], "b.txt": [range(1, 1)] }, ["b.txt"]),
      1,
    );
    expect(entry).toMatchObject({
      task_id: "tk_x",
      recorded: 4,
      files: [
        {
          path: "a.txt",
          ranges: [
            [1, 2],
            [4, 5],
          ],
        },
      ],
    });
    const nothing = changes(repo, { "a.txt": [range(1, 5)] });
    if (nothing.type === "git" && nothing.review) nothing.review.commits = [];
    expect(ledgerEntry("tk_y", nothing, 1)).toBeNull();
  });
});

describe("looking again at HEAD", () => {
  it("counts the lines git still attributes to each task; gone when rewritten, kept when moved or renamed", async () => {
    const cache = tempDir("waymark-cache-");
    const repo = Repo.init().write("README.md", "readme\n").commitAll("initial");
    // Task 1: the agent writes 10 lines of a.txt and 4 of b.txt.
    const first = taskId();
    repo.write("a.txt", numbered(10, "a")).write("b.txt", numbered(4, "b")).commitAll("task 1");
    await recordCompletion(
      cache,
      repo.dir,
      [],
      ledgerEntry(first, changes(repo, { "a.txt": [range(1, 10)], "b.txt": [range(1, 4)] }), 1000),
    );
    // Nothing moved since: nothing to look at.
    await lookAgain(cache, repo.dir, 2000);
    expect(await pendingObservations(cache, repo.dir)).toEqual([]);

    // A person rewrites lines 2 and 3 of a.txt and inserts two lines at the top; b.txt is renamed.
    const lines = numbered(10, "a").split("\n");
    repo.write("a.txt", `${["top 1", "top 2", lines[0], "person 2", "person 3", ...lines.slice(3, 10)].join("\n")}\n`);
    repo.git("mv", "b.txt", "renamed-b.txt");
    repo.commitAll("person");
    // Task 2: the agent rewrites line 10 of a.txt (now line 12) and adds 3 lines of c.txt.
    const second = taskId();
    const now = repo.git("show", "HEAD:a.txt").split("\n");
    now[11] = "task 2 rewrote a 10";
    repo.write("a.txt", now.join("\n")).write("c.txt", numbered(3, "c")).commitAll("task 2");
    await recordCompletion(
      cache,
      repo.dir,
      [],
      ledgerEntry(second, changes(repo, { "a.txt": [range(12, 12)], "c.txt": [range(1, 3)] }), 3000),
    );
    await lookAgain(cache, repo.dir, 4000);
    const head = repo.git("rev-parse", "HEAD").trim();
    // Task 1: 7 of a.txt's 10 (two rewritten by the person, one by task 2) and all 4 of b.txt, followed through the rename.
    expect(await pendingObservations(cache, repo.dir)).toEqual([{ task_id: first, commit: head, at: 4000, recorded: 14, present: 11 }]);

    // Sent with a completion: gone from the ledger; not looked at again until HEAD moves.
    await recordCompletion(cache, repo.dir, await pendingObservations(cache, repo.dir), null);
    await lookAgain(cache, repo.dir, 5000);
    expect(await pendingObservations(cache, repo.dir)).toEqual([]);

    // HEAD moves: a.txt deleted. Both tasks are looked at again.
    repo.remove("a.txt").commitAll("drop a");
    await lookAgain(cache, repo.dir, 6000);
    const after = repo.git("rev-parse", "HEAD").trim();
    expect(await pendingObservations(cache, repo.dir)).toEqual([
      { task_id: second, commit: after, at: 6000, recorded: 4, present: 3 },
      { task_id: first, commit: after, at: 6000, recorded: 14, present: 4 },
    ]);
  });

  it("a task whose end commit left HEAD's history is not observed (never counted as gone)", async () => {
    const repo = Repo.init().write("README.md", "readme\n").commitAll("initial");
    repo.git("checkout", "-q", "-b", "side");
    repo.write("a.txt", numbered(3, "a")).commitAll("task on a branch");
    const task = ledgerEntry(taskId(), changes(repo, { "a.txt": [range(1, 3)] }), 1);
    repo.git("checkout", "-q", "main");
    repo.write("other.txt", "x\n").commitAll("main moves on");
    expect(await observe(repo.dir, task ? [task] : [], 1)).toEqual([]);
  });

  it(`the ledger keeps the newest ${LEDGER_TASKS} tasks`, async () => {
    const cache = tempDir("waymark-cache-");
    const repo = Repo.init().write("a.txt", numbered(2, "a")).commitAll("task");
    const entry = ledgerEntry("tk_base", changes(repo, { "a.txt": [range(1, 2)] }), 1);
    for (let i = 0; i < LEDGER_TASKS + 5; i++)
      await recordCompletion(cache, repo.dir, [], entry ? { ...entry, task_id: `tk_${String(i).padStart(20, "a")}_aaaaaaaa` } : null);
    repo.write("a.txt", "rewritten\n").commitAll("rewrite");
    await lookAgain(cache, repo.dir, 1);
    // Twenty at most per look, newest first.
    const seen = await pendingObservations(cache, repo.dir);
    expect(seen).toHaveLength(20);
    expect(seen[0]?.task_id).toBe(`tk_${String(LEDGER_TASKS + 4).padStart(20, "a")}_aaaaaaaa`);
  });
});
