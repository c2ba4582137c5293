/**
 * @module workflow/reader
 * Paged reads of one workflow: nothing a reader asks for holds the whole workflow in memory.
 * - `head`: the workflow, its running totals, the chain head, the task count (and the
 *   feedback and share link for the owner): one row each, whatever the workflow's size.
 * - `tasks`: the timeline in pages (top-level tasks by start, each followed depth-first by
 *   its subtasks), each entry with its own logs; bounded by count and by bytes.
 * - `rows`: the whole view's arrays (tasks by start, logs by creation) in pages, for the
 *   JSON export, which keeps the whole view's shape.
 * - `files`: one list of one task's record (its added files, renames, line counts, overlaps…)
 *   in pages: a task's view lists only its first files when it changed many (FilesChanged.more).
 * - `deviceSigned`: the device-signed payloads kept whole (./device-signed), in parts, for the
 *   JSON export.
 *
 * Authorization is the whole view's: an account must own the workflow; a share link's reader
 * is let in by the token, re-checked here on every page (a link revoked mid-read stops it).
 */
import { type ReviewCounts, ReviewTally } from "@waymark/protocol/review-counts";
import { accountDigest } from "@waymark/protocol/statement";
import type { Reader, TaskEntry, TaskPage, TaskView, WorkflowHead } from "../domain/view";
import { fail, ok, type Result, WaymarkError } from "../errors";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import { filesCursorAfter, filesPosition, rowsCursorAfter, rowsPosition, timelineCursorAfter, timelinePosition } from "./cursor";
import type { SignedPartsPage } from "./device-signed";
import type { EventLog, EventsPage } from "./event-log";
import type { FeedbackRecords } from "./feedback";
import { notFoundError, noWorkflowOrTask, type Ownership } from "./ownership";
import { iso, type RecordKind, type RecordView, type TaskLogViews, type WorkflowRecords } from "./records";
import type { ShareLinks } from "./share";
import { FILE_CHANGES, type FileList, type FileListItem } from "./task-files";
import type { RunningTotals } from "./totals";

/** A page of one of the whole view's arrays. */
export interface RowsPage {
  rows: RecordView[];
  /** For pages of logs: the name of each task they belong to, by id. */
  task_names?: Record<string, string>;
  next_cursor: string | null;
}

/** A page of one list of a task's record. */
export interface FilesPage {
  items: FileListItem[];
  next_cursor: string | null;
}

/** One level of the depth-first walk: the children of `parent` after `after`, fetched in batches. */
interface Level {
  parent: string | null;
  after: { started_at: number; id: string } | null;
  queue: Sibling[];
  exhausted: boolean;
}

type Sibling = { started_at: number; id: string; subtasks: number };
/** One task's place in the timeline, before its row is read. */
type Slot = { id: string; depth: number; subtasks: number };

/** What a row adds to an entry's JSON besides its text columns (keys, ids, times, quotes). */
const ROW_OVERHEAD = 300;
/** What a listed file adds to an entry besides its path (twice: most files are in two lists), roughly. */
const FILE_ENTRY_OVERHEAD = 20;

export class WorkflowReader {
  constructor(
    private readonly sql: Sql,
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
    private readonly log: EventLog,
    private readonly feedback: FeedbackRecords,
    private readonly shareLinks: ShareLinks,
    private readonly ownership: Ownership,
  ) {}

  /**
   * Null when `reader` may read this workflow, else the failure to answer: NOT_FOUND for an
   * account that does not own it (ids of other accounts reveal nothing) or an unknown token,
   * UNAUTHORIZED for a link that was revoked or has expired (the page says "no longer shared").
   */
  async refusal(reader: Reader): Promise<Result<never> | null> {
    if (typeof reader === "string") return this.ownership.of(reader) ? null : noWorkflowOrTask("workflow_id", "this id").toFailure();
    const status = this.records.workflow() ? await this.shareLinks.check(reader.share_token) : "not_found";
    if (status === "active") return null;
    if (status === "revoked" || status === "expired")
      return fail("UNAUTHORIZED", `share_token: this link ${status === "revoked" ? "was revoked" : "has expired"}`);
    return notFoundError("share_token", "such share link").toFailure();
  }

  /** The owner's read (`asOwner`, an account only) adds the share link's state; feedback goes to the owner and to link readers. */
  async head(reader: Reader, asOwner: boolean): Promise<Result<WorkflowHead>> {
    const refused = await this.refusal(reader);
    if (refused) return refused;
    const owner = asOwner && typeof reader === "string";
    const share = owner ? await this.shareLinks.info() : null;
    // Everything below is read after the last await: one state.
    const totals = this.totals.read();
    const head: WorkflowHead = {
      workflow: this.records.header(),
      totals,
      last_seq: this.log.lastSeq(),
      chain: this.log.chain(),
      task_count: totals.tasks,
      line_totals: this.lineTotals(),
      review_items: this.reviewItems(),
      review: this.reviewCounts(),
    };
    if (owner || typeof reader !== "string") head.feedback = this.feedback.list();
    if (share) head.share = share;
    return ok(head);
  }

  /** A page of events, bounded in bytes too. Null: a reader the Worker already let in by a share link (the whole view's rule). */
  async events(reader: Reader | null, fromSeq: number, limit: number): Promise<Result<EventsPage & { last_seq: number }>> {
    const refused =
      reader === null
        ? this.records.workflow()
          ? null
          : noWorkflowOrTask("workflow_id", "this id").toFailure()
        : await this.refusal(reader);
    if (refused) return refused;
    return ok({ ...this.log.after(fromSeq, limit, LIMITS.READ_PAGE_BYTES), last_seq: this.log.lastSeq() });
  }

  /**
   * Up to `limit` entries of the timeline after `cursor` (null: from the start), at most
   * LIMITS.READ_PAGE_BYTES past the first; `filesPerTask` lists only each task's first files
   * (what a page shows), so one large task neither fills the page nor crosses the RPC whole.
   */
  async tasks(reader: Reader, cursor: string | null, limit: number, filesPerTask?: number): Promise<Result<TaskPage>> {
    const refused = (await this.refusal(reader)) ?? pageLimitProblem(limit) ?? filesLimitProblem(filesPerTask);
    if (refused) return refused;
    try {
      return ok(this.timelinePage(cursor, limit, filesPerTask ?? null));
    } catch (error) {
      if (error instanceof WaymarkError) return error.toFailure();
      throw error;
    }
  }

  /**
   * One task, for a reader of the workflow: its view (its first files when it changed many), or
   * with `fromFile` its files from that one on, LIMITS.FILES_PAGE of them in path order (a page
   * of its files page; `files_changed.more` counts those after).
   */
  async task(reader: Reader, taskId: string, fromFile?: number): Promise<Result<TaskView>> {
    const refused = await this.refusal(reader);
    if (refused) return refused;
    if (fromFile !== undefined && !(Number.isSafeInteger(fromFile) && fromFile >= 0)) {
      return fail("INPUT_VALIDATION_ERROR", "from: must be a whole number from 0");
    }
    const row = this.records.task(taskId);
    if (!row) return noWorkflowOrTask("task_id", taskId).toFailure();
    const view = this.records.taskView(row);
    if (fromFile === undefined || !view.files_changed) return ok(view);
    const window = this.records.files.window(row, fromFile, LIMITS.FILES_PAGE);
    return ok(window ? { ...view, ...window } : view);
  }

  /** One of the whole view's arrays, a page at a time, in the whole view's order. */
  async rows(reader: Reader, kind: RecordKind, cursor: string | null, limit: number): Promise<Result<RowsPage>> {
    const refused = (await this.refusal(reader)) ?? pageLimitProblem(limit);
    if (refused) return refused;
    let after = null;
    try {
      after = cursor === null ? null : rowsPosition(kind, cursor);
    } catch (error) {
      if (error instanceof WaymarkError) return error.toFailure();
      throw error;
    }
    const found = this.records.rowsAfter(kind, after, limit + 1);
    const rows: RecordView[] = [];
    let bytes = 0;
    let last: { at: number; id: string } | null = null;
    for (const row of found.slice(0, limit)) {
      bytes += JSON.stringify(row.view).length;
      if (rows.length > 0 && bytes > LIMITS.READ_PAGE_BYTES) break;
      rows.push(row.view);
      last = row;
    }
    const more = rows.length < found.length;
    const page: RowsPage = { rows, next_cursor: more && last ? rowsCursorAfter(kind, last) : null };
    if (kind !== "tasks") page.task_names = this.taskNames(rows.map((row) => (row as { task_id: string }).task_id));
    return ok(page);
  }

  /** One list of a completed task's record after `cursor`, a page at a time (at most `limit` items, LIMITS.READ_PAGE_BYTES). */
  async files(reader: Reader, taskId: string, list: FileList, cursor: string | null, limit: number): Promise<Result<FilesPage>> {
    const refused = (await this.refusal(reader)) ?? pageLimitProblem(limit, LIMITS.FILE_PAGE_ITEMS);
    if (refused) return refused;
    try {
      const after = cursor === null ? null : filesPosition(taskId, list, cursor);
      const task = this.records.task(taskId);
      if (!task) return noWorkflowOrTask("task_id", taskId).toFailure();
      const page = this.records.files.listPage(task, list, after, limit);
      return ok({ items: page.items, next_cursor: page.after === null ? null : filesCursorAfter(taskId, list, page.after) });
    } catch (error) {
      if (error instanceof WaymarkError) return error.toFailure();
      throw error;
    }
  }

  /**
   * The device-signed payloads kept by events up to `throughSeq`, in parts after `after` (0: from
   * the first), with whose record they are (the account, as the export's statement names it).
   */
  async deviceSigned(reader: Reader, after: number, throughSeq: number): Promise<Result<SignedPartsPage & { account: string }>> {
    const refused = await this.refusal(reader);
    if (refused) return refused;
    if (!Number.isSafeInteger(after) || after < 0 || !Number.isSafeInteger(throughSeq)) {
      return fail("INPUT_VALIDATION_ERROR", "after: must be a whole number from 0 (pass next back unchanged)");
    }
    const page = this.records.deviceSigned.page(after, throughSeq);
    return ok({ ...page, account: accountDigest(this.records.identity()?.account ?? "") });
  }

  /** Names of the tasks a page of logs belongs to (a log's reader shows them without reading the tasks). */
  private taskNames(ids: string[]): Record<string, string> {
    const rows = this.sql<{ id: string; name: string }>`
      SELECT id, name FROM tasks WHERE id IN (SELECT value FROM json_each(${JSON.stringify([...new Set(ids)])}))`;
    return Object.fromEntries(rows.map((row) => [row.id, row.name]));
  }

  /**
   * Walks the timeline for the page's ids first (ids and subtask counts only), sizes their
   * entries in SQLite, and reads the rows and logs of those that fit in a few batched queries.
   */
  private timelinePage(cursor: string | null, limit: number, filesPerTask: number | null): TaskPage {
    const slots = this.walk(cursor, limit + 1);
    const candidates = slots.slice(0, limit);
    const { sizes, logs } = this.entrySizes(
      candidates.map((slot) => slot.id),
      filesPerTask === null ? null : filesPerTask * FILE_OVERHEAD,
    );
    const chosen: Slot[] = [];
    let bytes = 0;
    for (const slot of candidates) {
      bytes += sizes.get(slot.id) ?? 0;
      // The first entry always fits, so a page is at most one entry over the budget.
      if (chosen.length > 0 && bytes > LIMITS.READ_PAGE_BYTES) break;
      chosen.push(slot);
    }
    const last = chosen.at(-1);
    return {
      entries: this.entries(chosen, logs, filesPerTask),
      next_cursor: chosen.length < slots.length && last ? timelineCursorAfter(last.id) : null,
    };
  }

  /** Up to `count` tasks of the timeline after `cursor`: depth-first, each level's siblings fetched in batches. */
  private walk(cursor: string | null, count: number): Slot[] {
    const levels = cursor === null ? [newLevel(null, null)] : this.resume(timelinePosition(cursor));
    const slots: Slot[] = [];
    while (levels.length > 0 && slots.length < count) {
      const level = levels[levels.length - 1] as Level;
      if (level.queue.length === 0 && !level.exhausted) this.fill(level, count - slots.length);
      const next = level.queue.shift();
      if (!next) {
        levels.pop();
        continue;
      }
      slots.push({ id: next.id, depth: levels.length - 1, subtasks: next.subtasks });
      if (next.subtasks > 0) levels.push(newLevel(next.id, null));
    }
    return slots;
  }

  /**
   * What each entry will weigh: its text columns and its logs', plus a constant per row for the
   * JSON around them; a task's files and verification count at most `filesBytes` each when the
   * read lists only its first files. The logs are read here, once, for the entries that fit.
   */
  private entrySizes(ids: string[], filesBytes: number | null): { sizes: Map<string, number>; logs: Map<string, TaskLogViews> } {
    const cap = filesBytes ?? Number.MAX_SAFE_INTEGER;
    const rows = this.sql<{ id: string; size: number; started_at: number; start_seq: number | null }>`
      SELECT t.id, t.started_at, t.start_seq, ${ROW_OVERHEAD} + length(t.name) + length(t.goal) + length(t.areas) + coalesce(length(t.outcome), 0)
        + coalesce(length(t.metadata), 0) + min(coalesce(length(t.files_changed), 0), ${cap})
        + min(coalesce(length(t.verification), 0), ${cap})
        + coalesce(length(t.repository), 0)
        + min(coalesce((SELECT sum(${FILE_ENTRY_OVERHEAD} + length(path)) * 2 FROM ${FILE_CHANGES} file_changes WHERE task_id = t.id AND page_first < t.files_listed AND ord < t.files_listed), 0), ${cap})
        AS size
      FROM tasks t WHERE t.id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
    // A task's entries through workflow/task-logs (its index entries and its log window), not a query per task.
    const logs = this.records.logsOf(rows);
    const sizes = new Map(
      rows.map((row) => {
        const own = logs.get(row.id);
        const entries = own ? own.decisions.length + own.issues.length + own.milestones.length : 0;
        return [row.id, row.size + entries * ROW_OVERHEAD + (own?.chars ?? 0)];
      }),
    );
    return { sizes, logs };
  }

  private entries(slots: Slot[], logs: Map<string, TaskLogViews>, filesPerTask: number | null): TaskEntry[] {
    const ids = slots.map((slot) => slot.id);
    const found = this.records.tasksById(ids);
    const rows = new Map(found.map((row) => [row.id, row]));
    const views = new Map(this.records.taskViews(found).map((view) => [view.id, view]));
    return slots.map((slot) => {
      const row = rows.get(slot.id);
      const task = views.get(slot.id);
      if (!row || !task) throw new WaymarkError("INTERNAL", `task ${slot.id} vanished during a read`);
      const own = logs.get(slot.id);
      const entry: TaskEntry = {
        task,
        depth: slot.depth,
        decisions: own?.decisions ?? [],
        issues: own?.issues ?? [],
        milestones: own?.milestones ?? [],
        subtasks: slot.subtasks,
        paths_in_subtasks: slot.subtasks > 0 && task.files_changed ? this.records.files.pathsInSubtasks(row) : [],
      };
      return filesPerTask === null ? entry : listFirstFiles(entry, filesPerTask);
    });
  }

  /** The walk's levels just after `taskId` was read: its ancestors' positions, then its own subtasks to come. */
  private resume(taskId: string): Level[] {
    const chain = this.sql<Sibling & { parent_id: string | null; depth: number }>`
      WITH RECURSIVE up(id, parent_id, started_at, depth) AS (
        SELECT id, parent_id, started_at, 0 FROM tasks WHERE id = ${taskId}
        UNION ALL SELECT t.id, t.parent_id, t.started_at, up.depth + 1 FROM tasks t JOIN up ON t.id = up.parent_id
      ) SELECT id, parent_id, started_at, depth FROM up ORDER BY depth DESC`;
    if (chain.length === 0)
      throw new WaymarkError(
        "INPUT_VALIDATION_ERROR",
        "cursor: names no task of this workflow (pass next_cursor unchanged, or null for the first page)",
      );
    const levels = chain.map((task) => newLevel(task.parent_id, { started_at: task.started_at, id: task.id }));
    levels.push(newLevel(taskId, null));
    return levels;
  }

  /** The next siblings of a level: ids and how many subtasks each has (a task's row is read with its page). */
  private fill(level: Level, count: number): void {
    const after = level.after ?? { started_at: -1, id: "" };
    const rows = this.sql<Sibling>`
      SELECT started_at, id, (SELECT count(*) FROM tasks c WHERE c.parent_id = t.id) AS subtasks FROM tasks t
      WHERE parent_id IS ${level.parent} AND (started_at, id) > (${after.started_at}, ${after.id})
      ORDER BY started_at, id LIMIT ${count}`;
    level.queue.push(...rows);
    level.exhausted = rows.length < count;
    if (rows.length > 0) level.after = rows[rows.length - 1] ?? null;
  }

  /** The tasks and issues flagged for a person's review: kept by the object once read (workflow/head-figures). */
  private reviewItems(): WorkflowHead["review_items"] {
    return { tasks: this.records.figures.askedTasks(), issues: this.records.figures.flaggedIssues().length };
  }

  /**
   * What needs a reviewer over the whole workflow (@waymark/protocol/review-counts): each task's
   * kept facts (a few hundred bytes each, never its record) and the issues that ask for review,
   * both kept by the object once read (workflow/head-figures), against the feedback (at most
   * FEEDBACK_PER_WORKFLOW). Counted once per event: only a write (feedback included) changes it.
   */
  private readonly reviewCounts = this.perEvent((): ReviewCounts => {
    const tally = new ReviewTally();
    for (const row of this.records.figures.tasks())
      tally.addTask(
        { id: row.id, status: row.status, completed_at: row.completed_at === null ? null : iso(row.completed_at) },
        this.records.reviewFacts(row),
      );
    for (const id of this.records.figures.flaggedIssues()) tally.addIssue({ id, requires_human_review: true });
    return tally.counts(this.feedback.list());
  });

  /**
   * The whole view's header figure: lines summed over the top-level tasks that measured them. Summing
   * reads every top-level task's files JSON (megabytes for a wide workflow), and every page read starts
   * with the head: summed once per object instance, each completion adding its own (workflow/head-figures).
   */
  private lineTotals(): WorkflowHead["line_totals"] {
    return this.records.figures.lineTotals();
  }

  /** A figure of the whole workflow computed once per event: only a write (which logs one) changes it; kept with the event it was computed at. */
  private perEvent<T>(compute: () => T): () => T {
    let kept: { seq: number; value: T } | null = null;
    return () => {
      const seq = this.log.lastSeq();
      if (kept?.seq !== seq) kept = { seq, value: compute() };
      return kept.value;
    };
  }
}

const newLevel = (parent: string | null, after: Level["after"]): Level => ({ parent, after, queue: [], exhausted: false });

/** What one listed file adds to an entry when a read lists only the first files (path, line counts, JSON). */
const FILE_OVERHEAD = 300;

function filesLimitProblem(filesPerTask: number | undefined): Result<never> | null {
  if (filesPerTask === undefined || (Number.isInteger(filesPerTask) && filesPerTask >= 1 && filesPerTask <= LIMITS.CHANGE_ENTRIES))
    return null;
  return fail("INPUT_VALIDATION_ERROR", `files_per_task: must be a whole number from 1 to ${LIMITS.CHANGE_ENTRIES}`);
}

/**
 * The entry with only its task's first `count` changed files listed (added, modified, deleted,
 * then renamed: the files table's order), and the lists that name files (line counts,
 * uncommitted, out of scope, in subtasks) kept to those; `files_unlisted` counts the rest.
 */
function listFirstFiles(entry: TaskEntry, count: number): TaskEntry {
  const f = entry.task.files_changed;
  if (!f) return entry;
  const total = f.added.length + f.modified.length + f.deleted.length + f.renamed.length;
  if (total <= count) return entry;
  let left = count;
  const take = <T>(list: T[]): T[] => {
    const kept = list.slice(0, left);
    left -= kept.length;
    return kept;
  };
  const listed = { added: take(f.added), modified: take(f.modified), deleted: take(f.deleted), renamed: take(f.renamed) };
  const names = new Set([...listed.added, ...listed.modified, ...listed.deleted, ...listed.renamed.flatMap((r) => [r.from, r.to])]);
  const files = {
    ...f,
    ...listed,
    uncommitted: f.uncommitted.filter((p) => names.has(p)),
    ...(f.lines ? { lines: f.lines.filter((line) => names.has(line.path)) } : {}),
  };
  const v = entry.task.verification;
  // Out-of-scope files among those listed; one unlisted keeps the task marked when none is.
  const outside = v?.unexpected_files.filter((p) => names.has(p)) ?? [];
  const verification = v ? { ...v, unexpected_files: outside.length > 0 ? outside : v.unexpected_files.slice(0, 1) } : null;
  return {
    ...entry,
    task: { ...entry.task, files_changed: files, verification },
    paths_in_subtasks: entry.paths_in_subtasks.filter((p) => names.has(p)),
    files_unlisted: total - count,
  };
}

function pageLimitProblem(limit: number, most: number = LIMITS.READ_PAGE_ITEMS): Result<never> | null {
  if (Number.isInteger(limit) && limit >= 1 && limit <= most) return null;
  return fail("INPUT_VALIDATION_ERROR", `limit: must be a whole number from 1 to ${most}`);
}
