import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { newWorkflowId } from "../../src/ids";
import { ACCOUNT_PUSH_DELAY_MS, type AccountOutbox } from "../../src/workflow/account-outbox";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { eventually } from "../support/eventually";
import { pushToAccount, stubFor, value } from "./rpc";

// When the account index sees a write: log writes are pushed together within
// ACCOUNT_PUSH_DELAY_MS, sooner when another push carries them. The acknowledgement of a push is
// stored by the next write's transaction, not by a commit of its own.

const ACCOUNT = "acme";

async function setUp() {
  const id = newWorkflowId();
  const workflow = stubFor(id);
  const account = env.ACCOUNT.get(env.ACCOUNT.idFromName(ACCOUNT)) as DurableObjectStub<AccountObject>;
  value(await workflow.startWorkflow(ACCOUNT, id, { name: `Push ${id}` }));
  const task = value(await workflow.startTask(ACCOUNT, { workflow_id: id, name: "Batch", goal: "One push" }));
  await pushToAccount(workflow);
  return { id, workflow, account, task };
}

/** What the outbox counts as acknowledged (stored or not yet), what account_sync holds, the last event, the alarm. */
const syncState = (workflow: DurableObjectStub<WorkflowObject>) =>
  runInDurableObject(workflow, async (instance, state) => {
    const row = state.storage.sql
      .exec<{ stored: number; last: number }>("SELECT synced_seq AS stored, (SELECT max(seq) FROM events) AS last FROM account_sync")
      .one();
    const outbox = (instance as unknown as { outbox: AccountOutbox }).outbox;
    return { ...row, synced: outbox.syncedSeq(), alarm: await state.storage.getAlarm() };
  });

async function indexedUpdatedAt(account: DurableObjectStub<AccountObject>, id: string): Promise<string | undefined> {
  return (await account.listWorkflows({ limit: 500 })).find((w) => w.id === id)?.updated_at;
}

describe("account index pushes", () => {
  it("a burst of milestones becomes one push within the batch delay, before the backstop alarm", async () => {
    const { id, workflow, account, task } = await setUp();
    const before = await syncState(workflow);
    expect(before.synced).toBe(before.last);
    for (const message of ["one", "two", "three"]) value(await workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message }));
    const pending = await syncState(workflow);
    // Nothing pushed yet: the index still shows the state before the milestones.
    expect(pending.synced).toBe(before.synced);
    expect(pending.last).toBe(before.last + 3);
    // Only the backstop alarm, far later than the batch: it is there for a timer lost with its process.
    expect(pending.alarm).toBeGreaterThan(Date.now() + ACCOUNT_PUSH_DELAY_MS);

    const waited = Date.now();
    await eventually(
      "the batch pushed",
      async () => ((await syncState(workflow)).synced === pending.last ? true : null),
      ACCOUNT_PUSH_DELAY_MS + 5_000,
      20,
    );
    expect(Date.now() - waited).toBeLessThan(ACCOUNT_PUSH_DELAY_MS + 1000);
    const after = await syncState(workflow);
    expect(after.synced).toBe(after.last);
    const head = value(await workflow.readHead(ACCOUNT, false));
    expect(await indexedUpdatedAt(account, id)).toBe(head.workflow.updated_at);
    // The push committed nothing of its own: its acknowledgement is stored by the next write.
    expect(after.stored).toBeLessThan(after.synced);
    value(await workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message: "four" }));
    const next = await syncState(workflow);
    expect(next.stored).toBe(after.synced);
    expect(next.last).toBe(after.last + 1);
  });

  it("decisions are searchable within ACCOUNT_PUSH_DELAY_MS, a burst of them in one push, before the backstop alarm", async () => {
    const { id, workflow, account, task } = await setUp();
    const before = await syncState(workflow);
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
    // Answered before any push: the three wait for one push together.
    expect((await syncState(workflow)).synced).toBe(before.synced);
    const waited = Date.now();
    for (let i = 0; i < 200; i++) {
      const { synced, last } = await syncState(workflow);
      if (synced === last) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const after = await syncState(workflow);
    expect(after.synced).toBe(after.last);
    expect(Date.now() - waited).toBeLessThan(ACCOUNT_PUSH_DELAY_MS + 1000);
    // The timer pushed; the backstop alarm is still ahead.
    expect(after.alarm).toBeGreaterThan(Date.now());
    const { results } = await account.search(`Prompt ${id}`, 5);
    expect(results.map((r) => r.text).sort()).toEqual([1, 2, 3].map((n) => `Prompt ${n} ${id}? → yes`));
  });

  it("a push whose timer died with its process is made by the alarm", async () => {
    const { id, workflow, account, task } = await setUp();
    value(
      await workflow.logDecision(ACCOUNT, {
        task_id: task.task_id,
        category: "other",
        question: `Lost ${id}?`,
        chosen: "no",
        reasoning: "r",
      }),
    );
    // As after a restart: the alarm runs before the timer could (it would fire in ACCOUNT_PUSH_DELAY_MS).
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    const { synced, stored, last } = await syncState(workflow);
    expect(synced).toBe(last);
    // The alarm's own transaction stores the acknowledgement.
    expect(stored).toBe(last);
    expect((await account.search(`Lost ${id}`, 5)).results.map((r) => r.text)).toEqual([`Lost ${id}? → no`]);
  });
});
