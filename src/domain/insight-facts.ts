/**
 * @module domain/insight-facts
 * What a workflow's events become in its account's Insights rollups (docs/insights.md): per
 * completed top-level task, the few facts the figures are made of (who did it, what it claimed,
 * what was observed and by whom), and per person's verdict on a task, the verdict and its time.
 * Run by the workflow object when it pushes its events (workflow/account-outbox, off the reply
 * path); the account object folds them into its rollups (account/insights).
 *
 * Subtasks are part of their top-level task (its files and lines include theirs), so only
 * top-level tasks are facts: nothing is counted twice.
 */
import { checkLines } from "@waymark/protocol/check-evidence";
import { filesKind } from "@waymark/protocol/provenance-wording";
import type { FeedbackView, TaskView, WorkflowEvent, WorkflowHeader } from "./view";

/** Who vouches for a figure: a device's signature verified (signed), the client alone (claimed), or nobody observed it. */
export type EvidenceKind = "signed" | "claimed" | "not_observed";

/** One completed top-level task, as the rollups count it. */
export interface InsightTaskFact {
  task_id: string;
  workflow_id: string;
  completed_at: string;
  /** The agent its hooks named (Agent Trace's tool name); null: no hook named one. */
  agent: string | null;
  /** The model its usage names; null: none reported. */
  model: string | null;
  /** The task's repository (its own, else its workflow's); null: none reported. */
  repository: { fingerprint: string; remote: string | null } | null;
  /** The agent's own verdict on its work (a claim). */
  status: "success" | "partial_success" | "failed";
  /** Where the helper's observations (files, lines, commands) came from. */
  files: EvidenceKind;
  /**
   * The last test run after the agent's last edit: passed (exit 0), failed (any other exit or
   * none reported), none (commands observed, no test run after the last edit); null: the task's
   * commands were not observed.
   */
  tests: "passed" | "failed" | "none" | null;
  /** Whether changed files fell outside the declared areas; null: files not observed, no areas declared, or not all checked. */
  outside_areas: boolean | null;
  /** Areas were declared (with files observed): what outside_areas is out of. */
  areas_declared: boolean;
  /** Added lines by writer (the agent's own edit tools, others, not observed); null: no lines attributed. */
  lines: { agent: number; others: number; not_observed: number } | null;
  /** Usage: cost and tokens (each null when not reported), and who vouches for them; null: none reported. */
  usage: { cost_usd: number | null; tokens: number | null; kind: "signed" | "claimed" } | null;
}

/** A person's verdict on a task (a comment, or a verdict from a channel where no person acted, is not one). */
export interface InsightVerdictFact {
  feedback_id: string;
  task_id: string;
  verdict: "approved" | "changes_requested";
  at: string;
}

/**
 * What a later task's helper observed of an earlier task's lines (`waymark blame`'s reading of git
 * and the records, at the later task's completion): of the agent's lines the earlier task
 * recorded, how many are still where it wrote them at `commit`. Vouched for as the reporting
 * task's files are.
 */
export interface InsightDurabilityFact {
  task_id: string;
  reported_by: string;
  /** The repository it was observed in: it must be the observed task's. */
  repository: string;
  at: string;
  commit: string;
  recorded: number;
  present: number;
  kind: "signed" | "claimed";
}

export interface InsightFacts {
  tasks?: InsightTaskFact[];
  verdicts?: InsightVerdictFact[];
  durability?: InsightDurabilityFact[];
}

/** Where the helper's observations came from (records written before devices signed read as claims). */
function evidenceOf(task: TaskView): EvidenceKind {
  const source = task.files_changed?.source;
  return source ? filesKind(source) : "not_observed";
}

function testsOf(task: TaskView): InsightTaskFact["tests"] {
  if (!task.commands) return null;
  const test = checkLines({ commands: task.commands }).find((line) => line.kind === "test")?.observation;
  if (!test?.last) return "none";
  return test.last.exit_code === 0 ? "passed" : "failed";
}

function outsideAreas(task: TaskView, files: EvidenceKind): boolean | null {
  const verification = task.verification;
  if (files === "not_observed" || task.areas.length === 0 || !verification) return null;
  const outside = verification.unexpected_files.length + (verification.more?.unexpected_files ?? 0);
  if (outside > 0) return true;
  // Not every path was checked (the check's bound): not known either way.
  return verification.scope_match ? false : null;
}

function linesOf(task: TaskView, files: EvidenceKind): InsightTaskFact["lines"] {
  const authors = task.files_changed?.line_authors;
  if (!authors || files === "not_observed") return null;
  return { agent: authors.agent, others: authors.others, not_observed: authors.not_observed };
}

function usageOf(task: TaskView): InsightTaskFact["usage"] {
  const m = task.metrics;
  if (!m) return null;
  const tokens = m.input_tokens === null && m.output_tokens === null ? null : (m.input_tokens ?? 0) + (m.output_tokens ?? 0);
  if (tokens === null && m.cost_usd === null) return null;
  return { cost_usd: m.cost_usd, tokens, kind: m.source === "transcript" && m.device ? "signed" : "claimed" };
}

/** A completed top-level task's facts; null for a task still open or a subtask. */
export function taskFact(task: TaskView, workflow: Pick<WorkflowHeader, "id" | "repository">): InsightTaskFact | null {
  if (task.parent_task_id !== null || task.status === "in_progress" || task.completed_at === null) return null;
  const files = evidenceOf(task);
  const repo = task.repository?.fingerprint ? task.repository : (workflow.repository ?? null);
  const outside = outsideAreas(task, files);
  return {
    task_id: task.id,
    workflow_id: workflow.id,
    completed_at: task.completed_at,
    agent: task.files_changed?.line_authors?.tool?.name ?? null,
    model: task.metrics?.model ?? null,
    repository: repo?.fingerprint ? { fingerprint: repo.fingerprint, remote: repo.remote ?? null } : null,
    status: task.status,
    files,
    tests: testsOf(task),
    outside_areas: outside,
    areas_declared: files !== "not_observed" && task.areas.length > 0,
    lines: linesOf(task, files),
    usage: usageOf(task),
  };
}

/** A feedback item as a verdict fact: only a person's approval or request for changes on a task. */
export function verdictFact(feedback: FeedbackView): InsightVerdictFact | null {
  if (feedback.target !== "task" || feedback.verdict === "comment") return null;
  // Verdicts sent from where the server cannot tell a person from the agent are stored as comments;
  // checked again here, whatever recorded them.
  if (feedback.channel === "mcp_app") return null;
  return { feedback_id: feedback.id, task_id: feedback.target_id, verdict: feedback.verdict, at: feedback.created_at };
}

/** What a completed task's helper reported of earlier tasks' lines, vouched for as the task's files are. */
export function durabilityFacts(
  task: TaskView,
  fact: InsightTaskFact | null,
  workflow: Pick<WorkflowHeader, "repository">,
): InsightDurabilityFact[] {
  const repository = fact?.repository?.fingerprint ?? task.repository?.fingerprint ?? workflow.repository?.fingerprint;
  if (!task.durability || !repository || task.completed_at === null) return [];
  const kind = evidenceOf(task) === "signed" ? "signed" : "claimed";
  return task.durability.map((seen) => ({
    task_id: seen.task_id,
    reported_by: task.id,
    repository,
    at: seen.at,
    commit: seen.commit,
    recorded: seen.recorded,
    present: seen.present,
    kind,
  }));
}

/** The facts in a batch of the workflow's events (a task completed, or its record updated afterwards; a verdict). */
export function insightFactsFromEvents(
  events: readonly WorkflowEvent[],
  workflow: Pick<WorkflowHeader, "id" | "repository">,
): InsightFacts {
  const tasks = new Map<string, InsightTaskFact>();
  const verdicts: InsightVerdictFact[] = [];
  const durability = new Map<string, InsightDurabilityFact[]>();
  for (const event of events) {
    if (event.type === "task.completed" || event.type === "task.updated") {
      const task = event.data as TaskView;
      const fact = taskFact(task, workflow);
      // A later event of the same task carries its whole record again: the last one wins.
      if (fact) tasks.set(fact.task_id, fact);
      const seen = durabilityFacts(task, fact, workflow);
      if (seen.length > 0) durability.set(task.id, seen);
    } else if (event.type === "feedback.created") {
      const fact = verdictFact(event.data as FeedbackView);
      if (fact) verdicts.push(fact);
    }
  }
  const facts: InsightFacts = {};
  if (tasks.size > 0) facts.tasks = [...tasks.values()];
  if (verdicts.length > 0) facts.verdicts = verdicts;
  if (durability.size > 0) facts.durability = [...durability.values()].flat();
  return facts;
}
