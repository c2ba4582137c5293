/**
 * @module policy
 * A repository's policy for `waymark ci` (`.waymark/policy.yml`): which findings about a pull
 * request's tasks fail the job. Without a policy file the job reports and never fails.
 *
 * The schema here is the published one: docs/schemas/policy-v1.json is generated from it
 * (`policyJsonSchema`; a test keeps the file equal) and served at /schemas/policy-v1.json. The
 * helper reads the file (bounded YAML, client-helper/src/ci/policy-file.ts); this module checks
 * what it parsed (`parsePolicy`: every problem as `field: rule`) and evaluates it against the
 * tasks' facts (./pr-facts.ts) and the verification `waymark ci` ran (`evaluatePolicy`). Each
 * failure names the rule, the task, the file when one is concerned, what was found and what would
 * satisfy the rule. Pure and table-tested.
 */
import { z } from "zod";
import type { FileAuthors, TaskFacts } from "./pr-facts";

export const POLICY_PATH = ".waymark/policy.yml";
export const POLICY_SCHEMA_PATH = "/schemas/policy-v1.json";
/** A policy file is a few lines: anything larger is refused before it is parsed. */
export const POLICY_MAX_BYTES = 16 * 1024;

const rule = (description: string) => z.boolean({ error: "must be true or false" }).optional().meta({ description });

export const policySchema = z
  .strictObject(
    {
      version: z.literal(1, { error: "must be 1 (the only policy version)" }).meta({ description: "The policy format's version." }),
      rules: z
        .strictObject(
          {
            verified: rule(
              "Every task's record verifies: the export's signature against the deployment's keys, every field against its events, and its committed changes against git. A check that could not run fails.",
            ),
            signed_figures: rule("Every task's file figures were computed and signed by the helper on a device the owner approved."),
            within_areas: rule("No task changed a file outside the areas it declared."),
            tests_after_last_edit: rule(
              "Every task that changed files has a test run observed passing after its last edit (by the helper's hooks, not the agent's claim).",
            ),
            tasks_closed: rule("No task of the pull request is still in progress."),
            reviews_answered: rule(
              "Every review item a task raised (a manual review it asked for, an issue that requires human review) has a person's approval.",
            ),
            agent_line_share: z
              .number({ error: "must be a whole number of percent from 0 to 100" })
              .int({ error: "must be a whole number of percent from 0 to 100" })
              .min(0, { error: "must be a whole number of percent from 0 to 100" })
              .max(100, { error: "must be a whole number of percent from 0 to 100" })
              .optional()
              .meta({
                description:
                  "The most of the pull request's added lines (recorded by its tasks) the agents' own edit tools may have written, in percent.",
              }),
          },
          { error: "must be a map of rules" },
        )
        .optional()
        .meta({ description: "The rules that fail the job; a rule left out (or false) only reports." }),
    },
    { error: "must be a map with version and rules" },
  )
  .meta({
    title: "Waymark pull-request policy",
    description:
      "`.waymark/policy.yml`: which findings of `waymark ci` fail the job. Without the file, `waymark ci` reports and never fails.",
  });

export type Policy = z.infer<typeof policySchema>;
export type PolicyRules = NonNullable<Policy["rules"]>;
export type PolicyRule = keyof PolicyRules;

/** The policy's JSON Schema (2020-12), as docs/schemas/policy-v1.json publishes it. */
export function policyJsonSchema(): Record<string, unknown> {
  const { $schema, ...generated } = z.toJSONSchema(policySchema, { target: "draft-2020-12" }) as Record<string, unknown>;
  return { $schema, $id: "urn:waymark:schema:policy:1", ...generated };
}

/** The policy a parsed document holds, or every problem with it as `field: rule` (the field's path in the file). */
export function parsePolicy(document: unknown): { policy: Policy } | { problems: string[] } {
  const parsed = policySchema.safeParse(document);
  if (parsed.success) return { policy: parsed.data };
  return {
    problems: parsed.error.issues.map((issue) => {
      const where = issue.path.length === 0 ? "policy" : issue.path.map(String).join(".");
      if (issue.code === "unrecognized_keys") {
        const known = where === "policy" ? "version, rules" : Object.keys(policySchema.shape.rules.unwrap().shape).join(", ");
        return `${issue.keys.map((key) => (where === "policy" ? key : `${where}.${key}`)).join(", ")}: not a field of the policy (known: ${known})`;
      }
      return `${where}: ${issue.message}`;
    }),
  };
}

/** What `waymark ci` found when it verified a task's record. */
export interface RecordCheck {
  /** Everything that did not verify, or could not be checked (a check that did not run is not a pass). */
  problems: string[];
}

export interface PolicyTask extends TaskFacts {
  record: RecordCheck;
}

export interface PolicyFailure {
  rule: PolicyRule;
  task: { id: string; name: string; workflow_id: string } | null;
  file: string | null;
  /** What was found. */
  message: string;
  /** What would satisfy the rule. */
  fix: string;
}

const taskRef = (task: PolicyTask) => ({ id: task.id, name: task.name, workflow_id: task.workflow_id });

/** The file a finding about a whole task is best shown on: the one with the most agent lines, else its first file inside its areas, else its first. */
export function mainFile(task: TaskFacts): string | null {
  const top = [...task.file_authors].sort((a, b) => b.agent - a.agent)[0];
  if (top && top.agent > 0) return top.path;
  const outside = new Set(task.outside_areas);
  return task.files.find((path) => !outside.has(path)) ?? task.files[0] ?? null;
}

/**
 * Every failure of the policy's rules over the pull request's tasks, in rule order then task order.
 * `unavailable`: why the record could not be read at all (the endpoint unreachable): under
 * `verified` that alone fails, since nothing of the pull request could be verified.
 */
export function evaluatePolicy(policy: Policy, tasks: readonly PolicyTask[], unavailable?: string): PolicyFailure[] {
  const rules = policy.rules ?? {};
  const failures: PolicyFailure[] = [];
  if (rules.verified && unavailable !== undefined) {
    failures.push({
      rule: "verified",
      task: null,
      file: null,
      message: `the record could not be read, so nothing was verified: ${unavailable}`,
      fix: "give `waymark ci` a reachable endpoint (--url or WAYMARK_URL) and a read token (WAYMARK_TOKEN)",
    });
  }
  const each = (on: boolean | undefined, check: (task: PolicyTask) => PolicyFailure[]) => {
    if (on) for (const task of tasks) failures.push(...check(task));
  };
  each(rules.verified, (task) =>
    task.record.problems.map((problem) => ({
      rule: "verified",
      task: taskRef(task),
      file: null,
      message: `its record does not verify: ${problem}`,
      fix: "the record must verify: check the export with `waymark verify --endpoint <url> --repo .`, and give `waymark ci` the endpoint and a read token",
    })),
  );
  each(rules.signed_figures, (task) =>
    task.figures === "claimed" || task.figures === "not_observed"
      ? [
          {
            rule: "signed_figures",
            task: taskRef(task),
            file: mainFile(task),
            message: `its file changes are ${task.figures === "claimed" ? "claimed by the client" : "not observed"}, not computed and signed`,
            fix: "record the task through the helper on a device the owner approved (`waymark device pair`, then approve it on the Devices page)",
          },
        ]
      : [],
  );
  each(rules.within_areas, (task) =>
    task.outside_areas.map((path) => ({
      rule: "within_areas",
      task: taskRef(task),
      file: path,
      message: "changed outside the areas the task declared",
      fix: "revert the change, or have a task whose declared areas include this file make it",
    })),
  );
  each(rules.tests_after_last_edit, (task) => {
    if (task.tests === "passed" || task.tests === "no_files") return [];
    const found =
      task.tests === "failed"
        ? `the last test run after its last edit failed (${task.test_run?.command ?? "a test"}, exit ${String(task.test_run?.exit_code ?? "unknown")})`
        : "no test run was observed passing after its last edit";
    return [
      {
        rule: "tests_after_last_edit",
        task: taskRef(task),
        file: mainFile(task),
        message: found,
        fix: "have the agent run the tests after its last edit, with the helper's hooks installed, until they pass",
      },
    ];
  });
  each(rules.tasks_closed, (task) =>
    task.status === "in_progress"
      ? [
          {
            rule: "tasks_closed",
            task: taskRef(task),
            file: null,
            message: "the task is still in progress",
            fix: "complete the task (complete_task), or leave its work out of the pull request",
          },
        ]
      : [],
  );
  each(rules.reviews_answered, (task) =>
    task.open_reviews.map((item) => ({
      rule: "reviews_answered",
      task: taskRef(task),
      file: null,
      message: `${item.kind === "task" ? "it asked for a manual review" : "an issue requires human review"} that no person approved: ${item.text}`,
      fix: `a person approves ${item.kind === "task" ? "the task" : `issue ${item.id}`} on the workflow's page`,
    })),
  );
  if (rules.agent_line_share !== undefined) failures.push(...shareFailures(rules.agent_line_share, tasks));
  return failures;
}

/** The agents' share of the added lines over the whole pull request, against the limit: one failure, on the task and file with the most agent lines. */
function shareFailures(limit: number, tasks: readonly PolicyTask[]): PolicyFailure[] {
  let agent = 0;
  let all = 0;
  let top: { task: PolicyTask; file: FileAuthors | null; agent: number } | null = null;
  for (const task of tasks) {
    agent += task.lines.agent;
    all += task.lines.agent + task.lines.others + task.lines.not_observed;
    if (top === null || task.lines.agent > top.agent) {
      const file = [...task.file_authors].sort((a, b) => b.agent - a.agent)[0] ?? null;
      top = { task, file, agent: task.lines.agent };
    }
  }
  if (all === 0 || agent * 100 <= limit * all || top === null) return [];
  const share = Math.round((agent * 1000) / all) / 10;
  return [
    {
      rule: "agent_line_share",
      task: taskRef(top.task),
      file: top.file?.path ?? null,
      message: `the agents' edit tools wrote ${agent} of the ${all} added lines (${share}%), more than the ${limit}% the policy allows; this task wrote the most (${top.agent})`,
      fix: `have people write more of the change, or raise rules.agent_line_share in ${POLICY_PATH}`,
    },
  ];
}
