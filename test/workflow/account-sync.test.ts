import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AccountObject } from "../../src/account/account-object";
import { newWorkflowId } from "../../src/ids";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { pushToAccount, setStoredTotals, storedTotals, value } from "./rpc";

// The workflow object pushes its events to the account index through an outbox: the
// account acknowledges a seq, and everything after it is pushed again until taken.
// Here the account "loses" what it was sent, as if those pushes had failed.
// Pushes for log writes happen off the reply path; the object's alarm (pushToAccount) pushes them now.

const ACCOUNT = "acme";

async function setUp() {
  const id = newWorkflowId();
  const workflow = env.WORKFLOW.get(env.WORKFLOW.idFromName(id)) as DurableObjectStub<WorkflowObject>;
  const account = env.ACCOUNT.get(env.ACCOUNT.idFromName(ACCOUNT)) as DurableObjectStub<AccountObject>;
  value(await workflow.startWorkflow(ACCOUNT, id, { name: `Outbox ${id}` }));
  const task = value(await workflow.startTask(ACCOUNT, { workflow_id: id, name: "Queue", goal: "Deliver once" }));
  value(
    await workflow.logDecision(ACCOUNT, {
      task_id: task.task_id,
      category: "architecture",
      question: `Outbox for ${id}?`,
      chosen: "Yes",
      reasoning: "r",
    }),
  );
  // Pushes after log writes run off the reply path; wait for them before looking.
  await pushToAccount(workflow);
  return { id, workflow, account, task };
}

/** The account forgets this workflow's documents, and the workflow forgets the acknowledgement. */
async function losePushes(id: string, workflow: DurableObjectStub<WorkflowObject>, account: DurableObjectStub<AccountObject>) {
  await runInDurableObject(account, async (_instance, state) => {
    state.storage.sql.exec("DELETE FROM memory_fts WHERE workflow_id = ?", id);
  });
  await runInDurableObject(workflow, async (instance, state) => {
    setStoredTotals(state.storage.sql, { synced_seq: 1 }, instance);
  });
}

async function found(account: DurableObjectStub<AccountObject>, id: string): Promise<string[]> {
  const { results } = await account.search(`Outbox ${id}`, 20);
  return results.filter((r) => r.workflow_id === id).map((r) => r.text);
}

describe("account index outbox", () => {
  it("acknowledges every event it pushed", async () => {
    const { workflow } = await setUp();
    const [row] = await runInDurableObject(workflow, async (_i, state) => [
      {
        synced_seq: storedTotals(state.storage.sql).synced_seq,
        last: state.storage.sql.exec<{ last: number }>("SELECT max(seq) AS last FROM events").one().last,
      },
    ]);
    expect(row?.synced_seq).toBe(row?.last);
  });

  it("the next write pushes the backlog again", async () => {
    const { id, workflow, account, task } = await setUp();
    await losePushes(id, workflow, account);
    expect(await found(account, id)).toEqual([]);
    value(await workflow.logMilestone(ACCOUNT, { task_id: task.task_id, message: "later" }));
    await pushToAccount(workflow);
    expect(await found(account, id)).toEqual([`Outbox for ${id}? → Yes`]);
  });

  it("the alarm pushes the backlog without any new write", async () => {
    const { id, workflow, account } = await setUp();
    await losePushes(id, workflow, account);
    await runInDurableObject(workflow, async (_i, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(workflow)).toBe(true);
    expect(await found(account, id)).toEqual([`Outbox for ${id}? → Yes`]);
  });
});
