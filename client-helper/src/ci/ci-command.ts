/**
 * @module ci/ci-command
 * `waymark ci`: the record of a pull request's tasks, checked in the pull request. It finds the
 * range the CI is reviewing (./platform.ts), the tasks whose commits are in it and their verified
 * record (./pr-record.ts), applies the repository's policy (./policy-file.ts,
 * @waymark/protocol/policy), and writes what the platform shows: on GitHub Actions the job summary
 * (GITHUB_STEP_SUMMARY), annotations on the changed lines, job outputs (GITHUB_OUTPUT) and, with
 * `--comment`, one sticky pull-request comment (./sticky-comment.ts); on GitLab CI a Code Quality
 * report (./code-quality.ts) and the summary in the job log. Exit codes: 0 passed or report only
 * (no policy file), 1 the policy failed, 2 usage (flags, environment, a policy file that is wrong).
 * The summary ends with the repository's Insights over the last 30 days (./insights-line.ts).
 */
import { join, resolve as resolvePath } from "node:path";
import { parseArgs } from "node:util";
import { evaluatePolicy, mainFile, POLICY_PATH, type PolicyFailure, type PolicyTask } from "@waymark/protocol/policy";
import { type PolicyVerdict, renderRollup, rollup } from "@waymark/protocol/pr-rollup";
import { escapeMarkdown, renderSummary, type SummaryView } from "@waymark/protocol/pr-summary";
import type { PublishedKey } from "@waymark/protocol/statement";
import { EndpointError, resolveEndpoint } from "../endpoint.js";
import { inertContext } from "../git/inert-config.js";
import type { GitContext } from "../git/process.js";
import { gitAddedRanges, gitResolveCommit, gitToplevel } from "../git/queries.js";
import { readRepository } from "../repository.js";
import { printable } from "../terminal.js";
import { keysFromFile, readAllowedSigners, VerifyUsageError } from "../verify-inputs.js";
import { codeQualityIssues, writeCodeQuality } from "./code-quality.js";
import { insightsMarkdown, insightsText, type RepositoryInsights, repositoryInsights } from "./insights-line.js";
import { CiSetupError, type CiTarget, ciTarget } from "./platform.js";
import { PolicyFileError, readPolicyFile } from "./policy-file.js";
import { findRecord, type PrRecord } from "./pr-record.js";
import { CommentError, commentBody, upsertComment } from "./sticky-comment.js";
import { type Annotation, annotationCommands, writeOutputs, writeSummary } from "./workflow-commands.js";

export interface CiIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export const CI_HELP = `Usage: waymark ci [--url <endpoint>] [--token <token>] [--dir <dir>] [--base <rev> --head <rev>]
                  [--policy <file>] [--key <file>] [--allowed-signers <file>] [--comment]
                  [--code-quality <file>] [--summary <file>] [--json]

Checks the record of a pull request's tasks in CI: every task whose commits are in the range
(from the endpoint's commit index and the repository's notes), each verified as 'waymark verify'
does (signature, every field against its events, committed changes against this clone), then
the repository's policy (${POLICY_PATH}). Writes the job summary, annotations on the changed
lines and job outputs on GitHub Actions; a Code Quality report on GitLab CI.

The range comes from the CI: on GitHub Actions the pull_request event (GITHUB_EVENT_PATH), on
GitLab CI the merge request pipeline's CI_MERGE_REQUEST_DIFF_BASE_SHA and source commit;
elsewhere --base and --head. The clone needs the whole range (actions/checkout: fetch-depth: 0).
The summary ends with the repository's Insights over the last 30 days, per agent and model.

Options:
  --url <endpoint>       the Waymark endpoint (default: $WAYMARK_URL); without one, or when it is
                         unreachable, the report is from the repository's notes alone and says so
  --token <token>        a token with the read scope (default: $WAYMARK_TOKEN)
  --dir <dir>            the clone (default: the working directory)
  --base <rev>, --head <rev>  the range, overriding what the CI says
  --policy <file>        the policy file (default: ${POLICY_PATH} in the clone); none: report only
  --key <file>           the deployment's public keys, instead of reading them from the endpoint
  --allowed-signers <file>  the device keys to trust (default: .waymark/allowed-signers in the
                         clone): figures labelled computed and signed are checked against them
  --comment              keep one pull-request comment up to date (GitHub; needs GITHUB_TOKEN
                         with pull-requests: write)
  --code-quality <file>  write a GitLab Code Quality report (default on GitLab CI:
                         gl-code-quality-report.json)
  --summary <file>       also write the Markdown summary to this file
  --json                 print the findings as JSON
  -h, --help             show this help

Exit codes:
  0  the policy passed, or there is no policy file (report only)
  1  the policy failed (each failure names the task, the file, the rule and what satisfies it)
  2  usage error (flags, the CI's environment, a policy file that is not valid)
`;

class CiUsageError extends Error {}

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        dir: { type: "string" },
        base: { type: "string" },
        head: { type: "string" },
        policy: { type: "string" },
        key: { type: "string" },
        "allowed-signers": { type: "string" },
        comment: { type: "boolean" },
        "code-quality": { type: "string" },
        summary: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new CiUsageError(`${(error as Error).message}\nSee 'waymark ci --help'.`);
  }
}

/** Runs `waymark ci` with its arguments (after the command name); returns the exit code. */
export async function runCi(args: string[], io: CiIo): Promise<number> {
  try {
    return await ci(args, io);
  } catch (error) {
    if (
      !(
        error instanceof CiUsageError ||
        error instanceof CiSetupError ||
        error instanceof PolicyFileError ||
        error instanceof EndpointError ||
        error instanceof VerifyUsageError
      )
    )
      throw error;
    io.stderr(`waymark ci: ${printable(error.message)}\n`);
    if (io.env.GITHUB_ACTIONS === "true")
      io.stdout(`::error title=waymark ci::${error.message.replace(/%/g, "%25").replace(/\r?\n/g, "%0A")}\n`);
    return 2;
  }
}

async function keysFrom(file: string | undefined): Promise<PublishedKey[] | null> {
  return file === undefined ? null : keysFromFile(file);
}

async function ci(args: string[], io: CiIo): Promise<number> {
  const { values } = parse(args);
  if (values.help) {
    io.stdout(CI_HELP);
    return 0;
  }
  const env = io.env;
  const dir = resolvePath(io.cwd, values.dir ?? env.GITHUB_WORKSPACE ?? env.CI_PROJECT_DIR ?? ".");
  const context = await inertContext(dir);
  const top = await gitToplevel(context);
  if (!top) throw new CiUsageError(`--dir ${dir}: not a git repository (check out the repository first)`);
  const target = await ciTarget({ base: values.base, head: values.head }, env);
  const base = await commitOrFail(context, target.base, "base");
  const head = await commitOrFail(context, target.head, "head");
  const policyPath = values.policy === undefined ? join(top.root, POLICY_PATH) : resolvePath(io.cwd, values.policy);
  const policy = await readPolicyFile(policyPath);
  if (values.policy !== undefined && policy === null) throw new CiUsageError(`--policy ${values.policy}: no such file`);
  const resolved = values.url !== undefined || env.WAYMARK_URL ? await resolveEndpoint(values.url, env) : null;
  const record = await findRecord({
    context,
    root: top.root,
    base,
    head,
    endpoint: resolved?.endpoint ?? null,
    token: values.token ?? env.WAYMARK_TOKEN,
    keys: await keysFrom(values.key),
    signers: (await readAllowedSigners(values["allowed-signers"], top.root, io.cwd))?.signers ?? null,
  });

  const failures: PolicyFailure[] = policy ? evaluatePolicy(policy, record.tasks, record.unreachable) : [];
  const verdict: PolicyVerdict = policy ? { file: relativeTo(top.root, policyPath), failures } : { file: null };
  // The repository's Insights, when the endpoint could be read at all (it never fails the job).
  const repository = resolved && record.unreachable === undefined ? await readRepository(top.root, Promise.resolve(context)) : null;
  const insights =
    resolved && repository
      ? await repositoryInsights(resolved.endpoint.origin, values.token ?? env.WAYMARK_TOKEN, repository.fingerprint)
      : null;
  const markdown = `${report(record, resolved?.endpoint.origin ?? null, verdict)}${insights ? `\n${insightsMarkdown(insights)}` : ""}`;
  const annotations = await findingsOnLines(context, base, head, record.tasks, failures, policy !== null);
  const result = policy === null ? "report" : failures.length === 0 ? "passed" : "failed";

  if (target.platform === "github") await writeGithub(io, target, record, markdown, annotations, failures, result, values.comment === true);
  const qualityFile = values["code-quality"] ?? (target.platform === "gitlab" ? "gl-code-quality-report.json" : undefined);
  if (qualityFile !== undefined) await writeCodeQuality(resolvePath(io.cwd, qualityFile), codeQualityIssues(annotations));
  if (values.summary !== undefined) {
    const { writeFile } = await import("node:fs/promises");
    await writeFile(resolvePath(io.cwd, values.summary), markdown);
  }
  if (values.json) io.stdout(`${JSON.stringify(jsonReport(target, record, result, failures), null, 2)}\n`);
  else io.stdout(textReport(target, record, result, failures, target.platform === "gitlab" ? markdown : null, insights));
  return result === "failed" ? 1 : 0;
}

async function commitOrFail(context: GitContext, revision: string, side: "base" | "head"): Promise<string> {
  const commit = await gitResolveCommit(context, revision);
  if (commit === null) {
    throw new CiUsageError(
      `${side} ${revision}: not a commit in this clone (fetch the whole range: actions/checkout with fetch-depth: 0, GIT_DEPTH: 0 on GitLab)`,
    );
  }
  return commit;
}

const relativeTo = (root: string, path: string) => (path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path);

/** The report: the rollup, then each workflow's pull-request summary (its tasks in this pull request) folded. */
function report(record: PrRecord, endpoint: string | null, verdict: PolicyVerdict): string {
  const source = {
    endpoint,
    ...(record.unreachable !== undefined ? { unreachable: record.unreachable } : {}),
    commits: record.commits.length,
    recorded_commits: record.commits.filter((commit) => record.recorded.has(commit)).length,
  };
  const parts = [renderRollup(record.tasks, source, verdict, record.workflow_feedback)];
  if (record.from_notes > 0 && record.unreachable === undefined) {
    parts.push(`${record.from_notes} task(s) come from the repository's notes only: the endpoint's exports do not hold them.\n`);
  }
  for (const [id, view] of record.views) {
    parts.push(
      `<details><summary>Workflow ${escapeHtml(escapeMarkdown(view.workflow.name))} (<code>${id}</code>)</summary>\n\n${renderSummary(prView(view, record.tasks))}\n</details>\n`,
    );
  }
  if (record.more_commits) parts.push(`The range has more than ${record.commits.length} commits: only the newest were read.\n`);
  return parts.join("\n");
}

/** Inside `<summary>`: HTML's specials too (escapeMarkdown leaves a `<` before a digit or space, and `>`). */
const escapeHtml = (text: string) => text.replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A workflow's view reduced to the pull request's tasks, its head figures counted over them. */
function prView(view: SummaryView, facts: readonly PolicyTask[]): SummaryView {
  const ids = new Set(view.tasks.map((task) => task.id));
  const mine = facts.filter((task) => ids.has(task.id));
  const sum = (pick: (task: SummaryView["tasks"][number]) => number | null | undefined) =>
    view.tasks.reduce((n, task) => n + (pick(task) ?? 0), 0);
  return {
    ...view,
    decisions: view.decisions.filter((d) => ids.has(d.task_id)),
    issues: view.issues.filter((i) => ids.has(i.task_id)),
    totals: {
      tasks: view.tasks.length,
      open_tasks: view.tasks.filter((task) => task.status === "in_progress").length,
      duration_seconds: sum((task) => task.duration_seconds),
      files_changed: new Set(mine.flatMap((task) => task.files)).size,
      reviews_needed: mine.reduce((n, task) => n + task.open_reviews.length, 0),
      input_tokens: sum((task) => task.metrics?.input_tokens),
      output_tokens: sum((task) => task.metrics?.output_tokens),
      cost_usd: sum((task) => task.metrics?.cost_usd),
    },
  };
}

type Finding = Annotation & { check: string };

/**
 * Each finding on the file and the lines it concerns: policy failures as errors (warnings without a
 * policy), then what a reviewer should look at (files outside the areas, tests not observed after
 * the last edit, a record that did not verify, open reviews) as warnings, and reviewers' line
 * comments as notices. On the range's changed lines of the file, where it has some.
 */
async function findingsOnLines(
  context: GitContext,
  base: string,
  head: string,
  tasks: readonly PolicyTask[],
  failures: readonly PolicyFailure[],
  enforced: boolean,
): Promise<Finding[]> {
  const raw: (Omit<Finding, "line" | "endLine"> & { line?: number })[] = [];
  const failed = new Set(failures.map((f) => `${f.rule}\0${f.task?.id ?? ""}\0${f.file ?? ""}`));
  for (const failure of failures) {
    const file = failure.file ?? tasks.find((task) => task.id === failure.task?.id)?.files[0];
    if (file === undefined) continue;
    raw.push({
      kind: enforced ? "error" : "warning",
      file,
      check: failure.rule,
      title: `Waymark policy: ${failure.rule}${failure.task ? ` (task ${failure.task.name})` : ""}`,
      message: `${failure.message}. To satisfy it: ${failure.fix}.`,
    });
  }
  for (const task of tasks) {
    const main = mainFile(task) ?? undefined;
    const unless = (rule: string, file: string) => failed.has(`${rule}\0${task.id}\0${file}`);
    for (const path of task.outside_areas) {
      if (!unless("within_areas", path))
        raw.push({
          kind: "warning",
          file: path,
          check: "within_areas",
          title: `Outside the declared areas (task ${task.name})`,
          message: "this file is outside the areas the task declared",
        });
    }
    if (main === undefined) continue;
    if ((task.tests === "not_observed" || task.tests === "failed") && !unless("tests_after_last_edit", main)) {
      raw.push({
        kind: "warning",
        file: main,
        check: "tests_after_last_edit",
        title: `Tests after the last edit (task ${task.name})`,
        message:
          task.tests === "failed"
            ? "the last test run after the task's last edit failed"
            : "no test run was observed after the task's last edit",
      });
    }
    if (task.record.problems.length > 0 && !failed.has(`verified\0${task.id}\0`)) {
      raw.push({
        kind: "warning",
        file: main,
        check: "verified",
        title: `Record not verified (task ${task.name})`,
        message: task.record.problems[0] ?? "",
      });
    }
    for (const item of task.feedback) {
      if (!item.location) continue;
      raw.push({
        kind: "notice",
        file: item.location.path,
        check: "feedback",
        title: `Reviewer ${item.verdict.replace("_", " ")} (task ${task.name})`,
        message: item.body,
        ...(item.location.line !== null ? { line: item.location.line } : {}),
      });
    }
  }
  const ranges = new Map<string, [number, number] | null>();
  const out: Finding[] = [];
  for (const finding of raw) {
    if (finding.line !== undefined) {
      out.push({ ...finding, line: finding.line });
      continue;
    }
    if (!ranges.has(finding.file)) {
      const found = await gitAddedRanges(context, base, head, finding.file).catch(() => []);
      ranges.set(finding.file, found[0] ?? null);
    }
    const range = ranges.get(finding.file) ?? null;
    out.push({ ...finding, line: range?.[0] ?? null, endLine: range?.[1] ?? null });
  }
  return out;
}

async function writeGithub(
  io: CiIo,
  target: CiTarget,
  record: PrRecord,
  markdown: string,
  annotations: readonly Annotation[],
  failures: readonly PolicyFailure[],
  result: string,
  comment: boolean,
): Promise<void> {
  const env = io.env;
  const commands = annotationCommands(annotations);
  for (const line of commands.lines) io.stdout(`${line}\n`);
  const note =
    commands.left_out > 0 ? `\n${commands.left_out} more findings than GitHub annotates per step: all are in the summary above.\n` : "";
  if (env.GITHUB_STEP_SUMMARY) await writeSummary(env.GITHUB_STEP_SUMMARY, `${markdown}${note}`);
  if (env.GITHUB_OUTPUT) await writeOutputs(env.GITHUB_OUTPUT, outputs(record, result, failures));
  if (!comment) return;
  const token = env.GITHUB_TOKEN;
  if (!token || target.repository === null || target.pull_request === null) {
    io.stdout(
      `::warning title=waymark ci::no pull-request comment: ${!token ? "GITHUB_TOKEN is not set (pass it as env)" : "this run is not for a pull request"}\n`,
    );
    return;
  }
  const runUrl =
    env.GITHUB_SERVER_URL && env.GITHUB_RUN_ID ? `${env.GITHUB_SERVER_URL}/${target.repository}/actions/runs/${env.GITHUB_RUN_ID}` : null;
  try {
    const done = await upsertComment(
      { api: env.GITHUB_API_URL || "https://api.github.com", repository: target.repository, pull_request: target.pull_request, token },
      commentBody(markdown, runUrl),
    );
    io.stderr(`waymark ci: ${done.action} the pull request's comment ${done.url}\n`);
  } catch (error) {
    if (!(error instanceof CommentError)) throw error;
    io.stdout(`::warning title=waymark ci::could not update the pull request's comment: ${error.message.replace(/\r?\n/g, " ")}\n`);
  }
}

/** The job's outputs: figures other steps can test, and the failures one a line. */
function outputs(record: PrRecord, result: string, failures: readonly PolicyFailure[]): Record<string, string> {
  const r = rollup(record.tasks, record.workflow_feedback);
  return {
    result,
    tasks: String(r.tasks),
    open_tasks: String(r.open_tasks),
    failures: String(failures.length),
    failure_list: failures.map(failureLine).join("\n"),
    agent_lines: String(r.lines.agent),
    others_lines: String(r.lines.others),
    not_observed_lines: String(r.lines.not_observed),
    agent_share: r.agent_share === null ? "" : String(r.agent_share),
    cost_usd: r.cost_usd.toFixed(4),
    tests_passed: `${r.tested.passed}/${r.tested.of}`,
    outside_areas: String(r.outside_areas),
    unsigned: String(r.unsigned),
    open_reviews: String(r.open_reviews),
    feedback: String(r.feedback),
    unverified: String(r.unverified),
    endpoint: record.unreachable === undefined ? "reachable" : "unreachable",
  };
}

/** One line whatever the agent wrote: on GitHub a line of the log that began with `::` would be a workflow command. */
const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, " ");

const failureLine = (failure: PolicyFailure) =>
  oneLine(
    `${failure.rule}: ${failure.task ? `task ${failure.task.name} (${failure.task.id})` : "pull request"}${failure.file ? `, ${failure.file}` : ""}: ${failure.message}. To satisfy it: ${failure.fix}.`,
  );

function jsonReport(target: CiTarget, record: PrRecord, result: string, failures: readonly PolicyFailure[]) {
  return {
    result,
    platform: target.platform,
    range: { base: target.base, head: target.head, commits: record.commits.length, source: target.source },
    endpoint: record.unreachable === undefined ? "reachable" : { unreachable: record.unreachable },
    rollup: rollup(record.tasks, record.workflow_feedback),
    tasks: record.tasks,
    from_notes: record.from_notes,
    failures,
  };
}

function textReport(
  target: CiTarget,
  record: PrRecord,
  result: string,
  failures: readonly PolicyFailure[],
  markdown: string | null,
  insights: RepositoryInsights | null,
): string {
  const r = rollup(record.tasks, record.workflow_feedback);
  const lines = [
    `waymark ci: ${record.commits.length} commit(s) from ${target.source}; ${r.tasks} task(s) in the record${
      record.unreachable !== undefined ? ` (endpoint not reachable: ${record.unreachable}; from the repository's notes alone)` : ""
    }`,
  ];
  if (result === "report") lines.push("no policy file: report only, never fails");
  else if (result === "passed") lines.push("policy passed");
  else {
    lines.push(`policy FAILED: ${failures.length} failure(s)`);
    for (const failure of failures) lines.push(`  ${failureLine(failure)}`);
  }
  const text = `${printable(`${lines.join("\n")}\n`)}${insights ? insightsText(insights) : ""}`;
  return markdown === null ? text : `${text}\n${printable(markdown)}`;
}
