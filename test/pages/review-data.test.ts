import { describe, expect, it } from "vitest";
import { TOKENS, workerFetch } from "../support/worker";
import { toolCaller } from "./fixture";

const acme = toolCaller(workerFetch, "http://localhost/mcp", TOKENS.acme);
const state = (c: string) => ({ mode: "100644", blob: c.repeat(40) });
const START = "1".repeat(40);
const END = "2".repeat(40);

/** What the helper sends: a commit that changed two files, and its review block (which names one path the task is not credited with). */
function changes(review: Record<string, unknown>) {
  return {
    type: "git",
    start_head: START,
    head: END,
    committed: [
      { path: "src/app.ts", before: state("a"), after: state("b") },
      { path: "assets/logo.png", before: null, after: state("c") },
    ],
    dirty: [],
    review,
  };
}

async function startedTask() {
  const wf = await acme("start_workflow", { name: "Review data" });
  const task = await acme("start_task", {
    workflow_id: wf.workflow_id,
    name: "Edit",
    goal: "Edit the app",
    snapshot: { type: "git", head: START, branch: "main", dirty: [] },
  });
  return { wf, task };
}

const REVIEW = {
  lines: [
    { path: "src/app.ts", added: 3, removed: 1 },
    { path: "assets/logo.png", binary: true },
    { path: "src/not-this-task.ts", added: 50, removed: 50 },
  ],
  commits: [{ sha: "abc1234", subject: "Fix <script>alert(1)</script> [x](y)", task: "tk_other" }],
  branch: "main",
};

describe("line counts and commits from the helper, on complete_task, the page and the exports", () => {
  it("complete_task reports them for the files the task is credited with; page and exports show them", async () => {
    const { wf, task } = await startedTask();
    const done = await acme("complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "ok" },
      changes: changes(REVIEW),
    });
    const files = done.files_changed as Record<string, unknown>;
    // Kept for the files credited, in path order like every list of files_changed.
    expect(files.lines).toEqual([REVIEW.lines[1], REVIEW.lines[0]]);
    expect(files.line_totals).toEqual({ added: 3, removed: 1, binary: 1 });
    expect(files.commits).toEqual(REVIEW.commits);
    expect(files.branch).toBe("main");

    const page = await (await workerFetch(String(wf.share_url))).text();
    // The task's line totals, and per file its counts (a binary file said so).
    expect(page).toContain(
      '<span class="lines"><span class="add">+3</span> <span class="del">−1</span> <span class="muted">· 1 binary</span></span>',
    );
    expect(page).toMatch(/<code>src\/app\.ts<\/code><\/td><td class="num add">\+3<\/td><td class="num del">−1<\/td>/);
    expect(page).toMatch(/<code>assets\/logo\.png<\/code><\/td><td class="num muted" colspan="2">binary<\/td>/);
    expect(page).toContain("Fix &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).toMatch(/Lines changed: <span class="lines"><span class="add">\+3<\/span> <span class="del">−1<\/span>/);
    expect(page).not.toContain("not-this-task");

    const md = await (await workerFetch(`${String(wf.share_url)}/export.md`)).text();
    expect(md).toContain("| M | `src/app.ts` | 3 | 1 | committed |");
    expect(md).toContain("| A | `assets/logo.png` | binary |  | committed |");
    expect(md).toContain("Branch `main` · 1 commit during this task (not known to be pushed):");
    // Only what GFM acts on is escaped: the tag's opening bracket.
    expect(md).toContain("&lt;script>alert(1)&lt;/script>");
    expect(md).not.toContain("<script>");

    const json = JSON.parse(await (await workerFetch(`${String(wf.share_url)}/export.json`)).text()) as {
      tasks: { files_changed: Record<string, unknown> }[];
    };
    expect(json.tasks[0]?.files_changed.line_totals).toEqual({ added: 3, removed: 1, binary: 1 });
  });

  it.each([
    ["a commit id that is not hex", { ...REVIEW, commits: [{ sha: "zzzzzzz", subject: "x" }] }, "sha"],
    ["negative counts", { ...REVIEW, lines: [{ path: "src/app.ts", added: -1, removed: 0 }] }, "lines"],
    ["a control character in a subject", { ...REVIEW, commits: [{ sha: "abc1234", subject: "a\u0007b" }] }, "subject"],
  ])("refuses %s, naming the field", async (_case, review, field) => {
    const { task } = await startedTask();
    let message = "";
    try {
      await acme("complete_task", { task_id: task.task_id, status: "success", outcome: { summary: "ok" }, changes: changes(review) });
    } catch (error) {
      message = String(error);
    }
    expect(message).toContain("review");
    expect(message).toContain(field);
  });
});
