/**
 * The running totals (workflow/totals) ride on each write's last event instead of a row every
 * write rewrites: an object that starts again reads them back as the last write left them, a
 * write that appends no event stores them on the row, and nothing is counted twice or lost.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Totals } from "../../src/domain/view";
import { newWorkflowId } from "../../src/ids";
import { sqlFor } from "../../src/storage/sql";
import { RunningTotals } from "../../src/workflow/totals";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { file } from "../domain/fixtures";
import { ON_PAGE } from "../support/worker";
import { pushToAccount, stubFor, value } from "./rpc";

const ACME = "acme";
type Stub = DurableObjectStub<WorkflowObject>;

/** The totals as a new instance of the object reads them from storage alone, as after an eviction or a restart. */
function afterRestart(stub: Stub): Promise<{ totals: Totals; usage: { events: number; bytes_stored: number }; synced: number }> {
  return runInDurableObject(stub, async (_instance, state) => {
    const totals = new RunningTotals(sqlFor(state.storage, { kind: "workflow", id: state.id.toString() }));
    return { totals: totals.read(), usage: totals.usage(), synced: totals.syncedSeq() };
  });
}

/** The totals row as stored (id 1). */
function row(stub: Stub): Promise<Record<string, unknown>> {
  return runInDurableObject(stub, async (_instance, state) => state.storage.sql.exec("SELECT * FROM totals WHERE id = 1").one());
}

describe("the running totals", () => {
  it("are read back the same by an object started again after any write, with no totals row written by the writes", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Counted" }));
    const untouched = await row(stub);
    const parent = value(await stub.startTask(ACME, { workflow_id: id, name: "P", goal: "g" }));
    const child = value(await stub.startTask(ACME, { workflow_id: id, parent_task_id: parent.task_id, name: "C", goal: "g" }));
    const steps: [string, () => Promise<unknown>, Partial<Totals>][] = [
      [
        "log_decision",
        () => stub.logDecision(ACME, { task_id: child.task_id, category: "other", question: "Q", chosen: "A", reasoning: "R" }),
        { decisions: 1 },
      ],
      [
        "log_issue",
        () =>
          stub.logIssue(ACME, { task_id: child.task_id, type: "other", description: "D", resolution: "R", requires_human_review: true }),
        { issues: 1, reviews_needed: 1 },
      ],
      ["log_milestone", () => stub.logMilestone(ACME, { task_id: child.task_id, message: "m" }), {}],
      [
        "complete_task",
        () =>
          stub.completeTask(ACME, {
            task_id: child.task_id,
            status: "success",
            outcome: { summary: "s" },
            metrics: { input_tokens: 10, output_tokens: 5, cost_usd: 0.25 },
            changes: {
              type: "checksum",
              transitions: ["a.ts", "b.ts"].map((path) => ({ path, before: null, after: file(path) })),
            },
          }),
        { open_tasks: 1, files_changed: 2, input_tokens: 10, output_tokens: 5, cost_usd: 0.25 },
      ],
      [
        "a reviewer's feedback",
        () => stub.addFeedback(ACME, { target: "workflow", target_id: id, verdict: "comment", body: "b", ...ON_PAGE }),
        {},
      ],
      [
        "complete_task (parent)",
        () =>
          stub.completeTask(ACME, {
            task_id: parent.task_id,
            status: "success",
            outcome: { summary: "s" },
            changes: { type: "checksum", transitions: ["b.ts", "c.ts"].map((path) => ({ path, before: null, after: file(path) })) },
          }),
        { open_tasks: 0, files_changed: 3 },
      ],
    ];
    let expected: Totals = value(await stub.readHead(ACME, false)).totals;
    expect(expected).toMatchObject({ tasks: 2, open_tasks: 2 });
    for (const [step, write, change] of steps) {
      const before = (await afterRestart(stub)).usage.events;
      await write();
      expected = { ...expected, ...change };
      const head = value(await stub.readHead(ACME, false)).totals;
      const restarted = await afterRestart(stub);
      expect({ step, totals: restarted.totals }).toEqual({ step, totals: head });
      expect({ step, totals: head }).toMatchObject({ step, totals: expected });
      // Every write counts its events once.
      const events = await runInDurableObject(
        stub,
        async (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM events").one().n,
      );
      expect({ step, events: restarted.usage.events }).toEqual({ step, events });
      expect(restarted.usage.events).toBeGreaterThanOrEqual(before);
    }
    // No write rewrote the totals row: the writes' events carried the totals (an alarm's push may
    // have stored the account's acknowledgement on it meanwhile).
    const { synced_seq: _now, ...now } = await row(stub);
    const { synced_seq: _then, ...then } = untouched;
    expect(now).toEqual(then);
  });

  it("take the account's acknowledgement stored between writes, and a write without events stores them on the row", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Acknowledged" }));
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "g" }));
    value(await stub.logMilestone(ACME, { task_id: task.task_id, message: "m" }));
    // The alarm's push stores what the account took on the row, outside any write.
    await pushToAccount(stub);
    const last = await runInDurableObject(stub, async (_i, state) => state.storage.sql.exec("SELECT max(seq) AS n FROM events").one().n);
    expect((await afterRestart(stub)).synced).toBe(last);
    // A write that appends no event (the agent's call takes feedback it already took: nothing) keeps the totals as they were.
    const before = await afterRestart(stub);
    const taken = await runInDurableObject(stub, async (instance) => {
      const object = instance as unknown as { writer: { run: (...args: unknown[]) => Promise<unknown> } };
      return object.writer.run(
        "noop",
        {},
        () => null,
        () => ({}),
      );
    });
    expect(taken).toMatchObject({ ok: true });
    const after = await afterRestart(stub);
    expect(after).toEqual(before);
    expect(await row(stub)).toMatchObject({ seq: last, events: before.usage.events, synced_seq: last });
    // The next write counts on from there.
    value(await stub.logMilestone(ACME, { task_id: task.task_id, message: "n" }));
    expect((await afterRestart(stub)).usage.events).toBe(before.usage.events + 1);
  });
});
