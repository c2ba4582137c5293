import type { EvidenceRun } from "@waymark/protocol/check-evidence";
import {
  type FactsTask,
  isReviewItem,
  type ReviewCounts,
  ReviewTally,
  reviewCounts,
  taskReviewFacts,
  type VerdictLike,
} from "@waymark/protocol/review-counts";
import { counted, enumLabel, formatUsd } from "@waymark/protocol/wording";
import { describe, expect, it } from "vitest";

const DONE = "2026-11-27T14:00:00.000Z";
const EDIT = "2026-11-27T13:50:00.000Z";
const SIGNED = { kind: "signed" as const, version: "0.1.0", device: { name: "laptop", fingerprint: `SHA256:${"A".repeat(43)}` } };

type Task = FactsTask & { id: string; completed_at: string | null };
let next = 0;
/** A completed task that needs nothing: succeeded, in its areas, files signed, no checks. */
function task(overrides: Partial<Task> = {}): Task {
  return {
    id: `tk_${++next}`,
    status: "success",
    completed_at: DONE,
    outcome: { summary: "done" } as Task["outcome"],
    metadata: null,
    verification: { unexpected_files: [] },
    files_changed: { source: SIGNED },
    metrics: null,
    ...overrides,
  };
}
const run = (command: string, at: string, exit_code: number | null, kinds: EvidenceRun["kinds"]): EvidenceRun => ({
  command,
  at,
  exit_code,
  duration_ms: 1200,
  kinds,
});
const asking = { summary: "done", manual_review_needed: true };
const usage = (source: "transcript" | "agent", device?: typeof SIGNED.device) => ({
  input_tokens: 100,
  output_tokens: 10,
  model: "m",
  cost_usd: 0.01,
  source,
  ...(device ? { device } : {}),
});
const verdict = (target_id: string, v: VerdictLike["verdict"], created_at = "2026-11-27T15:00:00.000Z"): VerdictLike => ({
  target_id,
  verdict: v,
  created_at,
});

/** Only the review part and the few totals a row is about. */
const summary = (c: ReviewCounts) => ({ ...c.review, failed: c.failed_tasks, outside: c.outside_areas, open_tasks: c.open_tasks });

describe("review counts: one reading for the page, the exports and the summary", () => {
  it.each<[string, Task[], { id: string; requires_human_review: boolean }[], (ids: string[]) => VerdictLike[], ReturnType<typeof summary>]>(
    [
      [
        "a task that needs nothing is no review item",
        [task()],
        [],
        () => [],
        { items: 0, open: 0, approved: 0, changes_requested: 0, failed: 0, outside: { tasks: 0, files: 0 }, open_tasks: 0 },
      ],
      [
        "a failed task, a task asking for review and a task outside its areas are one item each",
        [task({ status: "failed" }), task({ outcome: asking }), task({ verification: { unexpected_files: ["README.md"] } })],
        [],
        () => [],
        { items: 3, open: 3, approved: 0, changes_requested: 0, failed: 1, outside: { tasks: 1, files: 1 }, open_tasks: 0 },
      ],
      [
        "a task that asked for review AND changed files outside its areas is one item; files beyond the list count",
        [task({ outcome: asking, verification: { unexpected_files: ["a", "b"], more: { unexpected_files: 3 } } })],
        [],
        () => [],
        { items: 1, open: 1, approved: 0, changes_requested: 0, failed: 0, outside: { tasks: 1, files: 5 }, open_tasks: 0 },
      ],
      [
        "an approval settles an item; a later request for changes opens it again; comments change nothing",
        [task({ status: "failed" }), task({ outcome: asking })],
        [],
        ([a, b]) => [
          verdict(a ?? "", "approved", "2026-11-27T15:00:00.000Z"),
          verdict(b ?? "", "approved", "2026-11-27T15:00:00.000Z"),
          verdict(b ?? "", "changes_requested", "2026-11-27T15:01:00.000Z"),
          verdict(a ?? "", "comment", "2026-11-27T15:02:00.000Z"),
        ],
        { items: 2, open: 1, approved: 1, changes_requested: 1, failed: 1, outside: { tasks: 0, files: 0 }, open_tasks: 0 },
      ],
      [
        "a verdict given before the task completed does not count",
        [task({ outcome: asking })],
        [],
        ([a]) => [verdict(a ?? "", "approved", "2026-11-27T13:00:00.000Z")],
        { items: 1, open: 1, approved: 0, changes_requested: 0, failed: 0, outside: { tasks: 0, files: 0 }, open_tasks: 0 },
      ],
      [
        "two verdicts at the same time: the one given last decides",
        [task({ status: "failed" })],
        [],
        ([a]) => [verdict(a ?? "", "changes_requested"), verdict(a ?? "", "approved")],
        { items: 1, open: 0, approved: 1, changes_requested: 0, failed: 1, outside: { tasks: 0, files: 0 }, open_tasks: 0 },
      ],
      [
        "an open task is no item yet, whatever it will claim; it is counted open",
        [task({ status: "in_progress", completed_at: null, outcome: null })],
        [],
        () => [],
        { items: 0, open: 0, approved: 0, changes_requested: 0, failed: 0, outside: { tasks: 0, files: 0 }, open_tasks: 1 },
      ],
      [
        "issues flagged for a human are items from the moment they are logged; others are not",
        [task()],
        [
          { id: "is_a", requires_human_review: true },
          { id: "is_b", requires_human_review: false },
        ],
        () => [verdict("is_a", "approved", "2020-01-01T00:00:00.000Z")],
        { items: 1, open: 0, approved: 1, changes_requested: 0, failed: 0, outside: { tasks: 0, files: 0 }, open_tasks: 0 },
      ],
    ],
  )("%s", (_name, tasks, issues, feedback, expected) => {
    const counts = reviewCounts({ tasks, issues }, feedback(tasks.map((t) => t.id)));
    expect(summary(counts)).toEqual(expected);
    // The same counts gathered one task at a time from kept facts (the workflow object's way).
    const tally = new ReviewTally();
    for (const t of tasks) tally.addTask(t, t.status === "in_progress" ? null : taskReviewFacts(t));
    for (const i of issues) tally.addIssue(i);
    expect(tally.counts(feedback(tasks.map((t) => t.id)))).toEqual(counts);
  });

  it.each<[string, Partial<Task>, ReturnType<typeof taskReviewFacts>["checks"]]>([
    ["nothing claimed, nothing observed: no check", {}, {}],
    ["a claim no hook observed", { metadata: { tests_status: "passed" } }, { test: { observed: "not_observed", claimed: "passed" } }],
    [
      "failing then passing after the last edit: passed",
      {
        metadata: { tests_status: "passed", commands_executed: ["npm test"] },
        commands: {
          runs: [run("npm test", "2026-11-27T13:55:00.000Z", 1, ["test"]), run("npm test", "2026-11-27T13:58:00.000Z", 0, ["test"])],
          omitted: 0,
          last_edit_at: EDIT,
        },
      },
      { test: { observed: "passed", claimed: "passed" } },
    ],
    [
      "passed before the last edit, nothing since: not run after it (whatever is claimed)",
      {
        metadata: { tests_status: "passed" },
        commands: { runs: [run("npm test", "2026-11-27T13:00:00.000Z", 0, ["test"])], omitted: 0, last_edit_at: EDIT },
      },
      { test: { observed: "not_run", claimed: "passed" } },
    ],
    [
      "a lint run that failed, its exit unknown for a build; claimed by listing the command",
      {
        metadata: { commands_executed: ["npm run lint"] },
        commands: {
          runs: [run("npm run lint", DONE, 2, ["lint"]), run("npm run build", DONE, null, ["build"])],
          omitted: 0,
          last_edit_at: null,
        },
      },
      {
        test: { observed: "not_run", claimed: null },
        build: { observed: "exit_unknown", claimed: null },
        lint: { observed: "failed", claimed: "ran" },
      },
    ],
  ])("checks of one task: %s", (_name, overrides, expected) => {
    expect(taskReviewFacts(task(overrides)).checks).toEqual(expected);
  });

  it("counts checks per kind and figures that are not computed and signed", () => {
    const tasks = [
      task({
        metadata: { tests_status: "passed" },
        commands: { runs: [run("npm test", DONE, 0, ["test"])], omitted: 0, last_edit_at: EDIT },
        metrics: usage("transcript", SIGNED.device),
      }),
      task({ metadata: { tests_status: "passed" }, files_changed: { source: { kind: "claimed", reason: "no device" } } }),
      task({ files_changed: { source: { kind: "not_observed", reason: "no helper" } }, metrics: usage("agent") }),
      task({ files_changed: { source: { kind: "helper", version: "0.0.9" } }, metrics: usage("transcript") }),
    ];
    const counts = reviewCounts({ tasks, issues: [] }, []);
    expect(counts.checks.test).toEqual({
      observed: { passed: 1, failed: 0, exit_unknown: 0, not_run: 0, not_observed: 1 },
      claimed: { passed: 2, failed: 0, not_run: 0, ran: 0, none: 0 },
    });
    expect(counts.checks.build.observed.passed + counts.checks.build.claimed.none).toBe(0);
    // Legacy records ("helper", a transcript without a device) read as claims.
    expect(counts.figures).toEqual({ files_claimed: 2, files_not_observed: 1, usage_claimed: 2 });
  });

  it("a task is a review item only once completed", () => {
    const facts = taskReviewFacts(task({ status: "failed" }));
    expect(isReviewItem("failed", facts)).toBe(true);
    expect(isReviewItem("in_progress", facts)).toBe(false);
    expect(isReviewItem("success", null)).toBe(false);
  });
});

describe("words a person reads", () => {
  it.each([
    ["bug_encountered", "Bug encountered"],
    ["dependency_conflict", "Dependency conflict"],
    ["library_choice", "Library choice"],
    ["trade_off", "Trade-off"],
    ["other", "Other"],
    ["Already Words", "Already Words"],
  ])("%s reads %s", (value, words) => expect(enumLabel(value)).toBe(words));

  it.each<[number, string, string | undefined, string]>([
    [0, "commit", undefined, "0 commits"],
    [1, "commit", undefined, "1 commit"],
    [2, "commit", undefined, "2 commits"],
    [12_345, "file", undefined, "12,345 files"],
    [1, "entry", "entries", "1 entry"],
    [3, "entry", "entries", "3 entries"],
  ])("%d %s", (n, one, many, words) => expect(counted(n, one, many)).toBe(words));

  it.each([
    [1.37, "$1.37"],
    [1.3749, "$1.37"],
    [0, "$0.00"],
    [0.004, "under $0.01"],
    [0.005, "$0.01"],
    [1204.5, "$1,204.50"],
  ])("$%d is %s", (usd, words) => expect(formatUsd(usd)).toBe(words));
});
