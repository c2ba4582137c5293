import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { SUMMARY_TIME_LAG_MS } from "../../src/account/workflow-index";
import { newWorkflowId } from "../../src/ids";
import { meter } from "../../src/meter";
import { ACCOUNT_LAZY_PUSH_MS, ACCOUNT_PUSH_DELAY_MS, type AccountOutbox } from "../../src/workflow/account-outbox";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { pushToAccount, storedTotals, stubFor, value } from "./rpc";

// When the account index sees a write: right after the reply, unless a push went out less than
// ACCOUNT_PUSH_DELAY_MS ago; then the alarm pushes at the end of that window, with whatever else was
// written meanwhile. A milestone, which the index only counts, rides on the next push (or the alarm's
// within ACCOUNT_LAZY_PUSH_MS). No timer keeps the object awake in between. The acknowledgement of a
// push is stored by the next write's own totals update, not by a commit or a row of its own.

const ACCOUNT = "acme";

/** The open tasks the account index shows for a workflow. */
const indexedOpen = async (account: DurableObjectStub<AccountObject>, id: string) =>
  (await account.listWorkflows({ limit: 500 })).find((w) => w.id === id)?.open_tasks;

/** Past the push window of the last write: the next one is pushed at once. */
const outOfWindow = () => new Promise((r) => setTimeout(r, ACCOUNT_PUSH_DELAY_MS + 50));

async function setUp() {
  const id = newWorkflowId();
  const workflow = stubFor(id);
  const account = env.ACCOUNT.get(env.ACCOUNT.idFromName(ACCOUNT)) as DurableObjectStub<AccountObject>;
  value(await workflow.startWorkflow(ACCOUNT, id, { name: `Push ${id}` }));
  const task = value(await workflow.startTask(ACCOUNT, { workflow_id: id, name: "Batch", goal: "One push" }));
  await pushToAccount(workflow);
  // Out of the window of that push: the next write is pushed at once.
  await outOfWindow();
  return { id, workflow, account, task };
}

/** A decision of the task (a write the index must see soon: it is a memory document). */
const decide = (workflow: DurableObjectStub<WorkflowObject>, taskId: string, question: string) =>
  workflow.logDecision(ACCOUNT, { task_id: taskId, category: "other", question, chosen: "yes", reasoning: "r" });

/** What the outbox counts as acknowledged (stored or not yet), what the totals row holds, the last event, the alarm. */
const syncState = (workflow: DurableObjectStub<WorkflowObject>) =>
  runInDurableObject(workflow, async (instance, state) => {
    const row = {
      stored: storedTotals(state.storage.sql).synced_seq,
      last: state.storage.sql.exec<{ last: number }>("SELECT max(seq) AS last FROM events").one().last,
    };
    const outbox = (instance as unknown as { outbox: AccountOutbox }).outbox;
    return { ...row, synced: outbox.syncedSeq(), alarm: await state.storage.getAlarm() };
  });

/** Polls until the index acknowledged every event (at most `ms`); the state then. */
async function caughtUp(workflow: DurableObjectStub<WorkflowObject>, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const state = await syncState(workflow);
    if (state.synced === state.last || Date.now() > deadline) return state;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * How far the index's "updated" time is behind the workflow's own: a push that changes nothing
 * else the summary shows may leave it as stored for up to SUMMARY_TIME_LAG_MS (account/workflow-index).
 */
async function indexedLag(account: DurableObjectStub<AccountObject>, id: string, updatedAt: string): Promise<number> {
  const indexed = (await account.listWorkflows({ limit: 500 })).find((w) => w.id === id)?.updated_at;
  return Date.parse(updatedAt) - Date.parse(indexed ?? "");
}

async function expectIndexedWithinLag(account: DurableObjectStub<AccountObject>, id: string, updatedAt: string) {
  const lag = await indexedLag(account, id, updatedAt);
  expect(lag).toBeGreaterThanOrEqual(0);
  expect(lag).toBeLessThan(SUMMARY_TIME_LAG_MS);
}

/** Runs the workflow's alarm with the meter on: what it cost each kind of object. */
async function meteredAlarm(workflow: DurableObjectStub<WorkflowObject>) {
  const wasOn = meter.on;
  meter.on = true;
  try {
    const before = meter.read().objects;
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    const after = meter.read().objects;
    return {
      accountRequests: after.account.requests - before.account.requests,
      accountRowsWritten: after.account.rows_written - before.account.rows_written,
      workflowRowsWritten: after.workflow.rows_written - before.workflow.rows_written,
    };
  } finally {
    meter.on = wasOn;
  }
}

describe("account index pushes", () => {
  it("a write is pushed right after its reply; a burst after it waits for the window's end, in one push by the alarm", async () => {
    const { id, workflow, account, task } = await setUp();
    const before = await syncState(workflow);
    expect(before.synced).toBe(before.last);
    value(await decide(workflow, task.task_id, "one?"));
    // Pushed after the reply, without waiting for any window.
    const first = await caughtUp(workflow, 1000);
    expect(first.synced).toBe(before.last + 1);
    // The push committed nothing of its own: its acknowledgement is stored by the next write.
    expect(first.stored).toBeLessThan(first.synced);
    for (const question of ["two?", "three?"]) value(await decide(workflow, task.task_id, question));
    const burst = await syncState(workflow);
    expect(burst.stored).toBe(first.synced);
    // Within the window of the first push: not pushed yet, the alarm set for the window's end.
    expect(burst.synced).toBe(first.synced);
    expect(burst.last).toBe(first.synced + 2);
    expect(burst.alarm).not.toBeNull();
    expect(burst.alarm).toBeLessThanOrEqual(Date.now() + ACCOUNT_PUSH_DELAY_MS);
    const after = await caughtUp(workflow, ACCOUNT_PUSH_DELAY_MS + 1500);
    expect(after.synced).toBe(after.last);
    const head = value(await workflow.readHead(ACCOUNT, false));
    await expectIndexedWithinLag(account, id, head.workflow.updated_at);
  });

  it("milestones ride on the next push, or the alarm's within ACCOUNT_LAZY_PUSH_MS", async () => {
    const { id, workflow, account, task } = await setUp();
    const before = await syncState(workflow);
    for (const message of ["one", "two"]) value(await workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message }));
    await new Promise((r) => setTimeout(r, 300));
    const waiting = await syncState(workflow);
    // Not pushed: one alarm set, within the lazy window.
    expect(waiting.synced).toBe(before.synced);
    expect(waiting.last).toBe(before.last + 2);
    expect(waiting.alarm).not.toBeNull();
    expect(waiting.alarm).toBeLessThanOrEqual(Date.now() + ACCOUNT_LAZY_PUSH_MS);
    // The next write the index must see carries them.
    value(await decide(workflow, task.task_id, `Carried ${id}?`));
    const carried = await caughtUp(workflow, 1000);
    expect(carried.synced).toBe(carried.last);
    const head = value(await workflow.readHead(ACCOUNT, false));
    await expectIndexedWithinLag(account, id, head.workflow.updated_at);
    // A milestone with no write after it: the alarm pushes it.
    value(await workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message: "last" }));
    expect((await syncState(workflow)).alarm).not.toBeNull();
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    const last = await syncState(workflow);
    expect(last.synced).toBe(last.last);
    const latest = value(await workflow.readHead(ACCOUNT, false));
    await expectIndexedWithinLag(account, id, latest.workflow.updated_at);
  });

  it("decisions are searchable within ACCOUNT_PUSH_DELAY_MS, a burst of them too", async () => {
    const { id, workflow, account, task } = await setUp();
    const waited = Date.now();
    for (const n of [1, 2, 3]) {
      value(
        await workflow.logDecision(ACCOUNT, {
          task_id: task.task_id,
          category: "other",
          question: `Prompt ${n} ${id}?`,
          chosen: "yes",
          reasoning: "r",
        }),
      );
    }
    const after = await caughtUp(workflow, ACCOUNT_PUSH_DELAY_MS + 1500);
    expect(after.synced).toBe(after.last);
    expect(Date.now() - waited).toBeLessThan(ACCOUNT_PUSH_DELAY_MS + 1500);
    const { results } = await account.search(`Prompt ${id}`, 5);
    expect(results.map((r) => r.text).sort()).toEqual([1, 2, 3].map((n) => `Prompt ${n} ${id}? → yes`));
  });

  it("a write committed while a push is under way waits for the window's alarm; a completion meanwhile is pushed before its reply", async () => {
    const { id, workflow, account, task } = await setUp();
    // The account object busy for 600 ms: the next push waits on it.
    const busy = () =>
      runInDurableObject(account, (_instance, state) => state.blockConcurrencyWhile(() => new Promise((r) => setTimeout(r, 600))));
    let blocked = busy();
    await new Promise((r) => setTimeout(r, 50));
    const before = await syncState(workflow);
    value(await decide(workflow, task.task_id, "Pushed at once?"));
    value(await decide(workflow, task.task_id, "Committed during the push?"));
    await blocked;
    const first = await caughtUp(workflow, 1000);
    // The first push took the first decision only; the second waits for the window, not pushed when the first push ended.
    await new Promise((r) => setTimeout(r, 300));
    const waiting = await syncState(workflow);
    expect(waiting.synced).toBeLessThan(waiting.last);
    expect(waiting.synced).toBe(first.synced);
    expect(first.synced).toBe(before.last + 1);
    expect(waiting.alarm).not.toBeNull();
    const after = await caughtUp(workflow, ACCOUNT_PUSH_DELAY_MS + 1500);
    expect(after.synced).toBe(after.last);
    // Out of the window again: the task's completion is pushed at once and waits on the busy account; the
    // workflow's completion, committed meanwhile, is in the index when its reply comes.
    await outOfWindow();
    blocked = busy();
    await new Promise((r) => setTimeout(r, 50));
    value(await workflow.completeTask(ACCOUNT, { task_id: task.task_id, status: "success", outcome: { summary: "Done" } }));
    value(await workflow.completeWorkflow(ACCOUNT, { workflow_id: id, status: "success", summary: "Closed." }));
    expect((await account.listWorkflows({ limit: 500 })).find((w) => w.id === id)?.status).toBe("success");
    await blocked;
  });

  it("a push the window deferred is made by the alarm whenever it runs (after a restart too)", async () => {
    const { id, workflow, account, task } = await setUp();
    value(await decide(workflow, task.task_id, "Opens the window?"));
    await caughtUp(workflow, 1000);
    value(
      await workflow.logDecision(ACCOUNT, {
        task_id: task.task_id,
        category: "other",
        question: `Lost ${id}?`,
        chosen: "no",
        reasoning: "r",
      }),
    );
    expect((await syncState(workflow)).alarm).not.toBeNull();
    // As after a restart: the alarm runs whenever the runtime runs it; it pushes what is pending.
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    const { synced, stored, last } = await syncState(workflow);
    expect(synced).toBe(last);
    // The alarm's own transaction stores the acknowledgement.
    expect(stored).toBe(last);
    expect((await account.search(`Lost ${id}`, 5)).results.map((r) => r.text)).toEqual([`Lost ${id}? → no`]);
  });

  it("counts a later push stored leave the alarm nothing to settle: it makes no request to the account", async () => {
    const { id, workflow, account, task } = await setUp();
    // A milestone's alarm is due; a task's start then leaves its counts for it.
    await outOfWindow();
    value(await workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message: "halfway" }));
    value(await workflow.startTask(ACCOUNT, { workflow_id: id, name: `Waits ${id}`, goal: "Counted later" }));
    await caughtUp(workflow, 1000);
    expect(await indexedOpen(account, id)).toBe(1);
    // An issue that asks for review is stored at once, and the row with it counts the open tasks too.
    await outOfWindow();
    value(
      await workflow.logIssue(ACCOUNT, {
        task_id: task.task_id,
        type: "bug_encountered",
        description: "Needs a person",
        resolution: "Asked",
        requires_human_review: true,
      }),
    );
    const pushed = await caughtUp(workflow, 1000);
    expect(pushed.synced).toBe(pushed.last);
    expect(await indexedOpen(account, id)).toBe(2);
    expect((await meteredAlarm(workflow)).accountRequests).toBe(0);
    expect(await indexedOpen(account, id)).toBe(2);
  });

  it("a task's start waits for an alarm already due to show its counts, never for one of its own; the alarm settles them (after a restart too)", async () => {
    const { id, workflow, account, task } = await setUp();
    expect(await indexedOpen(account, id)).toBe(1);
    const start = async (name: string) => {
      value(await workflow.startTask(ACCOUNT, { workflow_id: id, name, goal: "Counted" }));
      const pushed = await caughtUp(workflow, 1000);
      expect(pushed.synced).toBe(pushed.last);
      // Its memory document is pushed at once either way.
      expect((await account.search(name, 5)).results).toHaveLength(1);
      return pushed;
    };
    // No alarm due: the counts are stored with the push, and no alarm is set for them.
    const second = await start(`Second ${id}`);
    expect(await indexedOpen(account, id)).toBe(2);
    expect(second.alarm).toBeNull();
    // A milestone's alarm is due: the next start's counts wait for it, and it settles them.
    await outOfWindow();
    const milestone = () => workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message: "halfway" });
    value(await milestone());
    const due = (await syncState(workflow)).alarm;
    expect(due).not.toBeNull();
    expect(due).toBeLessThanOrEqual(Date.now() + ACCOUNT_LAZY_PUSH_MS);
    const third = await start(`Third ${id}`);
    expect(await indexedOpen(account, id)).toBe(2);
    expect(third.alarm).toBe(due);
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    expect(await indexedOpen(account, id)).toBe(3);
    // The same, then the object forgets what it knew, as a new instance knows nothing of it: its alarm settles too.
    await outOfWindow();
    value(await milestone());
    await start(`Fourth ${id}`);
    expect(await indexedOpen(account, id)).toBe(3);
    await runInDurableObject(workflow, (instance) => {
      Object.assign((instance as unknown as { outbox: AccountOutbox }).outbox, { countsWaiting: false, lastPushAt: 0, alarmDueBy: 0 });
    });
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    expect(await indexedOpen(account, id)).toBe(4);
    // A new instance's alarm with nothing to push or settle: its settling push writes no row anywhere.
    await runInDurableObject(workflow, (instance, state) => {
      Object.assign((instance as unknown as { outbox: AccountOutbox }).outbox, { countsWaiting: false, lastPushAt: 0, alarmDueBy: 0 });
      return state.storage.setAlarm(Date.now());
    });
    expect(await meteredAlarm(workflow)).toEqual({ accountRequests: 1, accountRowsWritten: 0, workflowRowsWritten: 0 });
  });
});
