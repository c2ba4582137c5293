/**
 * @module pr-rollup
 * A pull request's record in one place, as `waymark ci` writes it into the job summary and the
 * sticky comment: the tasks whose work the pull request holds, their agents and models, who wrote
 * the added lines (agent / others / not observed), cost, tests observed passing after each task's
 * last edit, files outside their task's areas, figures that are not computed and signed, review
 * items left open, reviewers' feedback, whether each record verified, and the policy's verdict.
 * Pure: figures from the tasks' facts (./pr-facts.ts), words in GitHub Flavored Markdown with
 * agent text made inert (./pr-summary.ts's escaping).
 */
import { agentShare, formatLineAuthors, type LineAuthors } from "./line-authors";
import type { PolicyFailure, PolicyTask } from "./policy";
import type { FactsFeedback } from "./pr-facts";
import { codeSpan, escapeMarkdown as esc } from "./pr-summary";

/** The pull request's figures, also the job's outputs. */
export interface PrRollup {
  tasks: number;
  open_tasks: number;
  /** "agent · model" → tasks. */
  agents: Record<string, number>;
  lines: LineAuthors;
  /** The agents' share of the added lines in whole percent; null without added lines. */
  agent_share: number | null;
  /** Summed over the tasks that reported a cost; `unpriced` tasks reported none. */
  cost_usd: number;
  unpriced: number;
  /** Tasks that changed files, and of them those with a test run observed passing after their last edit. */
  tested: { of: number; passed: number };
  outside_areas: number;
  unsigned: number;
  open_reviews: number;
  feedback: number;
  /** Tasks whose record did not verify (or could not be checked). */
  unverified: number;
}

/** `onWorkflows`: reviewers' feedback on the pull request's workflows as a whole (a pull-request review, a comment on the workflow). */
export function rollup(tasks: readonly PolicyTask[], onWorkflows: readonly FactsFeedback[] = []): PrRollup {
  const lines: LineAuthors = { agent: 0, others: 0, not_observed: 0 };
  const agents: Record<string, number> = {};
  let cost = 0;
  let unpriced = 0;
  for (const task of tasks) {
    lines.agent += task.lines.agent;
    lines.others += task.lines.others;
    lines.not_observed += task.lines.not_observed;
    const who = agentLabel(task);
    agents[who] = (agents[who] ?? 0) + 1;
    if (task.cost_usd === null) unpriced++;
    else cost += task.cost_usd;
  }
  const changed = tasks.filter((task) => task.tests !== "no_files");
  return {
    tasks: tasks.length,
    open_tasks: tasks.filter((task) => task.status === "in_progress").length,
    agents,
    lines,
    agent_share: agentShare(lines),
    cost_usd: Math.round(cost * 10_000) / 10_000,
    unpriced,
    tested: { of: changed.length, passed: changed.filter((task) => task.tests === "passed").length },
    outside_areas: tasks.reduce((n, task) => n + task.outside_areas.length, 0),
    unsigned: tasks.filter((task) => isUnsigned(task)).length,
    open_reviews: tasks.reduce((n, task) => n + task.open_reviews.length, 0),
    feedback: tasks.reduce((n, task) => n + task.feedback.length, 0) + onWorkflows.length,
    unverified: tasks.filter((task) => task.record.problems.length > 0).length,
  };
}

const agentLabel = (task: PolicyTask) => `${task.agent ?? "agent not named"} · ${task.model ?? "model not reported"}`;
const isUnsigned = (task: PolicyTask) => task.figures === "claimed" || task.figures === "not_observed" || task.usage_signed === false;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
/** Agent text in a table cell: inert, and `|` escaped (GFM splits a row's cells before anything else). */
const cell = (text: string) => esc(text).replace(/\|/g, "\\|");
const percent = (part: number, all: number) => (all === 0 ? "" : ` (${Math.round((part * 100) / all)}%)`);

const TESTS: Record<PolicyTask["tests"], string> = {
  passed: "✓ passed after the last edit",
  failed: "**✕ failed** after the last edit",
  not_observed: "not observed after the last edit",
  no_files: "no files changed",
};

/** How the run found the record: from the endpoint, or from the repository's notes alone (and why). */
export interface RollupSource {
  endpoint: string | null;
  /** Set when the endpoint could not be used: what happened. */
  unreachable?: string;
  /** Commits in the range, and how many of them a task recorded. */
  commits: number;
  recorded_commits: number;
}

/** The policy's verdict: none (no policy file: report only), or its failures (empty: passed). */
export type PolicyVerdict = { file: null } | { file: string; failures: PolicyFailure[] };

/** Where a feedback item was posted, in words. */
const CHANNEL_WORDS: Record<string, string> = {
  page: "on the page",
  mcp_app: "from an MCP client",
  pull_request: "in a pull-request review",
};

const FAILURES_SHOWN = 50;
const FEEDBACK_SHOWN = 20;

/** The rollup as Markdown: the head figures, the policy's verdict, one row per task, then the details a reviewer acts on. */
export function renderRollup(
  tasks: readonly PolicyTask[],
  source: RollupSource,
  verdict: PolicyVerdict,
  onWorkflows: readonly FactsFeedback[] = [],
): string {
  const r = rollup(tasks, onWorkflows);
  const out: string[] = ["## Waymark: the record of this pull request", ""];
  out.push(sourceLine(source), "");
  out.push(verdictLine(verdict), "");
  if (tasks.length === 0) {
    out.push("No task of this pull request's commits is in the record.");
    return `${out.join("\n")}\n`;
  }
  const all = r.lines.agent + r.lines.others + r.lines.not_observed;
  out.push(
    "| | |",
    "|---|---|",
    `| Tasks | ${r.tasks}${r.open_tasks > 0 ? ` (**${r.open_tasks} still open**)` : ""} |`,
    `| Agents and models | ${Object.entries(r.agents)
      .map(([who, n]) => `${cell(who)}${n > 1 ? ` ×${n}` : ""}`)
      .join("; ")} |`,
    `| Added lines | ${all === 0 ? "none recorded" : `agent ${r.lines.agent}${percent(r.lines.agent, all)} · others ${r.lines.others}${percent(r.lines.others, all)} · not observed ${r.lines.not_observed}${percent(r.lines.not_observed, all)}`} |`,
    `| Cost | ${r.tasks > r.unpriced ? `$${r.cost_usd.toFixed(4)}` : "not reported"}${r.unpriced > 0 && r.tasks > r.unpriced ? ` (${plural(r.unpriced, "task")} reported none)` : ""} |`,
    `| Tests | ${r.tested.of === 0 ? "no task changed files" : `${r.tested.passed} of ${plural(r.tested.of, "task")} that changed files had a test run observed passing after their last edit`} |`,
    `| Outside declared areas | ${r.outside_areas === 0 ? "none" : `**${plural(r.outside_areas, "file")}**`} |`,
    `| Figures not computed and signed | ${r.unsigned === 0 ? "none" : `**${plural(r.unsigned, "task")}**`} |`,
    `| Open review items | ${r.open_reviews === 0 ? "none" : `**${r.open_reviews}**`} |`,
    `| Reviewer feedback | ${r.feedback === 0 ? "none" : plural(r.feedback, "item")} |`,
    `| Records verified | ${r.tasks - r.unverified} of ${r.tasks}${r.unverified > 0 ? " (**see below**)" : ""} |`,
    "",
    "### Tasks",
    "",
    "| Task | Status | Agent · model | Lines (agent · others · not observed) | Tests | Record |",
    "|---|---|---|---|---|---|",
  );
  for (const task of tasks) {
    const lines = formatLineAuthors(task.lines) || "none";
    const record = task.record.problems.length === 0 ? "✓ verified" : `**✕ ${plural(task.record.problems.length, "problem")}**`;
    out.push(
      `| ${cell(task.name)} (\`${task.id}\`) | ${cell(task.status)} | ${cell(agentLabel(task))} | ${cell(lines)} | ${TESTS[task.tests]} | ${record} |`,
    );
  }
  out.push("", ...details(tasks, onWorkflows));
  return `${out.join("\n").replace(/\n{3,}/g, "\n\n")}\n`;
}

function sourceLine(source: RollupSource): string {
  const range = `${plural(source.commits, "commit")} in the range, ${source.recorded_commits} recorded by a task`;
  if (source.endpoint !== null && source.unreachable === undefined) return `Read from ${codeSpan(source.endpoint)} · ${range}.`;
  const why = source.unreachable ? ` (${esc(source.unreachable)})` : "";
  return `**The endpoint was not reachable${why}: this report is from the repository's notes alone**, so figures only the endpoint holds are not in it · ${range}.`;
}

function verdictLine(verdict: PolicyVerdict): string {
  if (verdict.file === null) return "No policy file (`.waymark/policy.yml`): this job reports and does not fail.";
  if (verdict.failures.length === 0) return `**Policy passed** (${codeSpan(verdict.file)}).`;
  const shown = verdict.failures.slice(0, FAILURES_SHOWN).map((failure) => {
    const where = [
      failure.task ? `task ${esc(failure.task.name)} (\`${failure.task.id}\`)` : null,
      failure.file ? codeSpan(failure.file) : null,
    ]
      .filter(Boolean)
      .join(", ");
    return `- **${failure.rule}**${where ? ` · ${where}` : ""}: ${esc(failure.message)}. To satisfy it: ${esc(failure.fix)}.`;
  });
  const more = verdict.failures.length > FAILURES_SHOWN ? [`- … and ${verdict.failures.length - FAILURES_SHOWN} more`] : [];
  return [`**Policy failed** (${codeSpan(verdict.file)}): ${plural(verdict.failures.length, "failure")}`, "", ...shown, ...more].join("\n");
}

function details(tasks: readonly PolicyTask[], onWorkflows: readonly FactsFeedback[]): string[] {
  const out: string[] = [];
  const outside = tasks.flatMap((task) => task.outside_areas.map((path) => `- ${codeSpan(path)} (task ${esc(task.name)})`));
  if (outside.length > 0) out.push("### Outside declared areas", "", ...outside, "");
  const unsigned = tasks.filter(isUnsigned).map((task) => {
    const what = [
      task.figures === "claimed" ? "files claimed by the client" : task.figures === "not_observed" ? "files not observed" : null,
      task.usage_signed === false ? "usage claimed by the client" : null,
    ].filter(Boolean);
    return `- ${esc(task.name)}: ${what.join(", ")}`;
  });
  if (unsigned.length > 0) out.push("### Figures not computed and signed", "", ...unsigned, "");
  const open = tasks.flatMap((task) =>
    task.open_reviews.map((item) => `- ${item.kind === "task" ? "Manual review" : "Issue"} in ${esc(task.name)}: ${esc(item.text)}`),
  );
  if (open.length > 0) out.push("### ⚠ Open review items", "", ...open, "");
  const line = (item: FactsFeedback, on: string) => {
    const where = item.location
      ? ` on ${codeSpan(`${item.location.path}${item.location.line !== null ? `:${item.location.line}` : ""}`)}`
      : "";
    const via = item.channel ? ` (${CHANNEL_WORDS[item.channel] ?? esc(item.channel)})` : "";
    return `- ${esc(item.verdict.replace("_", " "))}${where}${via} ${on}: ${esc(item.body)}`;
  };
  const feedback = [
    ...onWorkflows.map((item) => line(item, "on the workflow")),
    ...tasks.flatMap((task) => task.feedback.map((item) => line(item, `in ${esc(task.name)}`))),
  ];
  if (feedback.length > 0) {
    out.push("### Reviewer feedback", "", ...feedback.slice(0, FEEDBACK_SHOWN));
    if (feedback.length > FEEDBACK_SHOWN) out.push(`- … and ${feedback.length - FEEDBACK_SHOWN} more (the workflow's page has them all)`);
    out.push("");
  }
  const problems = tasks.flatMap((task) => task.record.problems.map((problem) => `- ${esc(task.name)}: ${esc(problem)}`));
  if (problems.length > 0) out.push("### Records that did not verify", "", ...problems.slice(0, FAILURES_SHOWN), "");
  return out;
}
