/**
 * What a write writes (docs/storage.md, "Rows written per tool call"): the rows SQLite reports
 * written, by table, as the meter counts them (what Cloudflare bills), for the writes whose rows
 * were cut; and that what they keep is what a later read shows.
 */
import { runInDurableObject } from "cloudflare:test";
import { taskReviewFacts } from "@waymark/protocol/review-counts";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { meter } from "../../src/meter";
import { file } from "../domain/fixtures";
import { readWhole, stubFor, value } from "./rpc";

const ACME = "acme";
const AGENT = "b:agent";
const START = "a".repeat(40);
const END = "b".repeat(40);

/** Rows written by table while `step` runs (the meter on only then). */
async function writtenBy(step: () => Promise<unknown>): Promise<Record<string, number>> {
  const wasOn = meter.on;
  meter.on = true;
  try {
    const before = meter.read().objects.workflow.written_by_table;
    await step();
    const after = meter.read().objects.workflow.written_by_table;
    return Object.fromEntries(
      Object.entries(after)
        .map(([table, n]) => [table, n - (before[table] ?? 0)] as const)
        .filter(([, n]) => n > 0),
    );
  } finally {
    meter.on = wasOn;
  }
}

describe("rows written by a write", () => {
  it("a new workflow's schema is its tables and indexes only: no table of its own for the version, the share link or each log kind", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    const written = await writtenBy(async () => value(await stub.startWorkflow(ACME, id, { name: "New" })));
    // Two rows of sqlite_schema a table (workflow, tasks, file_pages, log_entries, events, totals), one an index (tasks_done,
    // tasks_siblings, log_entries_task, log_entries_review), the totals row with the version: 17 (v30: 28).
    expect(written.schema).toBe(17);
    const kept = await runInDurableObject(stub, async (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE name IN ('schema_version', 'share_link', 'decisions', 'issues', 'milestones')",
        )
        .toArray(),
    );
    expect(kept).toEqual([]);
  });

  it("a workflow shared from its start writes its link with its row: one row, no update after it", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    let token: string | undefined;
    const written = await writtenBy(async () => {
      token = value(
        await stub.startWorkflow(ACME, id, { name: "Shared" }, { usage: { workflows: 0, bytes_stored: 0 }, share: true }),
      ).share_token;
    });
    expect(written.workflow).toBe(1);
    expect(token).toBeTruthy();
    expect(value(await stub.shareLink(ACME))).toMatchObject({ status: "active", token, expires_at: null, revoked_at: null });
  });

  it("a completion writes its task row once (its review facts and its writer in the same update) and keeps what a later read shows", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Once" }));
    const repository = { fingerprint: "f".repeat(64), remote: "github.com/acme/app", branch: "main" };
    const task = value(
      await stub.startTask(
        ACME,
        { workflow_id: id, name: "T", goal: "g", areas: ["src/**"], snapshot: { type: "git", head: START, dirty: [], repository } },
        AGENT,
      ),
    ).task_id;
    const written = await writtenBy(async () =>
      value(
        await stub.completeTask(
          ACME,
          {
            task_id: task,
            status: "success",
            outcome: { summary: "Done.", manual_review_needed: true },
            metrics: { input_tokens: 10, output_tokens: 2, model: "m", cost_usd: 0.01 },
            changes: {
              type: "git",
              start_head: START,
              head: END,
              committed: [],
              dirty: [
                { path: "src/in.ts", head: file("o"), worktree: file("n") },
                { path: "docs/out.md", head: null, worktree: file("n") },
              ],
            },
          },
          AGENT,
        ),
      ),
    );
    // The row's update and its entry into the completed tasks' index (tasks_done); before, the row was updated twice.
    expect(written.tasks).toBe(2);
    const view = value(await readWhole(stub, ACME)).tasks[0];
    if (!view) throw new Error("the task is not read back");
    expect(view.repository?.end_commit).toBe(END);
    expect(view.status).toBe("success");
    const stored = await runInDurableObject(stub, async (_o, state) =>
      state.storage.sql
        .exec<{ review_facts: string; completed_by: string }>("SELECT review_facts, completed_by FROM tasks WHERE id = ?", task)
        .one(),
    );
    expect(stored.completed_by).toBe(AGENT);
    const facts = taskReviewFacts(view);
    expect(JSON.parse(stored.review_facts)).toEqual(facts);
    expect(facts).toMatchObject({ asked: true, outside: 1, usage: "claimed" });
  });

  it("a task's start writes its row and its siblings entry, no key index entry beside them (tasks keyed by id)", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Starts" }));
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "P", goal: "g" })).task_id;
    let child = "";
    const written = await writtenBy(async () => {
      child = value(await stub.startTask(ACME, { workflow_id: id, name: "C", goal: "g", parent_task_id: parent })).task_id;
    });
    // Before v28: three (the row, its rowid's key index entry, its siblings entry).
    expect(written.tasks).toBe(2);
    const whole = value(await readWhole(stub, ACME));
    expect(whole.tasks.map((t) => [t.id, t.parent_task_id])).toEqual([
      [parent, null],
      [child, parent],
    ]);
  });

  it("a log entry soon after its task's start is one row besides its event (no task index entry); one past its task's window is two", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Logs" }));
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "g" })).task_id;
    const milestone = (task_id: string, message: string) =>
      writtenBy(async () => value(await stub.logMilestone(ACME, { task_id, message })));
    // The first reads its task's count once; the second writes as every later one does.
    await milestone(task, "first");
    expect(await milestone(task, "soon")).toEqual({ log_entries: 1, events: 1 });
    // Another task's writes move the log past this task's window.
    const other = value(await stub.startTask(ACME, { workflow_id: id, name: "Other", goal: "g" })).task_id;
    for (let n = 0; n < LIMITS.LOG_WINDOW_EVENTS / 2; n++) {
      value(await stub.logMilestone(ACME, { task_id: other, message: `m${n}` }));
      value(await stub.logDecision(ACME, { task_id: other, category: "other", question: `q${n}`, chosen: "c", reasoning: "r" }));
    }
    expect(await milestone(task, "late")).toEqual({ log_entries: 2, events: 1 });
  });
});
