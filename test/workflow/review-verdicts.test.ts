/**
 * A reviewer's verdict on a review item changes "reviews needed": approving settles it, asking
 * for changes reopens it, and the running total always equals a recount from the records (the
 * recount the migration runs) and the head's review counts (@waymark/protocol/review-counts, what
 * the page and the exports show), so the dashboard's "needs review" filter stops listing approved
 * work. Review items: tasks that asked for review, failed, or changed files outside their areas;
 * issues flagged for a human.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { FeedbackTarget, FeedbackVerdict } from "../../src/domain/view";
import { newWorkflowId } from "../../src/ids";
import { RECOUNT_REVIEW_ITEMS } from "../../src/workflow/feedback";
import { FILE_CHANGES } from "../../src/workflow/task-files";
import { ON_PAGE } from "../support/worker";
import { pushToAccount, stubFor, value } from "./rpc";

const ACME = "acme";

async function reviewed() {
  const id = newWorkflowId();
  const stub = stubFor(id);
  value(await stub.startWorkflow(ACME, id, { name: "Reviewed", plan: [] }));
  const task = value(await stub.startTask(ACME, { workflow_id: id, name: "Risky", goal: "g" })).task_id;
  const review = value(
    await stub.logIssue(ACME, { task_id: task, type: "other", description: "check me", resolution: "r", requires_human_review: true }),
  ).id;
  const plain = value(await stub.logIssue(ACME, { task_id: task, type: "other", description: "fine", resolution: "r" })).id;
  const early = value(await stub.startTask(ACME, { workflow_id: id, name: "Approved early", goal: "g" })).task_id;
  const broken = value(await stub.startTask(ACME, { workflow_id: id, name: "Broken", goal: "g" })).task_id;
  const wide = value(await stub.startTask(ACME, { workflow_id: id, name: "Wide", goal: "g", areas: ["src/**"] })).task_id;
  return { id, stub, task, review, plain, early, broken, wide };
}

type Stub = ReturnType<typeof stubFor>;

const needed = async (stub: Stub) => value(await stub.readHead(ACME, false)).totals.reviews_needed;

/** The total kept write by write, the head's open review items, and the recount from the records. */
async function bothCounts(stub: Stub): Promise<[number, number]> {
  const kept = await needed(stub);
  const counted = value(await stub.readHead(ACME, false)).review.review.open;
  const recounted = await runInDurableObject(stub, async (_instance, state) => {
    // The migration's recount (v20) read the files' table, which is FILE_CHANGES's select since v29, and the issues' table,
    // whose entries are log_entries' of kind 'issues' since v31 (only they have the flag).
    state.storage.sql.exec(
      RECOUNT_REVIEW_ITEMS.replace("FROM file_changes c", `FROM ${FILE_CHANGES.text} c`).replace("FROM issues i", "FROM log_entries i"),
    );
    return state.storage.sql.exec<{ n: number }>("SELECT reviews_needed AS n FROM totals").one().n;
  });
  expect(counted, "the head's review counts").toBe(kept);
  return [kept, recounted];
}

async function say(stub: Stub, target: FeedbackTarget, targetId: string, verdict: FeedbackVerdict) {
  value(await stub.addFeedback(ACME, { target, target_id: targetId, verdict, body: verdict, ...ON_PAGE }));
}

describe("reviewer verdicts and reviews needed", () => {
  it("approving settles a review item, asking for changes reopens it, comments and other items change nothing", async () => {
    const { id, stub, task, review, plain, early, broken, wide } = await reviewed();
    // A verdict on a task still running settles nothing: its review is asked for when it completes.
    await say(stub, "task", early, "approved");
    value(await stub.completeTask(ACME, { task_id: early, status: "success", outcome: { summary: "s", manual_review_needed: true } }));
    value(await stub.completeTask(ACME, { task_id: task, status: "success", outcome: { summary: "s", manual_review_needed: true } }));
    expect(await bothCounts(stub)).toEqual([3, 3]);
    // A failed task and a task that changed a file outside its areas are review items too.
    value(await stub.completeTask(ACME, { task_id: broken, status: "failed", outcome: { summary: "it broke" } }));
    value(
      await stub.completeTask(ACME, {
        task_id: wide,
        status: "success",
        outcome: { summary: "s" },
        changes: {
          type: "checksum",
          transitions: [{ path: "docs/outside.md", before: null, after: { mode: "100644", blob: "c".repeat(40) } }],
        },
      }),
    );
    expect(await bothCounts(stub)).toEqual([5, 5]);
    await say(stub, "task", broken, "approved");
    await say(stub, "task", wide, "approved");
    expect(await bothCounts(stub)).toEqual([3, 3]);

    const steps: [FeedbackTarget, string, FeedbackVerdict, number][] = [
      ["issue", review, "approved", 2],
      ["issue", review, "approved", 2],
      ["issue", plain, "approved", 2],
      ["task", task, "comment", 2],
      ["workflow", id, "approved", 2],
      ["task", task, "approved", 1],
      ["task", task, "changes_requested", 2],
      ["task", task, "comment", 2],
      ["task", task, "approved", 1],
      ["task", early, "approved", 0],
      ["issue", review, "changes_requested", 1],
    ];
    for (const [target, targetId, verdict, expected] of steps) {
      await say(stub, target, targetId, verdict);
      expect(await bothCounts(stub), `${verdict} on ${target} ${targetId}`).toEqual([expected, expected]);
    }
    // The account index (dashboard, "needs review") hears it with the write.
    await pushToAccount(stub);
    const listed = await env.ACCOUNT.get(env.ACCOUNT.idFromName(ACME)).listWorkflows({ limit: 200 });
    expect(listed.find((w) => w.id === id)?.reviews_needed).toBe(1);
  });
});
