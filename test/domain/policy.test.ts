import { evaluatePolicy, type PolicyTask, parsePolicy, policyJsonSchema } from "@waymark/protocol/policy";
import { type FactsTask, type TaskFacts, taskFacts } from "@waymark/protocol/pr-facts";
import { describe, expect, it } from "vitest";
import published from "../../docs/schemas/policy-v1.json";
import { policyTask } from "./fixtures";

const WF = "wf_aaaaaaaaaaaaaaaaaaaa";
const EDIT = "2026-11-27T14:00:00.000Z";
const AFTER = "2026-11-27T14:05:00.000Z";
const BEFORE = "2026-11-27T13:55:00.000Z";

/** A task that satisfies every rule; each case changes one thing. */
const task = policyTask;

const ALL = {
  version: 1,
  rules: {
    verified: true,
    signed_figures: true,
    within_areas: true,
    tests_after_last_edit: true,
    tasks_closed: true,
    reviews_answered: true,
    agent_line_share: 80,
  },
} as const;

describe("the policy file's schema", () => {
  it("is the published JSON Schema (docs/schemas/policy-v1.json is generated from it)", () => {
    expect(published).toEqual(policyJsonSchema());
  });

  it.each<[string, unknown, string[] | null]>([
    ["only the version: report, never fail", { version: 1 }, null],
    ["every rule", ALL, null],
    ["a rule turned off", { version: 1, rules: { verified: false } }, null],
    ["no version", { rules: {} }, ["version: must be 1 (the only policy version)"]],
    ["another version", { version: 2 }, ["version: must be 1 (the only policy version)"]],
    ["not a map", ["verified"], ["policy: must be a map with version and rules"]],
    ["empty file (YAML null)", null, ["policy: must be a map with version and rules"]],
    [
      "a rule of another tool",
      { version: 1, rules: { require_signed: true } },
      [
        "rules.require_signed: not a field of the policy (known: verified, signed_figures, within_areas, tests_after_last_edit, tasks_closed, reviews_answered, agent_line_share)",
      ],
    ],
    ["a misplaced rule", { version: 1, verified: true }, ["verified: not a field of the policy (known: version, rules)"]],
    ["a rule as a string", { version: 1, rules: { verified: "yes" } }, ["rules.verified: must be true or false"]],
    [
      "a share as a fraction",
      { version: 1, rules: { agent_line_share: 0.8 } },
      ["rules.agent_line_share: must be a whole number of percent from 0 to 100"],
    ],
    [
      "a share past 100",
      { version: 1, rules: { agent_line_share: 101 } },
      ["rules.agent_line_share: must be a whole number of percent from 0 to 100"],
    ],
    [
      "a share as text",
      { version: 1, rules: { agent_line_share: "80%" } },
      ["rules.agent_line_share: must be a whole number of percent from 0 to 100"],
    ],
  ])("%s", (_, document, problems) => {
    const parsed = parsePolicy(document);
    if (problems === null) expect(parsed).toEqual({ policy: document });
    else expect(parsed).toEqual({ problems });
  });
});

describe("what fails the job", () => {
  it("without rules nothing fails, whatever is found", () => {
    const bad = task("t1", {
      status: "in_progress",
      outside_areas: ["x"],
      tests: "failed",
      figures: "claimed",
      record: { problems: ["x"] },
    });
    expect(evaluatePolicy({ version: 1 }, [bad])).toEqual([]);
  });

  it("a pull request whose tasks satisfy every rule passes", () => {
    expect(evaluatePolicy(ALL, [task("t1"), task("t2", { tests: "no_files", files: [] })])).toEqual([]);
  });

  const ref = (id: string) => ({ id, name: `Task ${id}`, workflow_id: WF });
  it.each<[string, Partial<PolicyTask>, Record<string, unknown>[]]>([
    [
      "a record that does not verify (a check that did not run included)",
      {
        record: { problems: ["signature: not checked (no endpoint reachable, no --key)", "git: commit 1234567 is not in this repository"] },
      },
      [
        { rule: "verified", file: null, message: "its record does not verify: signature: not checked (no endpoint reachable, no --key)" },
        { rule: "verified", file: null, message: "its record does not verify: git: commit 1234567 is not in this repository" },
      ],
    ],
    [
      "figures claimed by a client",
      { figures: "claimed" },
      [{ rule: "signed_figures", file: "src/a.ts", message: "its file changes are claimed by the client, not computed and signed" }],
    ],
    [
      "figures not observed",
      { figures: "not_observed" },
      [{ rule: "signed_figures", file: "src/a.ts", message: "its file changes are not observed, not computed and signed" }],
    ],
    [
      "two files outside the declared areas: one failure each, naming the file",
      { outside_areas: ["infra/deploy.sh", "README.md"] },
      [
        { rule: "within_areas", file: "infra/deploy.sh", message: "changed outside the areas the task declared" },
        { rule: "within_areas", file: "README.md", message: "changed outside the areas the task declared" },
      ],
    ],
    [
      "no test run observed after the last edit",
      { tests: "not_observed", test_run: null },
      [{ rule: "tests_after_last_edit", file: "src/a.ts", message: "no test run was observed passing after its last edit" }],
    ],
    [
      "the last test run after the last edit failed",
      { tests: "failed", test_run: { command: "npm test", at: AFTER, exit_code: 1 } },
      [{ rule: "tests_after_last_edit", file: "src/a.ts", message: "the last test run after its last edit failed (npm test, exit 1)" }],
    ],
    [
      "a task still in progress",
      { status: "in_progress" },
      [{ rule: "tasks_closed", file: null, message: "the task is still in progress" }],
    ],
    [
      "a manual review and an issue nobody approved",
      {
        open_reviews: [
          { kind: "task", id: "t1", text: "touches billing" },
          { kind: "issue", id: "is_aaaaaaaaaaaa", text: "flaky test skipped" },
        ],
      },
      [
        { rule: "reviews_answered", file: null, message: "it asked for a manual review that no person approved: touches billing" },
        { rule: "reviews_answered", file: null, message: "an issue requires human review that no person approved: flaky test skipped" },
      ],
    ],
  ])("%s", (_, change, expected) => {
    const failures = evaluatePolicy(ALL, [task("t1", change)]);
    expect(failures.map(({ rule, file, message }) => ({ rule, file, message }))).toEqual(expected);
    for (const failure of failures) {
      expect(failure.task).toEqual(ref("t1"));
      expect(failure.fix.length).toBeGreaterThan(10);
    }
  });

  it("a record that could not be read at all fails `verified` for the pull request (a check that did not run is no pass)", () => {
    expect(evaluatePolicy(ALL, [], "https://waymark.example: fetch failed")).toEqual([
      {
        rule: "verified",
        task: null,
        file: null,
        message: "the record could not be read, so nothing was verified: https://waymark.example: fetch failed",
        fix: "give `waymark ci` a reachable endpoint (--url or WAYMARK_URL) and a read token (WAYMARK_TOKEN)",
      },
    ]);
    expect(evaluatePolicy({ version: 1, rules: { tasks_closed: true } }, [], "unreachable")).toEqual([]);
  });

  it("a rule that is off reports nothing, one that is on names every task that breaks it", () => {
    const tasks = [task("t1", { status: "in_progress" }), task("t2"), task("t3", { status: "in_progress" })];
    expect(evaluatePolicy({ version: 1, rules: { tasks_closed: false } }, tasks)).toEqual([]);
    expect(evaluatePolicy({ version: 1, rules: { tasks_closed: true } }, tasks).map((f) => f.task?.id)).toEqual(["t1", "t3"]);
  });

  it("the agents' line share counts over the whole pull request: at the limit passes, above it fails on the task and file with the most agent lines", () => {
    const mixed = (agent: number, others: number, path = "src/a.ts"): Partial<PolicyTask> => ({
      lines: { agent, others, not_observed: 0 },
      file_authors: [{ path, agent, others, not_observed: 0 }],
    });
    const policy = { version: 1 as const, rules: { agent_line_share: 80 } };
    expect(evaluatePolicy(policy, [task("t1", mixed(40, 10)), task("t2", mixed(40, 10))])).toEqual([]);
    const over = evaluatePolicy(policy, [task("t1", mixed(30, 10)), task("t2", mixed(51, 9, "src/big.ts"))]);
    expect(over).toEqual([
      {
        rule: "agent_line_share",
        task: ref("t2"),
        file: "src/big.ts",
        message:
          "the agents' edit tools wrote 81 of the 100 added lines (81%), more than the 80% the policy allows; this task wrote the most (51)",
        fix: "have people write more of the change, or raise rules.agent_line_share in .waymark/policy.yml",
      },
    ]);
    // Lines nobody observed count in the whole, never as the agent's.
    expect(evaluatePolicy(policy, [task("t1", { lines: { agent: 80, others: 0, not_observed: 20 } })])).toEqual([]);
    // No added lines: no share to exceed.
    expect(
      evaluatePolicy({ version: 1, rules: { agent_line_share: 0 } }, [task("t1", { lines: { agent: 0, others: 0, not_observed: 0 } })]),
    ).toEqual([]);
  });
});

describe("a task's facts, from its export", () => {
  const exported = (over: Partial<FactsTask> = {}): FactsTask => ({
    id: "t1",
    name: "Fix it",
    status: "success",
    completed_at: EDIT,
    outcome: { summary: "done" },
    metadata: null,
    metrics: { model: "openai/gpt-5.5", cost_usd: 0.02, source: "transcript", device: { name: "laptop", fingerprint: "SHA256:x" } },
    files_changed: {
      source: { kind: "signed", version: "0.1.0", device: { name: "laptop", fingerprint: "SHA256:x" } },
      added: ["src/new.ts"],
      modified: ["src/a.ts"],
      deleted: ["old.ts"],
      renamed: [{ from: "old.ts", to: "moved.ts" }],
      lines: [
        { path: "src/a.ts", added: 4, removed: 1, agent: 3, others: 1, not_observed: 0 },
        { path: "src/new.ts", added: 2, removed: 0 },
        { path: "img.png", binary: true },
      ],
      line_authors: { agent: 3, others: 1, not_observed: 2, tool: { name: "codex" } },
    },
    verification: { unexpected_files: ["src/new.ts"] },
    commands: {
      runs: [{ command: "npm test", at: AFTER, exit_code: 0, duration_ms: null, kinds: ["test"] }],
      omitted: 0,
      last_edit_at: EDIT,
    },
    ...over,
  });

  it("reads the files, who wrote their lines, the tests after the last edit and the provenance", () => {
    const facts: TaskFacts = taskFacts(WF, exported(), [], []);
    expect(facts).toMatchObject({
      files: ["src/new.ts", "src/a.ts", "moved.ts"],
      outside_areas: ["src/new.ts"],
      agent: "codex",
      model: "openai/gpt-5.5",
      lines: { agent: 3, others: 1, not_observed: 2 },
      file_authors: [
        { path: "src/a.ts", agent: 3, others: 1, not_observed: 0 },
        { path: "src/new.ts", agent: 0, others: 0, not_observed: 2 },
      ],
      tests: "passed",
      figures: "signed",
      usage_signed: true,
      open_reviews: [],
    });
  });

  it.each<[string, Partial<FactsTask>, TaskFacts["tests"]]>([
    [
      "a test run only before the last edit",
      {
        commands: {
          runs: [{ command: "npm test", at: BEFORE, exit_code: 0, duration_ms: null, kinds: ["test"] }],
          omitted: 0,
          last_edit_at: EDIT,
        },
      },
      "not_observed",
    ],
    [
      "a failing run after the last edit",
      {
        commands: {
          runs: [{ command: "npm test", at: AFTER, exit_code: 1, duration_ms: null, kinds: ["test"] }],
          omitted: 0,
          last_edit_at: EDIT,
        },
      },
      "failed",
    ],
    [
      "commands not observed at all: the agent's claim does not count",
      { commands: null, metadata: { tests_status: "passed" } },
      "not_observed",
    ],
    ["no file changed", { files_changed: { added: [], modified: [], deleted: [], renamed: [] } }, "no_files"],
  ])("tests: %s", (_, change, tests) => {
    expect(taskFacts(WF, exported(change), [], []).tests).toBe(tests);
  });

  it("open review items: approved only by a person's latest verdict (after the task completed, for the task itself)", () => {
    const issue = {
      id: "is_aaaaaaaaaaaa",
      task_id: "t1",
      type: "bug_encountered",
      description: "skipped a test",
      requires_human_review: true,
    };
    const asked = exported({ outcome: { summary: "done", manual_review_needed: true, manual_review_reason: "billing" } });
    const verdict = (target: string, target_id: string, verdict: string, created_at: string, channel?: string) => ({
      id: `fb_${created_at.slice(17, 19)}aaaaaaaaaa`,
      target,
      target_id,
      verdict,
      body: "",
      created_at,
      ...(channel ? { channel } : {}),
    });
    expect(taskFacts(WF, asked, [issue], []).open_reviews.map((r) => r.kind)).toEqual(["task", "issue"]);
    const approvedBoth = [verdict("task", "t1", "approved", AFTER), verdict("issue", issue.id, "approved", AFTER)];
    expect(taskFacts(WF, asked, [issue], approvedBoth).open_reviews).toEqual([]);
    // An approval from before the task completed, a later change request, or an agent's channel does not answer it.
    expect(taskFacts(WF, asked, [], [verdict("task", "t1", "approved", BEFORE)]).open_reviews).toHaveLength(1);
    expect(
      taskFacts(
        WF,
        asked,
        [],
        [verdict("task", "t1", "approved", AFTER), verdict("task", "t1", "changes_requested", "2026-11-27T14:09:00.000Z")],
      ).open_reviews,
    ).toHaveLength(1);
    expect(taskFacts(WF, asked, [], [verdict("task", "t1", "approved", AFTER, "mcp")]).open_reviews).toHaveLength(1);
  });

  it("figures a client claimed, and a task that reported no files", () => {
    const claimed = exported({
      files_changed: { source: { kind: "claimed", reason: "no device signature" }, added: ["a"], modified: [], deleted: [], renamed: [] },
      metrics: { model: null, cost_usd: null, source: "agent" },
    });
    expect(taskFacts(WF, claimed, [], [])).toMatchObject({ figures: "claimed", usage_signed: false });
    expect(taskFacts(WF, exported({ files_changed: null, metrics: null }), [], [])).toMatchObject({
      figures: "none",
      usage_signed: null,
      files: [],
    });
  });
});
