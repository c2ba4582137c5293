/**
 * What one request reads does not grow with the workflow (docs/storage.md, "What a request
 * reads"): each request kind's rows read (the meter's count of what SQLite reports, as billed)
 * on a workflow filled through the object's own writes at two sizes, ten times apart.
 */
import { runInDurableObject } from "cloudflare:test";
import { reviewCounts } from "@waymark/protocol/review-counts";
import { describe, expect, it } from "vitest";
import { newWorkflowId } from "../../src/ids";
import { LIMITS } from "../../src/limits";
import { meter } from "../../src/meter";
import { sqlFor } from "../../src/storage/sql";
import { HeadFigures } from "../../src/workflow/head-figures";
import { PlanProgress } from "../../src/workflow/plan-progress";
import type { WorkflowObject } from "../../src/workflow/workflow-object";
import { file } from "../domain/fixtures";
import { readWhole, stubFor, value } from "./rpc";

const ACME = "acme";
const HEAD = "a".repeat(40);
/** The credential the tasks are recorded with, and one that recorded none. */
const AGENT = "b:agent";
const REVIEWER = "b:reviewer";
const PLAN = [
  { step: "1", goal: "Parse the input" },
  { step: "2", goal: "Check the output" },
];

/** Rows read by each step, in order: the meter on only while the steps run. */
async function rowsRead(steps: (() => Promise<unknown>)[]): Promise<number[]> {
  const wasOn = meter.on;
  meter.on = true;
  try {
    const read: number[] = [];
    for (const step of steps) {
      const before = meter.read().objects.workflow.rows_read;
      await step();
      read.push(meter.read().objects.workflow.rows_read - before);
    }
    return read;
  } finally {
    meter.on = wasOn;
  }
}

/** Rows read by one step. */
async function rowsReadBy(step: () => Promise<unknown>): Promise<number> {
  const [read] = await rowsRead([step]);
  return read ?? 0;
}

/**
 * A workflow of `tasks` tasks with `logs` log entries each (a third decisions, a third issues, one
 * issue in seven asking for review, a third milestones), every task completed with four files;
 * then `measure` runs on the same instance.
 */
async function filled<T>(
  tasks: number,
  logs: number,
  measure: (o: WorkflowObject, lastSeq: number) => Promise<T>,
  /** `nested`: every second task a subtask of the one before; `plan`: the workflow's plan, which every tenth task names. */
  options: { nested?: boolean; plan?: boolean } = {},
): Promise<T> {
  const nested = options.nested ?? false;
  const id = newWorkflowId();
  return runInDurableObject(stubFor(id), async (o, state) => {
    value(await o.startWorkflow(ACME, id, { name: "Sized", ...(options.plan ? { plan: PLAN } : {}) }));
    const ids: string[] = [];
    for (let i = 0; i < tasks; i++) {
      const parent = nested && i % 2 === 1 ? { parent_task_id: ids[i - 1] } : {};
      const task = value(
        await o.startTask(
          ACME,
          {
            workflow_id: id,
            name: i % 10 === 0 ? `${(i / 10) % 2 === 0 ? "1" : "2"}. T${i}` : `T${i}`,
            goal: "g",
            ...parent,
            snapshot: { type: "git", head: HEAD, dirty: [] },
          },
          AGENT,
        ),
      ).task_id;
      ids.push(task);
      for (let l = 0; l < logs; l++) {
        if (l % 3 === 0)
          value(await o.logDecision(ACME, { task_id: task, category: "other", question: `q${l}`, chosen: "c", reasoning: "r" }));
        else if (l % 3 === 1)
          value(
            await o.logIssue(ACME, {
              task_id: task,
              type: "other",
              description: `d${l}`,
              resolution: "r",
              requires_human_review: l % 7 === 1,
            }),
          );
        else value(await o.logMilestone(ACME, { task_id: task, message: `m${l}` }));
      }
      const done = async (task: string, i: number) =>
        value(
          await o.completeTask(
            ACME,
            {
              task_id: task,
              status: "success",
              outcome: { summary: "Done.", ...(i % 11 === 0 ? { manual_review_needed: true } : {}) },
              changes: {
                type: "git",
                start_head: HEAD,
                head: HEAD,
                committed: [],
                dirty: [0, 1, 2, 3].map((k) => ({ path: `src/f${i}-${k}.ts`, head: file(`o${i}`), worktree: file(`n${i}`) })),
              },
            },
            AGENT,
          ),
        );
      // A parent completes after its subtask.
      if (!nested) await done(task, i);
      else if (i % 2 === 1) {
        await done(task, i);
        await done(ids[i - 1] as string, i - 1);
      }
    }
    const lastSeq = state.storage.sql.exec<{ seq: number }>("SELECT max(seq) AS seq FROM events").one().seq;
    return measure(o, lastSeq);
  });
}

/** The same measurement on a workflow of 20 tasks and on one of 200 (about 800 and 8,000 events). */
async function atTwoSizes<T>(
  measure: (o: WorkflowObject, lastSeq: number) => Promise<T>,
  options: { nested?: boolean; plan?: boolean } = {},
): Promise<{ small: T; large: T }> {
  return { small: await filled(20, 38, measure, options), large: await filled(200, 38, measure, options) };
}

describe("rows read per request, at two sizes of workflow", () => {
  it("the resume (get_workflow, a helper's kept state) reads the newest issues, those asking for review first, not every issue", async () => {
    const flags = (state: { recent_issues: { requires_human_review: boolean }[] }) =>
      state.recent_issues.map((i) => i.requires_human_review);
    const { small, large } = await atTwoSizes(async (o) => {
      // The first resume of an instance reads the running tasks' ids once (records.openTasks).
      value(await o.resume(ACME, 5, false));
      const read = { five: await rowsReadBy(() => o.resume(ACME, 5, false)), sixty: await rowsReadBy(() => o.resume(ACME, 60, false)) };
      return { read, five: flags(value(await o.resume(ACME, 5, false))), sixty: flags(value(await o.resume(ACME, 60, false))) };
    });
    expect(small.five).toEqual(Array(5).fill(true));
    expect(large.five).toEqual(Array(5).fill(true));
    // 20 tasks hold 40 issues asking for review: the newest others fill the rest.
    expect(small.sixty).toEqual([...Array(40).fill(true), ...Array(20).fill(false)]);
    expect(large.sixty).toEqual(Array(60).fill(true));
    // Read before: every issue, sorted (568 rows at 20 tasks, 5,249 at 200; now 53 and 54).
    expect(large.read.five).toBeLessThanOrEqual(small.read.five + 5);
    expect(large.read.five).toBeLessThan(100);
    expect(large.read.sixty).toBeLessThanOrEqual(small.read.sixty + 5);
    expect(large.read.sixty).toBeLessThan(300);
  });

  it("the resume of a workflow with a plan reads no completed task past those it lists: each step's tasks are kept", async () => {
    const { small, large } = await atTwoSizes(
      async (o) => {
        value(await o.resume(ACME, 5, false));
        const read = await rowsReadBy(() => o.resume(ACME, 5, false));
        const progress = value(await o.resume(ACME, 5, false)).plan_progress ?? [];
        return { read, done: progress.map((step) => step.done_by.length) };
      },
      { plan: true },
    );
    // Every tenth task names a step, alternately.
    expect(small.done).toEqual([1, 1]);
    expect(large.done).toEqual([10, 10]);
    // Read before: every completed task, two rows each (93 rows at 20 tasks, 454 at 200; now 53 and 54).
    expect(large.read).toBeLessThanOrEqual(small.read + 5);
    expect(large.read).toBeLessThan(100);
  });

  it("a plan's progress, kept, is what matching every completed task gives, through completions, a failed task and a write that rolled back", async () => {
    const id = newWorkflowId();
    const seen = await runInDurableObject(stubFor(id), async (o, state) => {
      value(await o.startWorkflow(ACME, id, { name: "Planned", plan: PLAN }));
      const progress = async () => value(await o.resume(ACME, 5, false)).plan_progress;
      const fresh = () => new PlanProgress(sqlFor(state.storage, { kind: "workflow", id })).of(PLAN);
      const start = async (name: string, goal = "g") => value(await o.startTask(ACME, { workflow_id: id, name, goal })).task_id;
      const steps: unknown[][] = [];
      const a = await start("1. parse");
      const b = await start("other", "Check the output now");
      // Kept from here on: the first resume reads them.
      steps.push([await progress(), fresh()]);
      value(await o.completeTask(ACME, { task_id: b, status: "success", outcome: { summary: "ok" } }));
      value(await o.completeTask(ACME, { task_id: a, status: "failed", outcome: { summary: "no" } }));
      const c = await start("Step 1: again");
      // Refused inside its write (a file list the start snapshot does not explain): nothing kept of it.
      const refused = await o.completeTask(ACME, {
        task_id: c,
        status: "success",
        outcome: { summary: "ok" },
        changes: { type: "git", start_head: HEAD, head: HEAD, committed: [], dirty: [] },
      });
      steps.push([await progress(), fresh()]);
      value(await o.completeTask(ACME, { task_id: c, status: "success", outcome: { summary: "ok" } }));
      steps.push([await progress(), fresh()]);
      return { steps, refused: refused.ok, ids: { b, c } };
    });
    expect(seen.refused).toBe(false);
    for (const [kept, counted] of seen.steps) expect(kept).toEqual(counted);
    expect(seen.steps.map(([kept]) => (kept as { done_by: string[] }[]).map((step) => step.done_by))).toEqual([
      [[], []],
      [[], [seen.ids.b]],
      [[seen.ids.c], [seen.ids.b]],
    ]);
  });

  it("a page's head after a write reads no task or issue either: its figures are kept and each write adds to them", async () => {
    const { small, large } = await atTwoSizes(async (o, _lastSeq) => {
      value(await o.readHead(ACME, true));
      const id = value(await o.readHead(ACME, true)).workflow.id;
      const task = value(await o.startTask(ACME, { workflow_id: id, name: "After", goal: "g" }, AGENT)).task_id;
      value(await o.logIssue(ACME, { task_id: task, type: "other", description: "d", resolution: "r", requires_human_review: true }));
      value(
        await o.completeTask(ACME, { task_id: task, status: "success", outcome: { summary: "ok", manual_review_needed: true } }, AGENT),
      );
      const read = await rowsReadBy(() => o.readHead(ACME, true));
      const head = value(await o.readHead(ACME, true));
      const whole = value(await readWhole(stubFor(id), ACME));
      const fresh = new HeadFigures(sqlFor((o as unknown as { ctx: DurableObjectState }).ctx.storage, { kind: "workflow", id }));
      return {
        read,
        head: { review: head.review, review_items: head.review_items, line_totals: head.line_totals },
        counted: {
          review: reviewCounts(whole, head.feedback ?? []),
          review_items: { tasks: fresh.askedTasks(), issues: fresh.flaggedIssues().length },
          line_totals: fresh.lineTotals(),
        },
      };
    });
    expect(small.head).toEqual(small.counted);
    expect(large.head).toEqual(large.counted);
    expect(large.head.review_items).toEqual({ tasks: 20, issues: 401 });
    // Read before by the first head after a write: every task's facts, the flagged issues, the flagged tasks, the
    // top-level tasks' lines (170 rows at 20 tasks, 1,610 at 200 with the flagged issues read through their index;
    // on main, every issue too). Now 4 and 4.
    expect(large.read).toBeLessThanOrEqual(small.read + 5);
    expect(large.read).toBeLessThan(20);
  });

  it("a page's head, read again before the next write, reads no task or issue", async () => {
    const { small, large } = await atTwoSizes(async (o) => {
      // The first read after a write counts the review figures; the next reads reuse them.
      const first = value(await o.readHead(ACME, true));
      const read = await rowsRead([() => o.readHead(ACME, true), () => o.readHead(ACME, false)]);
      return { read, review_items: first.review_items };
    });
    expect(small.review_items).toEqual({ tasks: 2, issues: 40 });
    expect(large.review_items).toEqual({ tasks: 19, issues: 400 });
    // Read before by every head: every task's outcome and every issue (1,165 rows at 200 tasks for a link's reader).
    expect(large.read).toEqual(small.read);
    expect(Math.max(...large.read)).toBeLessThan(10);
  });

  it("a timeline page finds a parent's files its subtasks changed by reading its subtasks' files, not every task's", async () => {
    const { small, large } = await atTwoSizes(
      async (o) => {
        const page = value(await o.readTasks(ACME, null, 10, 20));
        const read = await rowsReadBy(() => o.readTasks(ACME, null, 10, 20));
        return { read, entries: page.entries.map((e) => [e.depth, e.subtasks]) };
      },
      { nested: true },
    );
    expect(small.entries).toEqual(large.entries);
    expect(large.entries).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? [0, 1] : [1, 0])));
    // Read before: every task's file pages for each parent on the page (1,865 rows at 20 tasks, 3,668 at 200; now 1,676 and 1,678).
    // Since v27 the page's log entries are read in their tasks' windows, whose ends take in the other entries of the same
    // millisecond: a few rows more or fewer from run to run, whatever the workflow's size.
    expect(large.read).toBeLessThanOrEqual(small.read + 40);
  });

  it("an object's start asks whether its event log needs chaining with one row, and chains an unhashed tail as it was", async () => {
    const { small, large } = await atTwoSizes(async (o) => {
      const log = (o as unknown as { log: { backfillChain(): void } }).log;
      const read = await rowsReadBy(async () => log.backfillChain());
      return { read };
    });
    // Read before at every start of the object: every event (801 and 8,001 rows).
    expect(large.read).toBe(small.read);
    expect(large.read).toBeLessThanOrEqual(1);
    const id = newWorkflowId();
    const chained = await runInDurableObject(stubFor(id), async (o, state) => {
      value(await o.startWorkflow(ACME, id, { name: "Tail" }));
      const task = value(await o.startTask(ACME, { workflow_id: id, name: "T", goal: "g" })).task_id;
      for (let n = 0; n < 5; n++) value(await o.logMilestone(ACME, { task_id: task, message: `m${n}` }));
      const hashes = () => state.storage.sql.exec<{ hash: string | null }>("SELECT hash FROM events ORDER BY seq").toArray();
      const before = hashes();
      // As a start interrupted midway through the chaining would leave it: the oldest hashed, the rest not.
      state.storage.sql.exec("UPDATE events SET hash = NULL WHERE seq > 3");
      (o as unknown as { log: { backfillChain(): void } }).log.backfillChain();
      return { before, after: hashes() };
    });
    expect(chained.before).toHaveLength(7);
    expect(chained.after).toEqual(chained.before);
  });

  it("a page of an unsigned workflow's device-signed payloads reads at most a page of events, not every event after the cursor", async () => {
    const { small, large } = await atTwoSizes(async (o, lastSeq) => {
      let after = 0;
      let pages = 0;
      const read: number[] = [];
      for (;;) {
        let next: number | null = null;
        read.push(
          ...(await rowsRead([
            async () => {
              const page = value(await o.readDeviceSigned(ACME, after, lastSeq));
              expect(page.parts).toEqual([]);
              next = page.next;
            },
          ])),
        );
        pages++;
        if (next === null) break;
        after = next;
      }
      return { pages, max: Math.max(...read), events: lastSeq };
    });
    // Read before: every event after the cursor (one page of 8,000 rows at 200 tasks). Now a span
    // of EVENTS_PAGE events and what the reader's check reads.
    expect(large.max).toBeLessThanOrEqual(small.max + 5);
    expect(large.max).toBeLessThanOrEqual(LIMITS.EVENTS_PAGE + 50);
    expect(large.pages).toBe(Math.ceil(large.events / LIMITS.EVENTS_PAGE));
  });

  it("whether a reviewer recorded tasks is read once per instance, then kept (starts and completions add theirs)", async () => {
    const { small, large } = await atTwoSizes(async (o) => {
      const asked = [value(await o.recordedWith(ACME, AGENT)), value(await o.recordedWith(ACME, REVIEWER))];
      const read = await rowsRead([() => o.recordedWith(ACME, AGENT), () => o.recordedWith(ACME, REVIEWER)]);
      return { asked, read };
    });
    expect(small.asked).toEqual([true, false]);
    expect(large.asked).toEqual([true, false]);
    // Read before by each ask: every task (200 rows at 200 tasks for a credential that recorded none).
    expect(large.read).toEqual([0, 0]);
  });

  it("a credential that records its first task is known at once, and one whose write rolled back is not", async () => {
    const id = newWorkflowId();
    const asked = await runInDurableObject(stubFor(id), async (o) => {
      value(await o.startWorkflow(ACME, id, { name: "Writers" }));
      const before = value(await o.recordedWith(ACME, REVIEWER));
      const task = value(await o.startTask(ACME, { workflow_id: id, name: "T", goal: "g" }, AGENT)).task_id;
      const afterStart = [value(await o.recordedWith(ACME, AGENT)), value(await o.recordedWith(ACME, REVIEWER))];
      // Refused inside its write (no such parent task): nothing recorded with the reviewer's credential.
      const refused = await o.startTask(
        ACME,
        { workflow_id: id, name: "U", goal: "g", parent_task_id: "tk_nosuchtaskaaaaaaaaaaa" },
        REVIEWER,
      );
      const afterRefused = value(await o.recordedWith(ACME, REVIEWER));
      value(await o.completeTask(ACME, { task_id: task, status: "success", outcome: { summary: "ok" } }, REVIEWER));
      return { before, afterStart, refused: refused.ok, afterRefused, afterCompletion: value(await o.recordedWith(ACME, REVIEWER)) };
    });
    expect(asked).toEqual({ before: false, afterStart: [true, false], refused: false, afterRefused: false, afterCompletion: true });
  });

  it("a long-running task's log count, timeline entry and last milestone read its window and its own entries, not every entry since it started", async () => {
    /** A task open while other tasks log `entries` entries (half decisions, half milestones), then logs one of each itself. */
    const withLongTask = (entries: number) => {
      const id = newWorkflowId();
      return runInDurableObject(stubFor(id), async (o) => {
        value(await o.startWorkflow(ACME, id, { name: "Long" }));
        const long = value(await o.startTask(ACME, { workflow_id: id, name: "Orchestrate", goal: "g" })).task_id;
        value(await o.logMilestone(ACME, { task_id: long, message: "early" }));
        for (let n = 0; n < entries / 10; n++) {
          const task = value(await o.startTask(ACME, { workflow_id: id, name: `T${n}`, goal: "g" })).task_id;
          for (let m = 0; m < 5; m++) {
            value(await o.logMilestone(ACME, { task_id: task, message: `m${m}` }));
            value(await o.logDecision(ACME, { task_id: task, category: "other", question: `q${m}`, chosen: "c", reasoning: "r" }));
          }
          value(await o.completeTask(ACME, { task_id: task, status: "success", outcome: { summary: "s" } }));
        }
        value(await o.logMilestone(ACME, { task_id: long, message: "late" }));
        // Its first decision reads its count of decisions (then kept).
        const count = await rowsReadBy(() =>
          o.logDecision(ACME, { task_id: long, category: "other", question: "q", chosen: "c", reasoning: "r" }),
        );
        // The timeline's first two entries: the long task and the first other one, in either order (they may start in one millisecond).
        const page = value(await o.readTasks(ACME, null, 2));
        const timeline = await rowsReadBy(() => o.readTasks(ACME, null, 2));
        // The running tasks' ids are read once per instance (a scan of the tasks, then kept): read them first.
        const state = value(await o.resume(ACME, 5, false));
        const resume = await rowsReadBy(() => o.resume(ACME, 5, false));
        return {
          read: { count, timeline, resume },
          logs: page.entries.filter((e) => e.task.id === long).map((e) => [e.decisions.length, e.milestones.map((m) => m.message)]),
          last: state.open_tasks.map((t) => t.last_milestone),
        };
      });
    };
    // Both past the window (LOG_WINDOW_EVENTS events): 300 and 3,000 entries of other tasks.
    const small = await withLongTask(300);
    const large = await withLongTask(3000);
    expect(large.logs).toEqual([[1, ["early", "late"]]]);
    expect(small.logs).toEqual(large.logs);
    expect(large.last).toEqual(["late"]);
    // A window holds at most LOG_WINDOW_EVENTS events (the timeline's two tasks: two windows, mostly shared) and the entries
    // that share its ends' milliseconds (a few, more or fewer from run to run): the same at ten times the entries.
    const bound = { count: LIMITS.LOG_WINDOW_EVENTS, timeline: 2 * LIMITS.LOG_WINDOW_EVENTS, resume: LIMITS.LOG_WINDOW_EVENTS };
    for (const kind of ["count", "timeline", "resume"] as const) {
      expect(large.read[kind], kind).toBeLessThanOrEqual(small.read[kind] + 30);
      expect(large.read[kind], kind).toBeLessThanOrEqual(bound[kind] + 60);
    }
  }, 120_000);

  it("the resume reads a long-running task's newest milestone along the task index, not every milestone it logged", async () => {
    /** One running task that logs its window full of milestones, then `past` more (in the task index). */
    const withMilestones = (past: number) => {
      const id = newWorkflowId();
      return runInDurableObject(stubFor(id), async (o, state) => {
        value(await o.startWorkflow(ACME, id, { name: "Long" }));
        const task = value(await o.startTask(ACME, { workflow_id: id, name: "Long", goal: "g" })).task_id;
        const total = LIMITS.LOG_WINDOW_EVENTS + past;
        for (let n = 1; n <= total; n++) {
          // Its window closes with its LOG_WINDOW_EVENTS-th event (the first entry in the index): the later ones a millisecond on.
          if (n === LIMITS.LOG_WINDOW_EVENTS + 1) await scheduler.wait(2);
          value(await o.logMilestone(ACME, { task_id: task, message: `m${n}` }));
        }
        // The running tasks' ids are read once per instance: read them first.
        value(await o.resume(ACME, 5, false));
        const plan = state.storage.sql
          .exec<{ detail: string }>(
            "EXPLAIN QUERY PLAN SELECT * FROM log_entries INDEXED BY log_entries_task WHERE kind = 'milestones' AND in_task_index = 1 AND task_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
            task,
          )
          .toArray()
          .map((row) => row.detail);
        // Its newest in the tables' order (created_at, id): entries of one millisecond are ordered by their ids.
        const newest = state.storage.sql
          .exec<{ message: string }>("SELECT message FROM log_entries WHERE kind = 'milestones' ORDER BY created_at DESC, id DESC LIMIT 1")
          .one().message;
        return {
          read: await rowsReadBy(() => o.resume(ACME, 5, false)),
          last: value(await o.resume(ACME, 5, false)).open_tasks.map((t) => t.last_milestone),
          newest: [newest],
          plan,
        };
      });
    };
    const small = await withMilestones(10);
    const large = await withMilestones(LIMITS.LOGS_PER_TASK - LIMITS.LOG_WINDOW_EVENTS);
    expect([small.last, large.last]).toEqual([small.newest, large.newest]);
    // Its newest index entry is the first the index gives, newest first (the table's key follows the task id in it): no sort.
    expect(large.plan).toEqual(["SEARCH log_entries USING INDEX log_entries_task (kind=? AND task_id=?)"]);
    // The same rows at ten times the task's own milestones, its window unread (15; before: every one of them, 240 and 421).
    expect(large.read).toBe(small.read);
    expect(large.read).toBeLessThanOrEqual(30);
  });

  it("the resume reads the log windows of tasks running at once together: the rows they share once, not once per task", async () => {
    const id = newWorkflowId();
    const { read, last, expected } = await runInDurableObject(stubFor(id), async (o) => {
      value(await o.startWorkflow(ACME, id, { name: "Many at once" }));
      const running: string[] = [];
      for (let n = 0; n < 40; n++) running.push(value(await o.startTask(ACME, { workflow_id: id, name: `T${n}`, goal: "g" })).task_id);
      for (const [n, task] of running.entries()) value(await o.logMilestone(ACME, { task_id: task, message: `m${n}` }));
      // The running tasks' ids are read once per instance: read them first.
      const state = value(await o.resume(ACME, 5, false));
      return {
        read: await rowsReadBy(() => o.resume(ACME, 5, false)),
        last: Object.fromEntries(state.open_tasks.map((t) => [t.task_id, t.last_milestone])),
        expected: Object.fromEntries(running.map((task, n) => [task, `m${n}`])),
      };
    });
    expect(last).toEqual(expected);
    // 40 windows over the same 80 events, read together: 490 rows, the running tasks' rows and windows' events included
    // (read apart, a statement a task: 2,128).
    expect(read).toBeLessThanOrEqual(600);
  });
});
