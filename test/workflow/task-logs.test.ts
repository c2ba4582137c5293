/**
 * A task's log entries without a task index entry for most of them (workflow/task-logs): an entry
 * written within LIMITS.LOG_WINDOW_EVENTS events of its task's start is found by the log table's
 * key in its task's window, a later one through the partial task index. A long-running task whose
 * entries are on both sides of its window, with other tasks' entries between, reads back whole
 * and in order everywhere a task's entries are read: its timeline entry (the page and exports),
 * its log count (the bound check of the next log), the resume's last milestone.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TaskPage } from "../../src/domain/view";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { failure, readWhole, stubFor, value } from "./rpc";

const ACME = "acme";

type Stub = DurableObjectStub<WorkflowObject>;

/** Tasks other than `long` that log `entries` milestones in all (ten each), each completed; returns their ids. */
async function othersLog(stub: Stub, workflowId: string, entries: number, parent?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < entries / 10; n++) {
    const task = value(
      await stub.startTask(ACME, { workflow_id: workflowId, name: `Other ${n}`, goal: "g", ...(parent ? { parent_task_id: parent } : {}) }),
    ).task_id;
    ids.push(task);
    for (let m = 0; m < 10; m++) value(await stub.logMilestone(ACME, { task_id: task, message: `other ${n}.${m}` }));
    value(await stub.completeTask(ACME, { task_id: task, status: "success", outcome: { summary: "s" } }));
  }
  return ids;
}

/** Which of a task's entries are in the task index (1) or found in its window (0), by message or question. */
async function indexMarks(stub: Stub, taskId: string): Promise<Record<string, number>> {
  return runInDurableObject(stub, async (_o, state) =>
    Object.fromEntries(
      state.storage.sql
        .exec<{ text: string; mark: number }>(
          `SELECT question AS text, in_task_index AS mark FROM log_entries WHERE kind = 'decisions' AND task_id = ?1
           UNION ALL SELECT message, in_task_index FROM log_entries WHERE kind = 'milestones' AND task_id = ?1`,
          taskId,
        )
        .toArray()
        .map((row) => [row.text, row.mark]),
    ),
  );
}

/** A log write that fails inside its transaction: the object forgets what it kept (the log counts among them). */
async function forgetKept(stub: Stub): Promise<void> {
  failure(await stub.logMilestone(ACME, { task_id: "tk_nosuchtask_aaaaaaaa", message: "m" }));
}

describe("a task's log entries, in and out of its task index", () => {
  it("a long-running parent's entries on both sides of its window read back whole and in order, counted and resumed", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Long" }));
    const long = value(await stub.startTask(ACME, { workflow_id: id, name: "Orchestrate", goal: "g" })).task_id;
    const decide = async (question: string) =>
      value(await stub.logDecision(ACME, { task_id: long, category: "other", question, chosen: "c", reasoning: "r" }));
    await decide("early decision");
    for (const message of ["early 1", "early 2", "early 3"]) value(await stub.logMilestone(ACME, { task_id: long, message }));
    // More events than its window between its early and its late entries, some from its subtasks.
    await othersLog(stub, id, 150, long);
    await othersLog(stub, id, 100);
    await decide("late decision");
    for (const message of ["late 1", "late 2"]) value(await stub.logMilestone(ACME, { task_id: long, message }));

    expect(await indexMarks(stub, long)).toEqual({
      "early decision": 0,
      "early 1": 0,
      "early 2": 0,
      "early 3": 0,
      "late decision": 1,
      "late 1": 1,
      "late 2": 1,
    });

    // The timeline's entries (pages and exports) hold each task's entries as the whole view lists them.
    const whole = value(await readWhole(stub, ACME));
    const entries: TaskPage["entries"] = [];
    let cursor: string | null = null;
    do {
      const page: TaskPage = value(await stub.readTasks(ACME, cursor, 7));
      entries.push(...page.entries);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(entries).toHaveLength(whole.tasks.length);
    for (const entry of entries) {
      const own = <T extends { task_id: string }>(rows: T[]) => rows.filter((row) => row.task_id === entry.task.id);
      expect(entry.decisions).toEqual(own(whole.decisions));
      expect(entry.issues).toEqual(own(whole.issues));
      expect(entry.milestones).toEqual(own(whole.milestones));
    }
    const parent = entries.find((entry) => entry.task.id === long);
    expect(parent?.decisions.map((d) => d.question)).toEqual(["early decision", "late decision"]);
    expect(parent?.milestones.map((m) => m.message)).toEqual(["early 1", "early 2", "early 3", "late 1", "late 2"]);

    // Its count of milestones read anew (the object forgot the one it kept) counts both sides: the advice names it.
    await forgetKept(stub);
    const next = value(await stub.logMilestone(ACME, { task_id: long, message: "late 3" }));
    expect(next.warnings).toEqual([`6 milestones on this task; the protocol advises at most ${LIMITS.MILESTONES_ADVISED}.`]);

    // The resume names its newest milestone.
    const state = value(await stub.resume(ACME, 5, false));
    expect(state.open_tasks).toEqual([expect.objectContaining({ task_id: long, last_milestone: "late 3" })]);
  });

  it("the log's times never go back: a write after an event stamped later than the clock is stamped no earlier", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Clock" }));
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "g" })).task_id;
    const ahead = Date.now() + 3_600_000;
    await runInDurableObject(stub, async (_o, state) => {
      state.storage.sql.exec("UPDATE events SET at = ? WHERE seq = (SELECT max(seq) FROM events)", ahead);
    });
    await forgetKept(stub);
    value(await stub.logMilestone(ACME, { task_id: task, message: "after" }));
    const stamped = await runInDurableObject(stub, async (_o, state) => ({
      entry: state.storage.sql.exec<{ at: number }>("SELECT created_at AS at FROM log_entries WHERE kind = 'milestones'").one().at,
      event: state.storage.sql.exec<{ at: number }>("SELECT at FROM events ORDER BY seq DESC LIMIT 1").one().at,
    }));
    expect(stamped).toEqual({ entry: ahead, event: ahead });
    // Found in its task's window, which starts before it.
    const page = value(await stub.readTasks(ACME, null, 5));
    expect(page.entries[0]?.milestones.map((m) => m.message)).toEqual(["after"]);
  });
  it("entries written in the same millisecond read back in the order they were written", async () => {
    const id = newWorkflowId();
    const stub = stubFor(id);
    value(await stub.startWorkflow(ACME, id, { name: "Bursts" }));
    const task = value(await stub.startTask(ACME, { workflow_id: id, name: "T", goal: "g" })).task_id;
    const written = Array.from({ length: 40 }, (_, n) => `step ${n}`);
    // Written from inside the object, with no request between them: the runtime's clock moves only
    // on I/O, so many of them share a millisecond (the test means something only where some do).
    const times = await runInDurableObject(stub, async (instance: WorkflowObject, state) => {
      for (const message of written) value(await instance.logMilestone(ACME, { task_id: task, message }));
      return state.storage.sql
        .exec<{ at: number }>("SELECT created_at AS at FROM log_entries WHERE kind = 'milestones'")
        .toArray()
        .map((row) => row.at);
    });
    expect(new Set(times).size).toBeLessThan(times.length);
    const page: TaskPage = value(await stub.readTasks(ACME, null, LIMITS.READ_PAGE_ITEMS));
    expect(page.entries[0]?.task.id).toBe(task);
    expect(page.entries[0]?.milestones.map((m) => m.message)).toEqual(written);
    expect(value(await readWhole(stub, ACME)).milestones.map((m) => m.message)).toEqual(written);
  });
});
