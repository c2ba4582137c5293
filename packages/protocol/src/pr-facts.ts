/**
 * @module pr-facts
 * What a pull request's reviewer and its policy (./policy.ts) need to know about each task whose
 * work the pull request holds, read from the task as its workflow's JSON export gives it: who
 * wrote its added lines, whether a test run was observed passing after its last edit, which files
 * lie outside its declared areas, whether its figures were computed and signed, which review items
 * it left open, and what reviewers said. Pure: `waymark ci` reads the exports (and the verification
 * it ran) and renders these facts (./pr-rollup.ts); the policy evaluates them.
 */
import { checkLines, type EvidenceTask } from "./check-evidence";
import { authorsOf, type LineAuthors, type TaskLineAuthors } from "./line-authors";
import { type FilesSource, filesKind } from "./provenance-wording";
import type { LineCount } from "./wire";

/** The parts of an exported task (docs/schemas/export-v1.json `task`) the facts are read from. */
export interface FactsTask extends EvidenceTask {
  id: string;
  name: string;
  status: string;
  completed_at: string | null;
  outcome: { summary: string; manual_review_needed?: boolean; manual_review_reason?: string } | null;
  metrics?: { model: string | null; cost_usd: number | null; source?: string | null; device?: unknown } | null;
  files_changed: {
    source?: FilesSource;
    added: string[];
    modified: string[];
    deleted: string[];
    renamed: { from: string; to: string }[];
    lines?: LineCount[];
    line_authors?: TaskLineAuthors;
  } | null;
  verification: { unexpected_files: string[] } | null;
}

/** The parts of an exported issue and feedback item the facts read. */
export interface FactsIssue {
  id: string;
  task_id: string;
  type: string;
  description: string;
  requires_human_review: boolean;
}
export interface FactsFeedback {
  id: string;
  target: string;
  target_id: string;
  verdict: string;
  body: string;
  created_at: string;
  /** Where it was posted from, when the record says (a verdict counts only from a channel where a person acted). */
  channel?: string;
  /** Who posted it, when the record says. */
  author?: unknown;
  /** The file and line a pull-request review comment was on. */
  location?: { path: string; line: number | null } | null;
}

/** Whether a test run was observed passing after the task's last edit. */
export type TestsObserved =
  /** the last test run after the last edit exited 0 */
  | "passed"
  /** the last test run after the last edit failed */
  | "failed"
  /** no test run was observed after the last edit (or the task's commands were not observed at all) */
  | "not_observed"
  /** the task changed no file: nothing to test */
  | "no_files";

/** A file's added lines by author, for the files whose lines the helper attributed. */
export interface FileAuthors extends LineAuthors {
  path: string;
}

/** A review item the task left open: a manual review it asked for, or an issue it logged for a person, without a person's approval since. */
export interface OpenReview {
  kind: "task" | "issue";
  id: string;
  text: string;
}

export interface TaskFacts {
  workflow_id: string;
  id: string;
  name: string;
  status: string;
  /** The agent its hooks named (claude-code, codex, cursor…), when known. */
  agent: string | null;
  model: string | null;
  cost_usd: number | null;
  /** Every path the task added, modified, deleted or renamed to. */
  files: string[];
  outside_areas: string[];
  /** Its added lines by author (files without attributed lines count as not observed). */
  lines: LineAuthors;
  file_authors: FileAuthors[];
  tests: TestsObserved;
  /** The last test run after the last edit, when one was observed. */
  test_run: { command: string; at: string; exit_code: number | null } | null;
  /** Whether its file figures were computed and signed by an approved device ("signed"), claimed by a client, or not observed. */
  figures: "signed" | "claimed" | "not_observed" | "none";
  /** Whether its usage figures (tokens, cost) were signed: null when it reported none. */
  usage_signed: boolean | null;
  open_reviews: OpenReview[];
  feedback: FactsFeedback[];
}

/** Channels where the server cannot tell a person from the agent: a verdict from them does not answer a review. */
const NOT_A_PERSON = new Set(["mcp", "mcp_app", "agent"]);

/** Whether a feedback item is a person's verdict (comments and verdicts from an agent's channel are not). */
export function isPersonVerdict(item: FactsFeedback): boolean {
  return item.verdict !== "comment" && (item.channel === undefined || !NOT_A_PERSON.has(item.channel));
}

/** The latest verdict a person gave on a target since `since` (ISO time), or null. */
function latestVerdict(feedback: readonly FactsFeedback[], target: string, id: string, since: string | null): string | null {
  let latest: FactsFeedback | null = null;
  for (const item of feedback) {
    if (item.target !== target || item.target_id !== id || !isPersonVerdict(item)) continue;
    if (since !== null && item.created_at < since) continue;
    if (latest === null || item.created_at >= latest.created_at) latest = item;
  }
  return latest?.verdict ?? null;
}

function changedPaths(files: NonNullable<FactsTask["files_changed"]>): string[] {
  const renamedFrom = new Set(files.renamed.map((r) => r.from));
  const paths = [...files.added, ...files.modified, ...files.deleted.filter((p) => !renamedFrom.has(p))];
  for (const { to } of files.renamed) if (!paths.includes(to)) paths.push(to);
  return [...new Set(paths)];
}

function testsOf(task: FactsTask, files: readonly string[]): Pick<TaskFacts, "tests" | "test_run"> {
  if (files.length === 0) return { tests: "no_files", test_run: null };
  const line = checkLines(task).find((l) => l.kind === "test");
  const last = line?.observation?.last ?? null;
  if (last === null) return { tests: "not_observed", test_run: null };
  return { tests: last.exit_code === 0 ? "passed" : "failed", test_run: { command: last.command, at: last.at, exit_code: last.exit_code } };
}

/** The facts of one exported task, given its workflow's issues and feedback. */
export function taskFacts(
  workflowId: string,
  task: FactsTask,
  issues: readonly FactsIssue[],
  feedback: readonly FactsFeedback[],
): TaskFacts {
  const files = task.files_changed ? changedPaths(task.files_changed) : [];
  const fileAuthors: FileAuthors[] = [];
  const lines: LineAuthors = { agent: 0, others: 0, not_observed: 0 };
  for (const line of task.files_changed?.lines ?? []) {
    if ("binary" in line) continue;
    const authors = authorsOf(line) ?? { agent: 0, others: 0, not_observed: line.added };
    fileAuthors.push({ path: line.path, ...authors });
    lines.agent += authors.agent;
    lines.others += authors.others;
    lines.not_observed += authors.not_observed;
  }
  const open: OpenReview[] = [];
  if (task.outcome?.manual_review_needed && latestVerdict(feedback, "task", task.id, task.completed_at) !== "approved") {
    open.push({ kind: "task", id: task.id, text: task.outcome.manual_review_reason || "manual review requested" });
  }
  for (const issue of issues) {
    if (issue.task_id !== task.id || !issue.requires_human_review) continue;
    if (latestVerdict(feedback, "issue", issue.id, null) !== "approved")
      open.push({ kind: "issue", id: issue.id, text: issue.description });
  }
  const source = task.files_changed?.source;
  const metrics = task.metrics ?? null;
  return {
    workflow_id: workflowId,
    id: task.id,
    name: task.name,
    status: task.status,
    agent: task.files_changed?.line_authors?.tool?.name ?? null,
    model: metrics?.model ?? null,
    cost_usd: metrics?.cost_usd ?? null,
    files,
    outside_areas: [...(task.verification?.unexpected_files ?? [])],
    lines,
    file_authors: fileAuthors,
    ...testsOf(task, files),
    figures: task.files_changed === null ? "none" : source ? filesKind(source) : "claimed",
    usage_signed: metrics === null ? null : metrics.source === "transcript" && metrics.device !== null && metrics.device !== undefined,
    open_reviews: open,
    feedback: feedback.filter((item) => item.target_id === task.id || issues.some((i) => i.task_id === task.id && i.id === item.target_id)),
  };
}
