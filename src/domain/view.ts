/**
 * @module domain/view
 * The read model of one workflow: what get_workflow, pages, exports, events and the account
 * index are made of. Times are ISO 8601. Both the workflow object and the account index speak
 * it, so it sits below both.
 */
import type { CommandKind } from "@waymark/protocol/command-kind";
import type { LineTotals } from "@waymark/protocol/review-fields";
import type { Repository } from "@waymark/protocol/wire";
import type { FilesChanged } from "./changes";
import type { Overlap } from "./overlap";
import type { MetricsProvenance, TaskRepository } from "./provenance";
import type { ShareInfo } from "./share-status";

export type TaskStatus = "in_progress" | "success" | "partial_success" | "failed";
export type WorkflowStatus = "active" | "success" | "partial_success" | "failed";

/** A JSON object from an agent. Shallowly typed on purpose: a recursive type is too deep for the RPC stub types. */
export type JsonObject = Record<string, string | number | boolean | null | object>;

export interface PlanStep {
  step: string;
  goal: string;
}

export interface WorkflowOutcome {
  summary: string;
  achievements: string[];
  limitations: string[];
}

export interface WorkflowHeader {
  id: string;
  name: string;
  description: string | null;
  plan: PlanStep[];
  status: WorkflowStatus;
  outcome: WorkflowOutcome | null;
  created_at: string;
  completed_at: string | null;
  updated_at: string;
  /** The repository the helper reported at start_workflow (absent: none reported). */
  repository?: WorkflowRepository | null;
}

/** Repository identity as shown: fingerprint, normalised remote (no credentials), branch. */
export type WorkflowRepository = Repository;

export interface TaskOutcome {
  summary: string;
  achievements?: string[];
  limitations?: string[];
  manual_review_needed?: boolean;
  manual_review_reason?: string;
  next_steps?: string[];
}

export interface TaskMetadata {
  packages_added?: string[];
  packages_removed?: string[];
  commands_executed?: string[];
  tests_status?: "passed" | "failed" | "not_run";
}

/** Usage the agent reported at complete_task; each task reports its own, not its subtasks'. */
export interface TaskMetrics {
  input_tokens: number | null;
  output_tokens: number | null;
  model: string | null;
  cost_usd: number | null;
  /**
   * Provenance: summed from the agent's transcript and signed by `device`, or the client's claim
   * (absent: recorded before it was kept; "transcript" without a device: recorded before devices signed).
   */
  source?: MetricsProvenance["source"] | null;
  price_table_date?: string | null;
  device?: MetricsProvenance["device"];
}

/** A shell command the agent ran during a task, as the helper's hooks observed it (docs/evidence.md). */
export interface CommandRunView {
  /** The command line, secrets redacted on the developer's machine; never its output. */
  command: string;
  /** The line was cut at the helper's byte bound. */
  truncated?: true;
  /** When it ended (the helper's clock). */
  at: string;
  /** null: the agent's hook did not report it (not observed). */
  exit_code: number | null;
  duration_ms: number | null;
  kinds: CommandKind[];
}

/** The commands observed during a task (a task without them: not observed), oldest first. */
export interface TaskCommandsView {
  runs: CommandRunView[];
  /** Runs observed beyond the helper's bound, not sent. */
  omitted: number;
  /** The agent's last edit through its own edit tools, per the hooks (null: none recorded). */
  last_edit_at: string | null;
}

export interface Verification {
  scope_match: boolean;
  unexpected_files: string[];
  warnings: string[];
  overlapping?: Overlap[];
  /**
   * Entries of these lists the record holds beyond this value (see FilesChanged.more):
   * unexpected files among the files not listed, overlaps past LIMITS.VIEW_OVERLAP_BYTES.
   */
  more?: { unexpected_files?: number; overlapping?: number };
}

export interface TaskView {
  id: string;
  parent_task_id: string | null;
  name: string;
  goal: string;
  areas: string[];
  status: TaskStatus;
  snapshot_type: "git" | "checksum" | "unavailable" | "none";
  started_at: string;
  completed_at: string | null;
  duration_seconds: number | null;
  outcome: TaskOutcome | null;
  metadata: TaskMetadata | null;
  files_changed: FilesChanged | null;
  verification: Verification | null;
  metrics: TaskMetrics | null;
  /** Repository, branch, start and end commits, as the helper reported them (absent or null: not reported). */
  repository?: TaskRepository | null;
  /** Shell commands the helper's hooks observed (absent or null: not observed). */
  commands?: TaskCommandsView | null;
}

export type DecisionCategory = "architecture" | "library_choice" | "trade_off" | "workaround" | "other";
export type IssueType = "documentation_gap" | "bug_encountered" | "dependency_conflict" | "unclear_requirement" | "other";

export interface DecisionView {
  id: string;
  task_id: string;
  category: DecisionCategory;
  question: string;
  options_considered: string[];
  chosen: string;
  reasoning: string;
  trade_offs: string | null;
  created_at: string;
}

export interface IssueView {
  id: string;
  task_id: string;
  type: IssueType;
  description: string;
  resolution: string;
  requires_human_review: boolean;
  created_at: string;
}

export interface MilestoneView {
  id: string;
  task_id: string;
  message: string;
  progress: number | null;
  metadata: JsonObject | null;
  created_at: string;
}

export interface Totals {
  tasks: number;
  open_tasks: number;
  duration_seconds: number;
  files_changed: number;
  decisions: number;
  issues: number;
  reviews_needed: number;
  /** Sums over the tasks that reported metrics (0 when none did). */
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** The head of the event log's hash chain: what an export is verified against. */
export interface ChainHead {
  algorithm: "sha256";
  genesis: string;
  head: string;
  events: number;
}

export interface WorkflowView {
  workflow: WorkflowHeader;
  tasks: TaskView[];
  decisions: DecisionView[];
  issues: IssueView[];
  milestones: MilestoneView[];
  totals: Totals;
  last_seq: number;
  chain?: ChainHead;
  /** The whole event log, in JSON exports only (with each event's hash). */
  events?: WorkflowEvent[];
}

/**
 * Paged reads: what a reader gets before the tasks (every figure is a running total or one row,
 * so it costs the same for 1 task or 5,000). Tasks come after it in pages of TaskEntry.
 */
export interface WorkflowHead {
  workflow: WorkflowHeader;
  totals: Totals;
  last_seq: number;
  chain: ChainHead;
  /** How many tasks the pages will yield. */
  task_count: number;
  /** Lines added and removed summed over the top-level tasks that measured them; null when none did. */
  line_totals: LineTotals | null;
  /** Review items as recorded (whatever reviewers answered since): tasks that asked for manual review, issues that require it. */
  review_items: { tasks: number; issues: number };
  /** The reviewers' feedback, oldest first (the owner's read and a share link's; at most LIMITS.FEEDBACK_PER_WORKFLOW). */
  feedback?: FeedbackView[];
  /** The share link's state: the owner's read only. */
  share?: ShareInfo;
}

/** One task in timeline order, with its own logs (each oldest first). */
export interface TaskEntry {
  task: TaskView;
  /** 0 for a top-level task, 1 for its subtasks, … */
  depth: number;
  decisions: DecisionView[];
  issues: IssueView[];
  milestones: MilestoneView[];
  /** How many direct subtasks follow it (depth + 1). */
  subtasks: number;
  /** Of the paths this task lists as added, modified or deleted, those a subtask (at any depth) lists too. */
  paths_in_subtasks: string[];
  /**
   * Present when the read listed only the first files of the task (a page's bound): how many of
   * its changed files (added, modified, deleted, renamed) it left out; the task's own read lists them.
   */
  files_unlisted?: number;
}

/**
 * A page of the timeline: top-level tasks by start, each followed depth-first by its subtasks.
 * `next_cursor` reads the next page; null when this one is the last.
 */
export interface TaskPage {
  entries: TaskEntry[];
  next_cursor: string | null;
}

/** Who reads through the paged reads: an account (must own the workflow) or a share link's reader (the object re-checks the token). */
export type Reader = string | { share_token: string };

export type EventType =
  | "workflow.started"
  | "workflow.completed"
  | "task.started"
  | "task.completed"
  /** A completed task's record changed afterwards (e.g. a later task reported an overlap with it). */
  | "task.updated"
  | "decision.logged"
  | "issue.logged"
  | "milestone.logged"
  /** A reviewer answered from the owner view (src/workflow/feedback.ts). */
  | "feedback.created";

/** One entry of the append-only log; `data` is the full entity after the change, so a follower can upsert by id. */
export interface WorkflowEvent {
  seq: number;
  at: string;
  type: EventType;
  task_id: string | null;
  data: WorkflowHeader | TaskView | DecisionView | IssueView | MilestoneView | FeedbackView;
  /** This event's link in the workflow's hash chain (@waymark/protocol/chain). */
  hash?: string;
}

/** What a reviewer's feedback is about: the whole workflow, or one of its tasks, decisions or issues. */
export type FeedbackTarget = "workflow" | "task" | "decision" | "issue";
/** A plain comment, or a verdict on a review item. */
export type FeedbackVerdict = "comment" | "approved" | "changes_requested";

/**
 * Where feedback was posted: the owner's page (a person signed in to the dashboard), or the review
 * app inside an MCP client (`mcp_app`), where the server cannot tell a person from the agent that
 * holds the same credential: a verdict sent there is recorded as a comment (workflow/feedback.ts).
 */
export type FeedbackChannel = "page" | "mcp_app";

/** Who posted feedback: the credential behind the request and how it was presented. */
export interface FeedbackAuthor {
  /** A managed token (named by its id) or a bootstrap token of the deployment's configuration (not named). */
  kind: "managed_token" | "bootstrap_token";
  /** The managed token's id; null for a bootstrap token (its digest would let anyone test guesses of a weak one). */
  credential: string | null;
  /** A dashboard session signed in with it, the token itself as a bearer, or an OAuth client approved with it. */
  via: "session" | "token" | "oauth";
  /** `oauth`: the client's id. */
  client?: string;
}

/** One piece of reviewer feedback, written in the owner view and delivered to the agent once. */
export interface FeedbackView {
  id: string;
  target: FeedbackTarget;
  /** The id of the workflow, task, decision or issue it is about. */
  target_id: string;
  verdict: FeedbackVerdict;
  body: string;
  created_at: string;
  /** When an agent's tool result carried it; null until then. */
  delivered_at: string | null;
  /** Who posted it; absent for feedback recorded before authors were (storage migration 17). */
  author?: FeedbackAuthor;
  /** Where it was posted; absent as `author` is. */
  channel?: FeedbackChannel;
}

/** What the account index keeps per workflow (dashboard, get_workflow without id). */
export interface WorkflowSummary {
  id: string;
  name: string;
  status: WorkflowStatus;
  created_at: string;
  updated_at: string;
  open_tasks: number;
  tasks: number;
  reviews_needed: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** Bytes of the workflow's event log and snapshots: counts toward the account's storage quota. */
  bytes_stored: number;
  /**
   * The repository start_workflow reported (its fingerprint is what resume-by-name compares; its
   * remote and branch tell apart workflows of one name on the dashboard). Absent or null: none reported.
   */
  repository?: WorkflowRepository | null;
  /** Distinct files changed by its tasks (absent in pushes from objects older than this field). */
  files_changed?: number;
}

/** Costs are sums of floats: shown to the micro-dollar. */
export function roundCost(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
