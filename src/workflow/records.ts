/**
 * @module workflow/records
 * Typed rows of one workflow's SQLite and their mapping to the read model (domain/view, defined
 * in @waymark/protocol/views). Every statement on the workflow's entities (the workflow, tasks,
 * their snapshots and logs) lives here or in the collaborator it owns for a task's files
 * (workflow/task-files), so a new column means a migration, the view's schema, and here its row
 * type (a column the view shows as stored is the view's field: the row type takes it from there),
 * its insert and its mapping. The rules of when a write may happen are workflow/lifecycle's; this
 * module only reads and writes.
 */

import type { RecordKind } from "@waymark/protocol/export-members";
import { type TaskReviewFacts, taskReviewFacts } from "@waymark/protocol/review-counts";
import type * as Tools from "@waymark/protocol/tools";
import type { DeviceRef } from "@waymark/protocol/views/common";
import type { RecordView } from "@waymark/protocol/views/reads";
import type { LineDurability } from "@waymark/protocol/views/task";
import type { ObservedCommands, Repository } from "@waymark/protocol/wire";
import type { Snapshot } from "../domain/changes";
import type { CompletedTaskChanges, TaskWindow } from "../domain/overlap";
import { type StartSignature, type TaskRepository, taskRepository } from "../domain/provenance";
import { type StoredFiles, utf8Length } from "../domain/stored-files";
import type {
  DecisionView,
  IssueView,
  JsonObject,
  MilestoneView,
  TaskCommandsView,
  TaskMetrics,
  TaskView,
  Verification,
  WorkflowHeader,
  WorkflowOutcome,
  WorkflowSummary,
} from "../domain/view";
import { WaymarkError } from "../errors";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";
import { DeviceSignedRecords } from "./device-signed";
import { HeadFigures } from "./head-figures";
import { PlanProgress } from "./plan-progress";
import type { ShareHash } from "./share";
import { commandMarks, TaskCommands } from "./task-commands";
import { TaskFiles, type WrittenFiles } from "./task-files";
import { inTaskIndex, LOG_KINDS, type LogKind, type LogWindowTask, logColumns, TaskLogs } from "./task-logs";
import type { RunningTotals } from "./totals";
import type { WorkflowTables } from "./workflow-tables";

/**
 * Rows as workflow-schema's migrations make them (`SELECT *`). A column the view shows as it is
 * stored is typed by its view field; the others say how they are stored: times in epoch ms, JSON
 * as text, booleans as 0/1, and what the view does not show.
 */
export type TaskRow = Pick<TaskView, "id" | "name" | "goal" | "status" | "snapshot_type" | "duration_seconds"> &
  Pick<TaskMetrics, "input_tokens" | "output_tokens" | "model" | "cost_usd"> & {
    parent_id: string | null;
    /** JSON string[]. */
    areas: string;
    snapshot_head: string | null;
    snapshot_meta: string | null;
    started_at: number;
    completed_at: number | null;
    /** JSON TaskOutcome, TaskMetadata; the small JSON of files_changed and verification (workflow/task-files). */
    outcome: string | null;
    metadata: string | null;
    files_changed: string | null;
    verification: string | null;
    /** Provenance columns (JSON TaskRepository; "transcript" | "agent"; YYYY-MM-DD). */
    repository: string | null;
    metrics_source: NonNullable<TaskMetrics["source"]> | null;
    price_table_date: string | null;
    /** Device signatures (JSON StartSignature; JSON DeviceRef of the device that signed the usage). */
    start_signature: string | null;
    metrics_device: string | null;
    /** How many files the task changed, and how many of the first a single value lists (NULL: completed before files were rows). */
    files_count: number | null;
    files_listed: number | null;
    /** Of the files past the listed ones, how many are outside the task's areas (NULL: completed before v24, counted when read). */
    files_unlisted_unexpected: number | null;
    /** Evidence columns (workflow/task-commands): 1 when commands were observed, else NULL. */
    commands_observed: number | null;
    commands_omitted: number | null;
    last_edit_at: number | null;
    /** JSON LineDurability[]: earlier tasks' lines this task's helper observed (NULL: none reported). */
    durability: string | null;
    /** JSON TaskReviewFacts, kept when the task completed (NULL: open, or completed before they were kept). */
    review_facts: string | null;
    /** The credentials (src/domain/credentials CredentialRef) that started and completed it; never shown, only compared. */
    started_by: string | null;
    completed_by: string | null;
    /** The last event's seq before its start (v27; workflow/task-logs): NULL for tasks started before. */
    start_seq: number | null;
  };

/** What a log write needs of its task: which task, whether it is open, and its log window (workflow/task-logs). */
export type LoggedTask = Pick<TaskRow, "id" | "status" | "started_at" | "start_seq">;
const logKey = (table: LogKind, taskId: string) => `${table}\0${taskId}`;
/** Running tasks' log counts kept in memory at most (three kinds each): past it they are read again. */
const LOG_COUNTS_KEPT = 3_000;

export type WorkflowRow = Pick<WorkflowHeader, "id" | "name" | "description" | "status"> & {
  account: string;
  /** JSON PlanStep[], WorkflowOutcome. */
  plan: string;
  outcome: string | null;
  created_at: number;
  completed_at: number | null;
  updated_at: number;
  /** JSON Repository the helper reported at start_workflow. */
  repository: string | null;
};

type DecisionRow = Omit<DecisionView, "options_considered" | "created_at"> & { options: string; created_at: number };
type IssueRow = Omit<IssueView, "requires_human_review" | "created_at"> & { requires_human_review: number; created_at: number };
type MilestoneRow = Omit<MilestoneView, "metadata" | "created_at"> & { metadata: string | null; created_at: number };

/** A task's log entries as views, and the characters of their text (what a page's budget weighs). */
export interface TaskLogViews {
  decisions: DecisionView[];
  issues: IssueView[];
  milestones: MilestoneView[];
  chars: number;
}

/** Characters of a text as SQLite's length() counts them (code points, not UTF-16 units); none for NULL. */
function chars(text: string | null): number {
  if (text === null) return 0;
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

export type { RecordKind } from "@waymark/protocol/export-members";
export type { RecordView } from "@waymark/protocol/views/reads";
/** Where a page of rows stopped: the row's time (started_at or created_at, ms) and id. */
export type RowPosition = { at: number; id: string };

/** Two blob ids, two modes and the row's own cost: what a snapshot entry stores besides its path. */
const SNAPSHOT_ENTRY_OVERHEAD = 100;

export const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));
const state = (mode: string | null, blob: string | null) => (mode !== null && blob !== null ? { mode, blob } : null);

/**
 * A task's view; `files`: its files_changed and verification as task-files reads them (null while
 * it runs); `commands`: the commands task-commands read (absent: not observed).
 */
function taskView(
  t: TaskRow,
  files: { files_changed: TaskView["files_changed"]; verification: Verification | null } | null,
  commands?: TaskCommandsView,
): TaskView {
  const view: TaskView = {
    id: t.id,
    parent_task_id: t.parent_id,
    name: t.name,
    goal: t.goal,
    areas: JSON.parse(t.areas) as string[],
    status: t.status,
    snapshot_type: t.snapshot_type,
    started_at: iso(t.started_at),
    completed_at: isoOrNull(t.completed_at),
    duration_seconds: t.duration_seconds,
    outcome: parse(t.outcome),
    metadata: parse(t.metadata),
    files_changed: files?.files_changed ?? null,
    verification: files?.verification ?? null,
    metrics:
      t.input_tokens === null && t.output_tokens === null && t.model === null && t.cost_usd === null
        ? null
        : {
            input_tokens: t.input_tokens,
            output_tokens: t.output_tokens,
            model: t.model,
            cost_usd: t.cost_usd,
            // Provenance, when recorded (rows written before it was kept have none).
            ...(t.metrics_source ? { source: t.metrics_source } : {}),
            ...(t.price_table_date ? { price_table_date: t.price_table_date } : {}),
            ...(t.metrics_device ? { device: JSON.parse(t.metrics_device) as DeviceRef } : {}),
          },
    repository: parse<TaskRepository>(t.repository),
  };
  if (commands) view.commands = commands;
  if (t.durability !== null) view.durability = JSON.parse(t.durability) as LineDurability[];
  return view;
}

function decisionView(r: DecisionRow): DecisionView {
  return {
    id: r.id,
    task_id: r.task_id,
    category: r.category,
    question: r.question,
    options_considered: JSON.parse(r.options) as string[],
    chosen: r.chosen,
    reasoning: r.reasoning,
    trade_offs: r.trade_offs,
    created_at: iso(r.created_at),
  };
}

function issueView(r: IssueRow): IssueView {
  return {
    id: r.id,
    task_id: r.task_id,
    type: r.type,
    description: r.description,
    resolution: r.resolution,
    requires_human_review: r.requires_human_review === 1,
    created_at: iso(r.created_at),
  };
}

function milestoneView(r: MilestoneRow): MilestoneView {
  return {
    id: r.id,
    task_id: r.task_id,
    message: r.message,
    progress: r.progress,
    metadata: parse<JsonObject>(r.metadata),
    created_at: iso(r.created_at),
  };
}

export class WorkflowRecords {
  private knownIdentity: { id: string; account: string } | null = null;
  /** Review facts of tasks completed before they were kept, read once from their views (a completed task's never change). */
  private readonly olderFacts = new Map<string, TaskReviewFacts>();
  /** A task's changed files and overlaps: rows of their own, never one value. */
  readonly files: TaskFiles;
  /** The shell commands observed during a task: rows of their own. */
  readonly commands: TaskCommands;
  /** The device-signed payloads the edge accepted, kept whole for the export. */
  readonly deviceSigned: DeviceSignedRecords;
  /** Which completed tasks fulfilled each plan step (the resume's), kept once read. */
  readonly planProgress: PlanProgress;
  /** What the head's whole-workflow figures count (every task's review facts, the flagged issues, line totals), kept once read. */
  readonly figures: HeadFigures;
  /**
   * The ids of the tasks still running, once read (one scan of the tasks per object instance):
   * kept here instead of an index on open tasks (v25 dropped it), whose entry every task's start
   * wrote and its completion deleted. Starts add, completions remove; a write that rolls back
   * forgets them (forgetUncommitted), and the next read scans again.
   */
  private openIds: Set<string> | null = null;
  /**
   * How many entries of each log kind the running tasks have, once a log write read it (the bound
   * check of the next log on the task then reads nothing; only a completion ends a task's
   * running, and it drops the task's counts): inserts add, a rolled-back write forgets them all.
   * At most LOG_COUNTS_KEPT, then read again.
   */
  private readonly logCounts = new Map<string, { task: LoggedTask; logs: number }>();
  /**
   * The credentials that started or completed a task, once read (one scan of the tasks per object
   * instance; a signed-in reviewer's every page read asks, recordedWith): starts and completions
   * add theirs, a write that rolls back forgets them all.
   */
  private writers: Set<string> | null = null;
  private readonly logs: TaskLogs;

  /**
   * `stored`: whether the object has a schema at all; without one there is no workflow, and asking creates nothing.
   * `tables`: the tables created on first use (a task's dirty start entries, its overlaps, commands, changed paths past the packed set).
   */
  constructor(
    private readonly sql: Sql,
    private readonly tables: WorkflowTables,
    private readonly stored: () => boolean = () => true,
  ) {
    this.files = new TaskFiles(sql, tables);
    this.logs = new TaskLogs(sql);
    this.commands = new TaskCommands(sql, tables);
    this.deviceSigned = new DeviceSignedRecords(sql, tables);
    this.planProgress = new PlanProgress(sql);
    this.figures = new HeadFigures(sql);
  }

  /** `link`: the workflow's first share link (workflow/share), written with the row rather than by an update after it (a row written fewer). */
  insertWorkflow(id: string, account: string, input: Tools.StartWorkflowInput, now: number, link: ShareHash | null): void {
    // Repository identity as the helper reported it at start_workflow, in the same row written.
    const repository = input.repository ? JSON.stringify(input.repository) : null;
    this.sql`INSERT INTO workflow (id, account, name, description, plan, created_at, updated_at, repository,
        share_token_hash, share_salt, share_created_at)
      VALUES (${id}, ${account}, ${input.name}, ${input.description ?? null}, ${JSON.stringify(input.plan ?? [])}, ${now}, ${now},
              ${repository}, ${link?.hash ?? null}, ${link?.salt ?? null}, ${link ? now : null})`;
  }

  completeWorkflow(input: Tools.CompleteWorkflowInput, now: number): void {
    const outcome: WorkflowOutcome = {
      summary: input.summary,
      achievements: input.achievements ?? [],
      limitations: input.limitations ?? [],
    };
    this
      .sql`UPDATE workflow SET status = ${input.status}, outcome = ${JSON.stringify(outcome)}, completed_at = ${now}, updated_at = ${now}`;
  }

  workflow(): WorkflowRow | null {
    if (!this.stored()) return null;
    // The time of the agent's last write is stored with the totals every write stores (workflow/totals):
    // on the last write's last event, or on the totals row when that is newer. The row's columns by
    // name: its packed set of changed paths (up to 64 KB, workflow/changed-paths) is not read here.
    const row = this.sql<WorkflowRow & { last_write_at: number | null }>`
      SELECT w.id, w.account, w.name, w.description, w.plan, w.status, w.outcome, w.created_at, w.completed_at, w.updated_at,
        w.repository, coalesce((SELECT e.totals ->> '$.updated_at' FROM events e WHERE e.seq > t.seq AND e.totals IS NOT NULL
          ORDER BY e.seq DESC LIMIT 1), t.updated_at) AS last_write_at
      FROM workflow w LEFT JOIN totals t ON t.id = 1 LIMIT 1`[0];
    if (!row) return null;
    const { last_write_at, ...workflow } = row;
    return { ...workflow, updated_at: Math.max(workflow.updated_at, last_write_at ?? 0) };
  }

  /**
   * The workflow's id and owning account, or null before it starts. Both are written once, when
   * the workflow starts, and never change, so after the first read they cost no query: the
   * ownership check every log write and read makes.
   */
  identity(): { id: string; account: string } | null {
    if (this.knownIdentity) return this.knownIdentity;
    const w = this.workflow();
    if (w) this.knownIdentity = { id: w.id, account: w.account };
    return this.knownIdentity;
  }

  header(): WorkflowHeader {
    const w = this.workflow();
    if (!w) throw new WaymarkError("INTERNAL", "workflow row missing");
    return {
      id: w.id,
      name: w.name,
      description: w.description,
      plan: JSON.parse(w.plan) as WorkflowHeader["plan"],
      status: w.status,
      outcome: parse(w.outcome),
      created_at: iso(w.created_at),
      completed_at: isoOrNull(w.completed_at),
      updated_at: iso(w.updated_at),
      repository: parse(w.repository),
    };
  }

  summary(totals: RunningTotals): WorkflowSummary {
    const w = this.workflow();
    if (!w) throw new WaymarkError("INTERNAL", "workflow row missing");
    const t = totals.read();
    return {
      id: w.id,
      name: w.name,
      status: w.status,
      created_at: iso(w.created_at),
      updated_at: iso(w.updated_at),
      open_tasks: t.open_tasks,
      tasks: t.tasks,
      reviews_needed: t.reviews_needed,
      input_tokens: t.input_tokens,
      output_tokens: t.output_tokens,
      cost_usd: t.cost_usd,
      bytes_stored: totals.usage().bytes_stored,
      repository: parse<Repository>(w.repository) ?? null,
      files_changed: t.files_changed,
    };
  }

  task(id: string): TaskRow | null {
    return this.sql<TaskRow>`SELECT * FROM tasks WHERE id = ${id}`[0] ?? null;
  }

  /** The view of a task the current write just wrote: its absence is a bug, not a caller's mistake. */
  written(id: string): TaskView {
    const task = this.task(id);
    if (!task) throw new WaymarkError("INTERNAL", `task ${id} vanished during a write`);
    return this.taskView(task);
  }

  /** `written`: the task's files as the current write stored them (TaskFiles.store), not read back. */
  taskView(row: TaskRow, written?: WrittenFiles): TaskView {
    const files = this.files.views([row], written);
    return taskView(row, files.get(row.id) ?? null, this.commands.views([row]).get(row.id));
  }

  /** Views of several tasks, their files and commands read in a few batched statements. */
  taskViews(rows: readonly TaskRow[]): TaskView[] {
    const files = this.files.views(rows);
    const commands = this.commands.views(rows);
    return rows.map((row) => taskView(row, files.get(row.id) ?? null, commands.get(row.id)));
  }

  openTasks(): TaskRow[] {
    this.openIds ??= new Set(this.sql<{ id: string }>`SELECT id FROM tasks WHERE status = 'in_progress'`.map((row) => row.id));
    if (this.openIds.size === 0) return [];
    return this.sql<TaskRow>`
      SELECT * FROM tasks WHERE id IN (SELECT value FROM json_each(${JSON.stringify([...this.openIds])})) AND status = 'in_progress'
      ORDER BY started_at`;
  }

  /** The write that started or completed tasks rolled back: the running tasks are read again. */
  forgetUncommitted(): void {
    this.openIds = null;
    this.writers = null;
    this.planProgress.forgetUncommitted();
    this.figures.forgetUncommitted();
    this.logCounts.clear();
  }

  /** A log entry was inserted for `taskId`: its kept count, if any, follows. */
  private logged(table: LogKind, taskId: string): void {
    const key = logKey(table, taskId);
    const kept = this.logCounts.get(key);
    if (kept !== undefined) kept.logs++;
  }

  openChildren(taskId: string): { id: string; name: string }[] {
    return this.sql<{ id: string; name: string }>`
      SELECT id, name FROM tasks WHERE parent_id = ${taskId} AND status = 'in_progress' ORDER BY started_at`;
  }

  /** Tasks by id, in no particular order. */
  tasksById(ids: readonly string[]): TaskRow[] {
    return this.sql<TaskRow>`SELECT * FROM tasks WHERE id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  }

  /**
   * The logs of some tasks (their rows, with their start and log window: workflow/task-logs), by
   * task, each oldest first (the order the whole view lists them in), with what their text weighs
   * (`chars`: the characters of the columns a page's budget counts, as SQLite's length() counts them).
   */
  logsOf(tasks: readonly LogWindowTask[]): Map<string, TaskLogViews> {
    const logs = new Map<string, TaskLogViews>();
    const of = (taskId: string) => {
      const own = logs.get(taskId) ?? { decisions: [], issues: [], milestones: [], chars: 0 };
      logs.set(taskId, own);
      return own;
    };
    for (const r of this.logs.of<DecisionRow>("decisions", tasks)) {
      const own = of(r.task_id);
      own.decisions.push(decisionView(r));
      own.chars += chars(r.question) + chars(r.options) + chars(r.chosen) + chars(r.reasoning) + chars(r.trade_offs);
    }
    for (const r of this.logs.of<IssueRow>("issues", tasks)) {
      const own = of(r.task_id);
      own.issues.push(issueView(r));
      own.chars += chars(r.description) + chars(r.resolution);
    }
    for (const r of this.logs.of<MilestoneRow>("milestones", tasks)) {
      const own = of(r.task_id);
      own.milestones.push(milestoneView(r));
      own.chars += chars(r.message) + chars(r.metadata);
    }
    return logs;
  }

  /**
   * Rows of one kind after a position, in the whole view's order (tasks by start, logs by
   * creation, ties by id): the JSON export's arrays, one bounded page at a time.
   */
  rowsAfter(kind: RecordKind, after: RowPosition | null, limit: number): { at: number; id: string; view: RecordView }[] {
    const at = after?.at ?? -1;
    const id = after?.id ?? "";
    if (kind === "tasks") {
      // No index in start order (v25: a row written per task for this read alone): the page's rows
      // are picked by sorting the (start, id) of the tasks after the position (the siblings index
      // holds both), then read whole by their key.
      const rows = this.sql<TaskRow>`SELECT * FROM tasks WHERE id IN (
          SELECT id FROM tasks WHERE (started_at, id) > (${at}, ${id}) ORDER BY started_at, id LIMIT ${limit}
        ) ORDER BY started_at, id`;
      const views = this.taskViews(rows);
      return rows.map((r, index) => ({ at: r.started_at, id: r.id, view: views[index] as TaskView }));
    }
    // A kind's entries are a range of the log's key (kind, created_at, id): the page is read along it.
    if (kind === "decisions") {
      return this
        .sql<DecisionRow>`SELECT ${logColumns("decisions")} FROM log_entries WHERE kind = 'decisions' AND (created_at, id) > (${at}, ${id})
        ORDER BY created_at, id LIMIT ${limit}`.map((r) => ({ at: r.created_at, id: r.id, view: decisionView(r) }));
    }
    if (kind === "issues") {
      return this.sql<IssueRow>`SELECT ${logColumns("issues")} FROM log_entries WHERE kind = 'issues' AND (created_at, id) > (${at}, ${id})
        ORDER BY created_at, id LIMIT ${limit}`.map((r) => ({ at: r.created_at, id: r.id, view: issueView(r) }));
    }
    return this
      .sql<MilestoneRow>`SELECT ${logColumns("milestones")} FROM log_entries WHERE kind = 'milestones' AND (created_at, id) > (${at}, ${id})
      ORDER BY created_at, id LIMIT ${limit}`.map((r) => ({ at: r.created_at, id: r.id, view: milestoneView(r) }));
  }

  /** Each task's latest milestone, by task id (its newest entry through workflow/task-logs: a row or two a task, not all of them). */
  lastMilestones(tasks: readonly LogWindowTask[]): Map<string, string> {
    return new Map([...this.logs.newest<MilestoneRow>("milestones", tasks)].map(([id, row]) => [id, row.message]));
  }

  /**
   * A task with how many rows of one log kind it has, in one query (a log write's bound check);
   * the kinds are fixed table names, never input.
   */
  taskWithLogCount(id: string, table: LogKind): { task: LoggedTask; logs: number } | null {
    const kept = this.logCounts.get(logKey(table, id));
    if (kept !== undefined) return { ...kept };
    // Only what a log write reads of its task: a row of every column cost more than the insert.
    const task = this.sql<LoggedTask>`SELECT id, status, started_at, start_seq FROM tasks WHERE id = ${id}`[0];
    if (!task) return null;
    const logs = this.logs.of<{ id: string }>(table, [task]).length;
    if (task.status === "in_progress") {
      if (this.logCounts.size >= LOG_COUNTS_KEPT) this.logCounts.clear();
      this.logCounts.set(logKey(table, id), { task, logs });
    }
    return { task, logs };
  }

  /** A task's name and areas, indexed with its decisions and issues. */
  taskContext(taskId: string): string {
    const task = this.task(taskId);
    return task ? `${task.name}\n${(JSON.parse(task.areas) as string[]).join(" ")}` : "";
  }

  storedSnapshot(task: TaskRow): Snapshot | null {
    if (task.snapshot_type === "git") {
      const meta = parse<{ branch: string | null; dirty?: number }>(task.snapshot_meta);
      // A start on a clean tree (its count kept with it) has no entries to read; nor a workflow whose table was never made.
      const rows =
        meta?.dirty === 0 || !this.tables.has("snapshot_entries")
          ? []
          : this.sql<{
              path: string;
              head_mode: string | null;
              head_blob: string | null;
              worktree_mode: string | null;
              worktree_blob: string | null;
            }>`SELECT path, head_mode, head_blob, worktree_mode, worktree_blob FROM snapshot_entries WHERE task_id = ${task.id}`;
      return {
        type: "git",
        head: task.snapshot_head,
        branch: meta?.branch ?? null,
        dirty: rows.map((r) => ({
          path: r.path,
          head: state(r.head_mode, r.head_blob),
          worktree: state(r.worktree_mode, r.worktree_blob),
        })),
      };
    }
    if (task.snapshot_type === "checksum") {
      const meta = parse<{ files: number; digest: string }>(task.snapshot_meta);
      return { type: "checksum", files: meta?.files ?? 0, digest: meta?.digest ?? "" };
    }
    return null;
  }

  /**
   * A completed task's part in the review counts (@waymark/protocol/review-counts): kept with it
   * since it completed, else read from its view once; null while it is open.
   */
  reviewFacts(row: Pick<TaskRow, "id" | "status" | "review_facts">): TaskReviewFacts | null {
    if (row.status === "in_progress") return null;
    if (row.review_facts !== null) return JSON.parse(row.review_facts) as TaskReviewFacts;
    const known = this.olderFacts.get(row.id);
    if (known) return known;
    const task = this.task(row.id);
    if (!task) return null;
    const facts = taskReviewFacts(this.taskView(task));
    this.olderFacts.set(row.id, facts);
    return facts;
  }

  /** The task an issue was logged on, and whether it requires human review; null for no such issue. */
  issue(id: string): { task_id: string; requires_human_review: boolean } | null {
    const row = this.sql<{
      task_id: string;
      review: number;
    }>`SELECT task_id, requires_human_review AS review FROM log_entries WHERE kind = 'issues' AND id = ${id}`[0];
    return row ? { task_id: row.task_id, requires_human_review: row.review === 1 } : null;
  }

  /** The credentials that recorded a task (started or completed it); empty for tasks recorded before they were kept. */
  writersOf(taskId: string): string[] {
    const row = this.sql<{ started_by: string | null; completed_by: string | null }>`
      SELECT started_by, completed_by FROM tasks WHERE id = ${taskId}`[0];
    return [row?.started_by, row?.completed_by].filter((ref): ref is string => typeof ref === "string");
  }

  /** Whether any task of the workflow was recorded with this credential. */
  recordedWith(credential: string): boolean {
    this.writers ??= new Set(
      this.sql<{ writer: string }>`
        SELECT started_by AS writer FROM tasks WHERE started_by IS NOT NULL
        UNION SELECT completed_by FROM tasks WHERE completed_by IS NOT NULL`.map((row) => row.writer),
    );
    return this.writers.has(credential);
  }

  /**
   * Stores a new task and its start snapshot (`writer`: the credential that started it; `start`:
   * the device signature its snapshot carried, when one verified) in one row written; returns the
   * bytes the snapshot entries take.
   */
  insertTask(
    taskId: string,
    input: Tools.StartTaskInput,
    now: number,
    writer: string | null = null,
    start: StartSignature | null = null,
    startSeq: number | null = null,
  ): number {
    const snapshot = input.snapshot;
    const meta =
      snapshot?.type === "checksum"
        ? { files: snapshot.files, digest: snapshot.digest }
        : snapshot?.type === "git"
          ? { branch: snapshot.branch ?? null, dirty: snapshot.dirty.length }
          : null;
    // Repository identity: which repository and branch the task ran in, from its start commit on.
    const repository =
      snapshot?.type === "git" ? taskRepository(snapshot.repository, snapshot.head, snapshot.dirty, snapshot.dirty_omitted ?? 0) : null;
    this.openIds?.add(taskId);
    this.figures.started(taskId);
    if (writer !== null) this.writers?.add(writer);
    this.sql`INSERT INTO tasks (id, parent_id, name, goal, areas, snapshot_type, snapshot_head, snapshot_meta, started_at, started_by,
        repository, start_signature, start_seq)
      VALUES (${taskId}, ${input.parent_task_id ?? null}, ${input.name}, ${input.goal}, ${JSON.stringify(input.areas ?? [])},
              ${snapshot?.type ?? "none"}, ${snapshot?.type === "git" ? snapshot.head : null}, ${meta ? JSON.stringify(meta) : null}, ${now},
              ${writer}, ${repository ? JSON.stringify(repository) : null}, ${start ? JSON.stringify(start) : null}, ${startSeq})`;
    // A task just inserted has no entries: its first log of each kind then reads nothing to count them.
    const task: LoggedTask = { id: taskId, status: "in_progress", started_at: now, start_seq: startSeq };
    if (this.logCounts.size + LOG_KINDS.length > LOG_COUNTS_KEPT) this.logCounts.clear();
    for (const table of LOG_KINDS) this.logCounts.set(logKey(table, taskId), { task, logs: 0 });
    if (snapshot?.type !== "git") return 0;
    if (snapshot.dirty.length === 0) return 0;
    let bytes = 0;
    for (const entry of snapshot.dirty) bytes += utf8Length(entry.path) + SNAPSHOT_ENTRY_OVERHEAD;
    // A statement per chunk, not per entry (a statement per entry cost about 0.1 ms each); a path listed twice keeps its last entry.
    const rows = snapshot.dirty.map((e) => [
      e.path,
      e.head?.mode ?? null,
      e.head?.blob ?? null,
      e.worktree?.mode ?? null,
      e.worktree?.blob ?? null,
    ]);
    this.tables.ensure("snapshot_entries");
    for (const chunk of jsonChunks(rows)) {
      this.sql`INSERT INTO snapshot_entries (task_id, path, head_mode, head_blob, worktree_mode, worktree_blob)
        SELECT ${taskId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(${chunk}) WHERE true
        ON CONFLICT (task_id, path) DO UPDATE SET head_mode = excluded.head_mode, head_blob = excluded.head_blob,
          worktree_mode = excluded.worktree_mode, worktree_blob = excluded.worktree_blob`;
    }
    return bytes;
  }

  /** `lastSeq`: the log's last event before the entry's own (whether the entry goes into its task's index: workflow/task-logs). */
  insertDecision(id: string, task: LoggedTask, input: Tools.LogDecisionInput, now: number, lastSeq: number): DecisionView | null {
    const taskId = task.id;
    const [row] = this.sql<DecisionRow>`
      INSERT INTO log_entries (kind, id, task_id, category, question, options, chosen, reasoning, trade_offs, created_at, in_task_index)
      VALUES ('decisions', ${id}, ${taskId}, ${input.category}, ${input.question}, ${JSON.stringify(input.options_considered ?? [])},
              ${input.chosen}, ${input.reasoning}, ${input.trade_offs ?? null}, ${now}, ${inTaskIndex(task, lastSeq) ? 1 : 0})
      RETURNING ${logColumns("decisions")}`;
    this.logged("decisions", taskId);
    return row ? decisionView(row) : null;
  }

  insertIssue(id: string, task: LoggedTask, input: Tools.LogIssueInput, now: number, lastSeq: number): IssueView | null {
    const taskId = task.id;
    const [row] = this.sql<IssueRow>`INSERT INTO log_entries (kind, id, task_id, type, description, resolution, requires_human_review,
        created_at, in_task_index)
      VALUES ('issues', ${id}, ${taskId}, ${input.type}, ${input.description}, ${input.resolution}, ${input.requires_human_review ? 1 : 0}, ${now},
        ${inTaskIndex(task, lastSeq) ? 1 : 0})
      RETURNING ${logColumns("issues")}`;
    this.logged("issues", taskId);
    this.figures.issueLogged(id, input.requires_human_review === true);
    return row ? issueView(row) : null;
  }

  insertMilestone(id: string, task: LoggedTask, input: Tools.LogMilestoneInput, now: number, lastSeq: number): MilestoneView | null {
    const taskId = task.id;
    const [row] = this.sql<MilestoneRow>`INSERT INTO log_entries (kind, id, task_id, message, progress, metadata, created_at, in_task_index)
      VALUES ('milestones', ${id}, ${taskId}, ${input.message}, ${input.progress ?? null}, ${input.metadata ? JSON.stringify(input.metadata) : null}, ${now},
        ${inTaskIndex(task, lastSeq) ? 1 : 0})
      RETURNING ${logColumns("milestones")}`;
    this.logged("milestones", taskId);
    return row ? milestoneView(row) : null;
  }

  /**
   * Completes a task: its outcome, usage and their provenance, the end commit, its files (rows
   * in chunked statements, the rest of files_changed and verification as small JSON), the
   * commands observed (rows), its part in the review counts and the credential that completed it
   * (`writer`). Returns how many paths no earlier task had changed, the bytes the file and command
   * rows take, the task's view as stored and its review facts. The row is written once: its new
   * columns are known before the update, so the view (and the facts read from it) is built from
   * the row as it will be stored and the files and commands as stored, and the facts go into the
   * same update (a second update of the row after reading the view was a row written more).
   */
  completeTask(
    task: TaskRow,
    input: Tools.CompleteTaskInput,
    done: {
      now: number;
      duration: number;
      files: StoredFiles;
      metricsSource: string | null;
      priceTableDate: string | null;
      metricsDevice: DeviceRef | null;
      endCommit: string | null;
      /** The shell commands the helper's hooks observed (null: not observed). */
      commands: ObservedCommands | null;
      /** Earlier tasks' lines its helper found still present or gone (null: none reported). */
      durability: LineDurability[] | null;
    },
    writer: string | null = null,
  ): { newPaths: number; bytes: number; view: TaskView; facts: TaskReviewFacts } {
    const metrics = input.metrics;
    const commands = commandMarks(done.commands);
    this.openIds?.delete(task.id);
    for (const table of LOG_KINDS) this.logCounts.delete(logKey(table, task.id));
    const { newPaths, bytes, written } = this.files.store(task.id, done.files);
    const commandBytes = this.commands.store(task.id, done.commands);
    const completed: TaskRow = {
      ...task,
      status: input.status,
      completed_at: done.now,
      duration_seconds: done.duration,
      outcome: JSON.stringify(input.outcome),
      metadata: input.metadata ? JSON.stringify(input.metadata) : null,
      files_changed: JSON.stringify(done.files.filesJson),
      verification: JSON.stringify(done.files.verificationJson),
      files_count: done.files.rows.length,
      files_listed: done.files.listed,
      files_unlisted_unexpected: done.files.rows.filter((row) => !row.inScope && row.ord >= done.files.listed).length,
      input_tokens: metrics?.input_tokens ?? null,
      output_tokens: metrics?.output_tokens ?? null,
      model: metrics?.model ?? null,
      cost_usd: metrics?.cost_usd ?? null,
      metrics_source: done.metricsSource as TaskRow["metrics_source"],
      price_table_date: done.priceTableDate,
      metrics_device: done.metricsDevice ? JSON.stringify(done.metricsDevice) : null,
      durability: done.durability ? JSON.stringify(done.durability) : null,
      commands_observed: commands.observed,
      commands_omitted: commands.omitted,
      last_edit_at: commands.lastEditAt,
      repository:
        task.repository === null ? null : JSON.stringify({ ...(JSON.parse(task.repository) as object), end_commit: done.endCommit }),
      completed_by: writer,
    };
    // The view as every later read gives it, from the row as it will be stored and the files as stored.
    const view = this.taskView(completed, written);
    const facts = taskReviewFacts(view);
    completed.review_facts = JSON.stringify(facts);
    this.sql`UPDATE tasks SET status = ${completed.status}, completed_at = ${completed.completed_at},
      duration_seconds = ${completed.duration_seconds}, outcome = ${completed.outcome}, metadata = ${completed.metadata},
      files_changed = ${completed.files_changed}, verification = ${completed.verification},
      files_count = ${completed.files_count}, files_listed = ${completed.files_listed},
      files_unlisted_unexpected = ${completed.files_unlisted_unexpected},
      input_tokens = ${completed.input_tokens}, output_tokens = ${completed.output_tokens},
      model = ${completed.model}, cost_usd = ${completed.cost_usd},
      metrics_source = ${completed.metrics_source}, price_table_date = ${completed.price_table_date},
      metrics_device = ${completed.metrics_device}, durability = ${completed.durability},
      commands_observed = ${completed.commands_observed}, commands_omitted = ${completed.commands_omitted},
      last_edit_at = ${completed.last_edit_at}, repository = ${completed.repository},
      review_facts = ${completed.review_facts}, completed_by = ${completed.completed_by}
      WHERE id = ${task.id}`;
    if (writer !== null) this.writers?.add(writer);
    this.planProgress.completed(completed);
    this.figures.completed(completed);
    return { newPaths, bytes: bytes + commandBytes, view, facts };
  }

  startSignature(task: TaskRow): StartSignature | null {
    return parse<StartSignature>(task.start_signature);
  }

  /** A completed task's warnings, as a later write changed them (verification's other fields are rows or unchanged). */
  setWarnings(taskId: string, warnings: readonly string[]): void {
    this.sql`UPDATE tasks SET verification = json_set(verification, '$.warnings', json(${JSON.stringify(warnings)})) WHERE id = ${taskId}`;
  }

  window(task: TaskRow, completedAt: number | null): TaskWindow {
    // A top-level task has no ancestors to look for.
    const ancestors =
      task.parent_id === null
        ? []
        : this.sql<{ id: string }>`
      WITH RECURSIVE up(id, parent_id) AS (
        SELECT id, parent_id FROM tasks WHERE id = ${task.id}
        UNION ALL SELECT t.id, t.parent_id FROM tasks t JOIN up ON t.id = up.parent_id
      ) SELECT id FROM up WHERE id != ${task.id}`.map((r) => r.id);
    return { task_id: task.id, started_at: task.started_at, completed_at: completedAt ?? task.completed_at, ancestors };
  }

  /** Ids of a task's subtasks at any depth. */
  descendants(taskId: string): string[] {
    return this.sql<{ id: string }>`
      WITH RECURSIVE down(id) AS (
        SELECT id FROM tasks WHERE parent_id = ${taskId}
        UNION ALL SELECT t.id FROM tasks t JOIN down ON t.parent_id = down.id
      ) SELECT id FROM down`.map((r) => r.id);
  }

  /**
   * The completed tasks whose window can intersect this one's: those that completed after it
   * started (touching windows are sequential, docs/attribution.md). A workflow run task after
   * task reads nothing here, however many tasks it has.
   */
  completedDuring(task: TaskRow, subtasks: ReadonlySet<string> = new Set()): CompletedTaskChanges[] {
    const tasks = this.sql<TaskRow>`
      SELECT * FROM tasks WHERE id != ${task.id} AND status != 'in_progress' AND completed_at > ${task.started_at} ORDER BY completed_at`;
    // A parent's changes include its subtasks' by design: their stored changes are never compared, so never read.
    return tasks.filter((t) => !subtasks.has(t.id)).map((t) => ({ window: this.window(t, null), changes: this.files.changes(t.id) }));
  }
}
