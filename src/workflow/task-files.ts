/**
 * @module workflow/task-files
 * A task's changed files in this workflow's SQLite: `file_pages` rows of many files each (read as
 * one row per file through the view `file_changes`, workflow-schema) and one `task_overlaps` row
 * per overlap with a concurrent task, written in bounded statements, read
 * back as the bounded view a single value carries (domain/stored-files) or a page of one list at
 * a time (the JSON export, the task's file pages). Nothing here stores or binds a value that
 * grows with the task: see LIMITS.STORED_VALUE_BYTES.
 *
 * Tasks completed before files were kept this way (`files_count` NULL) hold their whole lists as
 * JSON in the task row: their views and pages are read from it.
 */
import type { FileLineRanges, LineAuthor, LineCount } from "@waymark/protocol/wire";
import type { FilesChanged, PathChange } from "../domain/changes";
import type { Overlap } from "../domain/overlap";
import { jsonBytes, type ListedFile, type StoredFiles, type Unlisted, viewOfStoredFiles } from "../domain/stored-files";
import type { Verification } from "../domain/view";
import { LIMITS } from "../limits";
import { jsonChunkItems, jsonChunks } from "../storage/chunks";
import { type Sql, SqlText } from "../storage/sql";
import { ChangedPaths } from "./changed-paths";
import type { WorkflowTables } from "./workflow-tables";

/**
 * A file's values in a `file_pages` row, in this order (written by TaskFiles.store; FILE_CHANGES
 * names them). Migration 24 of workflow-schema pages the files in this order: a change here is a
 * new migration rewriting the pages.
 */
export const FILE_PAGE_COLUMNS = [
  "ord",
  "path",
  "status",
  "before_mode",
  "before_blob",
  "after_mode",
  "after_blob",
  "committed",
  "in_scope",
  "renamed_to",
  "lines_added",
  "lines_removed",
  "lines_binary",
  "agent_edit",
  "lines_agent",
  "lines_others",
  "lines_not_observed",
  "line_ranges",
] as const;

/**
 * The files of completed tasks one row each, with the columns the table `file_changes` had before
 * v24, plus `page_first`/`page_last` so a read names the pages it needs: a select over `file_pages`
 * (`json_each`). From v24 to v28 the view `file_changes` was this select; since v29 every read
 * names it in its FROM instead (FILE_CHANGES), as SQLite reads a view, and a new workflow's schema
 * has no view (two rows of sqlite_schema fewer).
 */
export const FILE_CHANGES_SELECT = `SELECT p.task_id, ${FILE_PAGE_COLUMNS.map((column, n) => `f.value ->> ${n} AS ${column}`).join(", ")},
  p.first_ord AS page_first, p.last_ord AS page_last
  FROM file_pages p, json_each(p.files) f`;
/** FILE_CHANGES_SELECT as a subquery a statement reads from: `FROM ${FILE_CHANGES} file_changes`. */
export const FILE_CHANGES = new SqlText(`(${FILE_CHANGES_SELECT})`);

/** The lists of a task's record, each read in pages in its own order. */
export const FILE_LISTS = [
  "added",
  "modified",
  "deleted",
  "renamed",
  "uncommitted",
  "lines",
  "not_by_agent_tools",
  "unexpected_files",
  "overlapping",
  "line_ranges",
] as const;
export type FileList = (typeof FILE_LISTS)[number];
/** One range of a file's end content and who last wrote its lines (the stored tuple, named as Agent Trace names them). */
export interface RangeItem {
  start_line: number;
  end_line: number;
  author: LineAuthor;
  content_hash: string;
}
/** `line_ranges`: a file's added lines as ranges of its end content (no view carries them; the Agent Trace export reads them). */
export interface FileRangesItem {
  path: string;
  ranges: RangeItem[];
  /** More ranges than the helper sent (the file's counts stay exact). */
  omitted?: true;
  /** Why some of its lines were not observed. */
  reason?: string;
}
export type FileListItem = string | { from: string; to: string } | LineCount | Overlap | FileRangesItem;

function rangesItem(path: string, stored: string): FileRangesItem {
  const { ranges, ...rest } = JSON.parse(stored) as Omit<FileLineRanges, "path">;
  return {
    path,
    ranges: ranges.map(([start_line, end_line, author, content_hash]) => ({ start_line, end_line, author, content_hash })),
    ...rest,
  };
}

/** A task's files as the current write stored them (TaskFiles.store): what its view lists, and how many overlaps it added. */
export interface WrittenFiles {
  taskId: string;
  listed: readonly ListedFile[];
  overlaps: number;
}

/** What a task row holds about its files (the columns of workflow/records' TaskRow this module reads). */
export interface TaskFilesColumns {
  id: string;
  files_changed: string | null;
  verification: string | null;
  files_count: number | null;
  files_listed: number | null;
  /** Of the files past the listed ones, how many are outside the task's areas (NULL or absent: count them). */
  files_unlisted_unexpected?: number | null;
}

type FileRowSql = {
  task_id: string;
  ord: number;
  path: string;
  status: string;
  committed: number;
  in_scope: number;
  renamed_to: string | null;
  lines_added: number | null;
  lines_removed: number | null;
  lines_binary: number | null;
  agent_edit: number | null;
  lines_agent: number | null;
  lines_others: number | null;
  lines_not_observed: number | null;
};
type OverlapSql = {
  task_id: string;
  ord: number;
  path: string;
  other_task_id: string;
  same_change: number;
  other_workflow_id: string | null;
};
type ChangeSql = {
  path: string;
  status: string;
  before_mode: string | null;
  before_blob: string | null;
  after_mode: string | null;
  after_blob: string | null;
  committed: number;
};

/** A page of one list: its items, and the position to read the next page from (null: the list is done). */
export interface FileListPage {
  items: FileListItem[];
  after: number | null;
}

/** Overlaps read for one view before its byte bound cuts them (each is at least ~60 bytes). */
const VIEW_OVERLAP_ROWS = Math.ceil(LIMITS.VIEW_OVERLAP_BYTES / 60) + 1;
/** What a stored row costs against the workflow's byte quota besides its paths: modes, blobs, marks, keys. */
const FILE_ROW_OVERHEAD = 140;

const state = (mode: string | null, blob: string | null) => (mode !== null && blob !== null ? { mode, blob } : null);
const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

function linesOf(
  row: Pick<FileRowSql, "path" | "lines_added" | "lines_removed" | "lines_binary" | "lines_agent" | "lines_others" | "lines_not_observed">,
): LineCount | null {
  if (row.lines_binary === null) return null;
  if (row.lines_binary === 1) return { path: row.path, binary: true };
  const count: LineCount = { path: row.path, added: row.lines_added ?? 0, removed: row.lines_removed ?? 0 };
  // Who wrote the added lines, when the helper attributed them (all three stored together).
  if (row.lines_agent !== null)
    Object.assign(count, { agent: row.lines_agent, others: row.lines_others ?? 0, not_observed: row.lines_not_observed ?? 0 });
  return count;
}

function listedFile(row: FileRowSql): ListedFile {
  return {
    path: row.path,
    status: row.status as ListedFile["status"],
    committed: row.committed === 1,
    renamedTo: row.renamed_to,
    lines: linesOf(row),
    inScope: row.in_scope === 1,
    byAgent: row.agent_edit === null ? null : row.agent_edit === 1,
  };
}

/** Each column's place in a file's values (FILE_PAGE_COLUMNS). */
const PLACES = Object.fromEntries(FILE_PAGE_COLUMNS.map((column, n) => [column, n])) as Record<(typeof FILE_PAGE_COLUMNS)[number], number>;
const at = (column: (typeof FILE_PAGE_COLUMNS)[number]) => PLACES[column];
const STATUS = at("status");
const COMMITTED = at("committed");
const IN_SCOPE = at("in_scope");
const RENAMED_TO = at("renamed_to");
const LINES_BINARY = at("lines_binary");
const AGENT_EDIT = at("agent_edit");
const LINE_RANGES = at("line_ranges");
const ORD = at("ord");

/**
 * One file of a `file_pages` row (an array of FILE_PAGE_COLUMNS in order) as the view file_changes
 * reads it (a missing value is NULL). Each column by its place, written out: it runs for every
 * file a completion lists.
 */
function fileRowOf(taskId: string, tuple: readonly unknown[]): FileRowSql & { line_ranges: string | null } {
  const value = <T>(column: (typeof FILE_PAGE_COLUMNS)[number]) => (tuple[at(column)] ?? null) as T;
  return {
    ord: value("ord"),
    path: value("path"),
    status: value("status"),
    committed: value("committed"),
    in_scope: value("in_scope"),
    renamed_to: value("renamed_to"),
    lines_added: value("lines_added"),
    lines_removed: value("lines_removed"),
    lines_binary: value("lines_binary"),
    agent_edit: value("agent_edit"),
    lines_agent: value("lines_agent"),
    lines_others: value("lines_others"),
    lines_not_observed: value("lines_not_observed"),
    line_ranges: value("line_ranges"),
    task_id: taskId,
  };
}

/** Whether a file (its values, FILE_PAGE_COLUMNS) is in one of the lists of a task's record (overlapping excepted: those are rows of their own). */
function inList(file: readonly unknown[], list: FileList): boolean {
  const value = (n: number) => file[n] ?? null;
  switch (list) {
    case "added":
      return value(STATUS) === "A";
    case "modified":
      return value(STATUS) === "M";
    case "deleted":
      return value(STATUS) === "D";
    case "renamed":
      return value(RENAMED_TO) !== null;
    case "uncommitted":
      return value(COMMITTED) === 0;
    case "lines":
      return value(LINES_BINARY) !== null;
    case "not_by_agent_tools":
      return value(AGENT_EDIT) === 0;
    case "line_ranges":
      return value(LINE_RANGES) !== null;
    default:
      return value(IN_SCOPE) === 0;
  }
}

function overlapOf(row: OverlapSql): Overlap {
  const overlap: Overlap = { path: row.path, task_id: row.other_task_id, same_change: row.same_change === 1 };
  if (row.other_workflow_id !== null) overlap.workflow_id = row.other_workflow_id;
  return overlap;
}

/** The first overlaps that fit LIMITS.VIEW_OVERLAP_BYTES (the first always does). */
function fittingOverlaps(overlaps: readonly Overlap[]): Overlap[] {
  const kept: Overlap[] = [];
  let bytes = 0;
  for (const overlap of overlaps) {
    bytes += jsonBytes(overlap) + 1;
    if (kept.length > 0 && bytes > LIMITS.VIEW_OVERLAP_BYTES) break;
    kept.push(overlap);
  }
  return kept;
}

/**
 * How much of the pages' JSON a TaskFiles keeps parsed: every page of a task of 20,000 files with
 * 200-byte paths (about 7 MiB), so walking each of its lists in turn (the JSON export) parses each
 * page once; in memory about twice that.
 */
const PAGES_KEPT_CHARS = 8 * 1024 * 1024;

export class TaskFiles {
  private readonly pages = new Map<string, { files: readonly unknown[][]; chars: number }>();
  private pagesChars = 0;

  private readonly changedPaths: ChangedPaths;

  constructor(
    private readonly sql: Sql,
    private readonly tables: WorkflowTables,
  ) {
    this.changedPaths = new ChangedPaths(sql, tables);
  }

  /** Rows of `task_overlaps`, or none while no task has recorded an overlap (the table is created by the first). */
  private overlapRows<T>(query: () => T[]): T[] {
    return this.tables.has("task_overlaps") ? query() : [];
  }

  /**
   * Stores a completed task's files and overlaps in chunked statements. Returns how many paths no
   * earlier task had changed (the distinct-files total), the bytes stored (the byte quota), and the
   * files its view lists as a read of the rows just written gives them (`listed`, through the same
   * tuples and listedFile): the write's own view then reads no file back (views' `written`).
   */
  store(taskId: string, stored: StoredFiles): { newPaths: number; bytes: number; written: WrittenFiles } {
    let bytes = 0;
    const rows = stored.rows.map((row): unknown[] => {
      const { change, lines } = row;
      const text = lines && !("binary" in lines) && lines.agent !== undefined ? lines : null;
      bytes += FILE_ROW_OVERHEAD + row.viewBytes + (row.ranges === null ? 0 : jsonBytes(row.ranges));
      // The order of FILE_PAGE_COLUMNS (workflow-schema): the view file_changes reads them by position.
      return [
        row.ord,
        change.path,
        change.status,
        change.before?.mode ?? null,
        change.before?.blob ?? null,
        change.after?.mode ?? null,
        change.after?.blob ?? null,
        change.committed ? 1 : 0,
        row.inScope ? 1 : 0,
        row.renamedTo,
        lines && !("binary" in lines) ? lines.added : null,
        lines && !("binary" in lines) ? lines.removed : null,
        lines === null ? null : "binary" in lines ? 1 : 0,
        row.byAgent === null ? null : row.byAgent ? 1 : 0,
        text?.agent ?? null,
        text?.others ?? null,
        text?.not_observed ?? null,
        row.ranges === null ? null : JSON.stringify(row.ranges),
      ];
    });
    // One row written per page of files (a chunk, under the value limit), not one per file; rows
    // are in `ord` order, so a page's bounds are its first and last file's (SQL need not parse the page for them).
    for (const chunk of jsonChunkItems(rows)) {
      this.sql`INSERT INTO file_pages (task_id, first_ord, last_ord, files)
        VALUES (${taskId}, ${chunk.first[ORD] as number}, ${chunk.last[ORD] as number}, ${chunk.json})`;
    }
    const newPaths = this.changedPaths.add(stored.rows.map((row) => row.change.path));
    const overlaps = this.addOverlaps(taskId, stored.overlaps);
    bytes += overlaps.bytes;
    const listed = rows.filter((tuple) => (tuple[ORD] as number) < stored.listed).map((tuple) => listedFile(fileRowOf(taskId, tuple)));
    return { newPaths, bytes, written: { taskId, listed, overlaps: overlaps.added } };
  }

  /** Appends overlaps to a task's (a later task reported them); one already recorded is kept as it is. Returns how many were new and their bytes. */
  addOverlaps(taskId: string, overlaps: readonly Overlap[]): { added: number; bytes: number } {
    if (overlaps.length === 0) return { added: 0, bytes: 0 };
    this.tables.ensure("task_overlaps");
    let next = (this.sql<{ n: number | null }>`SELECT max(ord) AS n FROM task_overlaps WHERE task_id = ${taskId}`[0]?.n ?? -1) + 1;
    let bytes = 0;
    const rows = overlaps.map((o) => {
      bytes += FILE_ROW_OVERHEAD + jsonBytes(o);
      return [next++, o.path, o.task_id, o.same_change ? 1 : 0, o.workflow_id ?? null];
    });
    let added = 0;
    for (const chunk of jsonChunks(rows)) {
      added += this.sql`INSERT INTO task_overlaps (task_id, ord, path, other_task_id, same_change, other_workflow_id)
        SELECT ${taskId}, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(${chunk}) WHERE true
        ON CONFLICT (task_id, path, other_task_id) DO NOTHING RETURNING ord`.length;
    }
    return { added, bytes: added === 0 ? 0 : bytes };
  }

  /** The net changes a task was credited with, in path order (what a later concurrent task is compared with). */
  changes(taskId: string): PathChange[] {
    return this.sql<ChangeSql>`
      SELECT path, status, before_mode, before_blob, after_mode, after_blob, committed FROM ${FILE_CHANGES} file_changes WHERE task_id = ${taskId}
      ORDER BY path`.map((r) => ({
      path: r.path,
      status: r.status as PathChange["status"],
      before: state(r.before_mode, r.before_blob),
      after: state(r.after_mode, r.after_blob),
      committed: r.committed === 1,
    }));
  }

  /** A task's overlaps with tasks of other workflows (at most those the helper named: WIRE_LIMITS.CONCURRENT_TASKS × SHARED_PATHS). */
  overlapsElsewhere(taskId: string): Overlap[] {
    return this.overlapRows(
      () => this.sql<OverlapSql>`
      SELECT * FROM task_overlaps WHERE task_id = ${taskId} AND other_workflow_id IS NOT NULL ORDER BY ord`,
    ).map(overlapOf);
  }

  /**
   * Which completed task a pull-request review comment on `path` (at `line`) is about: of the tasks
   * that changed the file, newest first, the one whose recorded line ranges hold the line, else
   * one of `made` (the tasks that made the comment's commits), else the newest. Null when no task
   * changed the file. Ranges are lines of each task's end content, the comment's line one of the
   * pull request's head: they agree until a later change moves the lines.
   */
  taskForLine(path: string, line: number | null, made: ReadonlySet<string>): string | null {
    const rows = this.sql<{ task_id: string; line_ranges: string | null }>`
      SELECT f.task_id, f.line_ranges FROM ${FILE_CHANGES} f JOIN tasks t ON t.id = f.task_id
      WHERE f.path = ${path} AND t.completed_at IS NOT NULL ORDER BY t.completed_at DESC, t.started_at DESC, t.id DESC LIMIT 100`;
    if (line !== null) {
      for (const row of rows) {
        if (row.line_ranges === null) continue;
        const { ranges } = JSON.parse(row.line_ranges) as Omit<FileLineRanges, "path">;
        if (ranges.some(([start, end]) => start <= line && line <= end)) return row.task_id;
      }
    }
    return (rows.find((row) => made.has(row.task_id)) ?? rows[0])?.task_id ?? null;
  }

  /** Of `paths`, the task's changes to them (another workflow asking which of its overlaps were the same change). */
  changesTo(taskId: string, paths: readonly string[]): PathChange[] {
    const wanted = new Set(paths);
    return this.changes(taskId).filter((change) => wanted.has(change.path));
  }

  /**
   * files_changed and verification of completed tasks, as one value shows them, by task id.
   * `written`: a task the current write stored (store's answer): its listed files are not read back.
   */
  views(
    tasks: readonly TaskFilesColumns[],
    written?: WrittenFiles,
  ): Map<string, { files_changed: FilesChanged; verification: Verification | null }> {
    const views = new Map<string, { files_changed: FilesChanged; verification: Verification | null }>();
    const completed = tasks.filter((t) => t.files_changed !== null);
    if (completed.length === 0) return views;
    const files = new Map<string, ListedFile[]>();
    const current = completed.filter((t) => t.files_count !== null && t.id !== written?.taskId);
    const ids = JSON.stringify(completed.map((t) => t.id));
    if (current.length > 0) {
      const currentIds = JSON.stringify(current.map((t) => t.id));
      for (const row of this.sql<FileRowSql>`
        SELECT f.task_id, f.ord, f.path, f.status, f.committed, f.in_scope, f.renamed_to, f.lines_added, f.lines_removed,
          f.lines_binary, f.agent_edit, f.lines_agent, f.lines_others, f.lines_not_observed
        FROM tasks t JOIN ${FILE_CHANGES} f ON f.task_id = t.id
        WHERE t.id IN (SELECT value FROM json_each(${currentIds})) AND t.files_count IS NOT NULL AND f.page_first < t.files_listed
          AND f.ord < t.files_listed
        ORDER BY f.task_id, f.ord`) {
        const list = files.get(row.task_id) ?? [];
        list.push(listedFile(row));
        files.set(row.task_id, list);
      }
    }
    const overlaps = new Map<string, { rows: Overlap[]; total: number }>();
    // A task has overlap rows only from its completion on: one that just stored none has none to read.
    const noOverlaps = written !== undefined && completed.length === 1 && written.taskId === completed[0]?.id && written.overlaps === 0;
    if (!noOverlaps) {
      for (const row of this.overlapRows(
        () => this.sql<OverlapSql & { total: number }>`
        SELECT task_id, ord, path, other_task_id, same_change, other_workflow_id, total FROM (
          SELECT *, count(*) OVER (PARTITION BY task_id) AS total, row_number() OVER (PARTITION BY task_id ORDER BY ord) AS n
          FROM task_overlaps WHERE task_id IN (SELECT value FROM json_each(${ids}))
        ) WHERE n <= ${VIEW_OVERLAP_ROWS} ORDER BY task_id, ord`,
      )) {
        const entry = overlaps.get(row.task_id) ?? { rows: [], total: row.total };
        entry.rows.push(overlapOf(row));
        overlaps.set(row.task_id, entry);
      }
    }
    for (const task of completed) {
      const recorded = overlaps.get(task.id) ?? { rows: [], total: 0 };
      if (task.files_count === null) {
        views.set(task.id, this.legacyView(task, recorded));
        continue;
      }
      const listed = task.files_listed ?? 0;
      const shown = fittingOverlaps(recorded.rows);
      const unlisted: Unlisted = {
        files: task.files_count - listed,
        unexpectedFiles: task.files_count > listed ? (task.files_unlisted_unexpected ?? this.unexpectedAfter(task.id, listed)) : 0,
        overlapping: recorded.total - shown.length,
      };
      const filesJson = JSON.parse(task.files_changed as string) as FilesChanged;
      const verificationJson = JSON.parse(task.verification ?? '{"scope_match":true,"unexpected_files":[],"warnings":[]}') as Verification;
      const listedFiles = task.id === written?.taskId ? written.listed : (files.get(task.id) ?? []);
      views.set(task.id, viewOfStoredFiles(filesJson, verificationJson, listedFiles, shown, unlisted));
    }
    return views;
  }

  /**
   * One completed task's files_changed and verification listing only its files `from` to
   * `from + count - 1` in path order (a page of the task's files page); `more` counts the files
   * after them. Overlaps and the unexpected-file count are those of the task's view.
   */
  window(task: TaskFilesColumns, from: number, count: number): { files_changed: FilesChanged; verification: Verification | null } | null {
    const view = this.views([task]).get(task.id);
    if (!view) return null;
    if (task.files_count === null) return windowOfWholeLists(view, from, count);
    const rows = this.sql<FileRowSql>`
      SELECT task_id, ord, path, status, committed, in_scope, renamed_to, lines_added, lines_removed, lines_binary, agent_edit,
        lines_agent, lines_others, lines_not_observed
      FROM ${FILE_CHANGES} file_changes WHERE task_id = ${task.id} AND page_last >= ${from} AND page_first < ${from + count}
        AND ord >= ${from} AND ord < ${from + count} ORDER BY ord`.map(listedFile);
    const filesJson = JSON.parse(task.files_changed as string) as FilesChanged;
    const verificationJson = JSON.parse(task.verification ?? '{"scope_match":true,"unexpected_files":[],"warnings":[]}') as Verification;
    const overlaps = view.verification?.overlapping ?? [];
    const unlisted: Unlisted = {
      files: Math.max(0, task.files_count - from - rows.length),
      unexpectedFiles: 0,
      overlapping: view.verification?.more?.overlapping ?? 0,
    };
    return viewOfStoredFiles(filesJson, verificationJson, rows, overlaps, unlisted);
  }

  /** A task completed before files were rows: its whole lists as stored, with overlaps later tasks added as rows. */
  private legacyView(task: TaskFilesColumns, recorded: { rows: Overlap[]; total: number }) {
    const files_changed = JSON.parse(task.files_changed as string) as FilesChanged;
    const verification = parse<Verification>(task.verification);
    if (verification && recorded.total > 0) {
      const shown = fittingOverlaps(recorded.rows);
      verification.overlapping = [...(verification.overlapping ?? []), ...shown];
      if (recorded.total > shown.length) verification.more = { overlapping: recorded.total - shown.length };
    }
    return { files_changed, verification };
  }

  private unexpectedAfter(taskId: string, listed: number): number {
    return (
      this.sql<{ n: number }>`
        SELECT count(*) AS n FROM ${FILE_CHANGES} file_changes WHERE task_id = ${taskId} AND page_last >= ${listed} AND ord >= ${listed} AND in_scope = 0`[0]
        ?.n ?? 0
    );
  }

  /**
   * Up to `limit` items of one list of a completed task after position `after` (null: from the
   * start), within LIMITS.READ_PAGE_BYTES past the first item.
   */
  listPage(task: TaskFilesColumns, list: FileList, after: number | null, limit: number): FileListPage {
    const found =
      task.files_count === null ? this.legacyItems(task, list, after, limit + 1) : this.rowItems(task.id, list, after, limit + 1);
    const items: FileListItem[] = [];
    let bytes = 0;
    let last: number | null = null;
    for (const { position, item } of found.slice(0, limit)) {
      bytes += jsonBytes(item) + 1;
      if (items.length > 0 && bytes > LIMITS.READ_PAGE_BYTES) break;
      items.push(item);
      last = position;
    }
    return { items, after: items.length < found.length ? last : null };
  }

  private rowItems(taskId: string, list: FileList, after: number | null, limit: number): { position: number; item: FileListItem }[] {
    const from = after ?? -1;
    if (list === "overlapping") {
      return this.overlapRows(
        () => this.sql<OverlapSql>`SELECT * FROM task_overlaps WHERE task_id = ${taskId} AND ord > ${from} ORDER BY ord LIMIT ${limit}`,
      ).map((row) => ({ position: row.ord, item: overlapOf(row) }));
    }
    // A page of files at a time from the one holding `from`, until `limit` items: each page is
    // parsed once, and a read never parses the pages past what it returns.
    // Each page found by a seek on the key: the one holding the position after `from`, then each next.
    type Bounds = { first_ord: number; last_ord: number };
    const found: { position: number; item: FileListItem }[] = [];
    const next = (after: number) =>
      this.sql<Bounds>`
        SELECT first_ord, last_ord FROM file_pages WHERE task_id = ${taskId} AND first_ord > ${after} ORDER BY first_ord LIMIT 1`[0];
    const holding = this.sql<Bounds>`
      SELECT first_ord, last_ord FROM file_pages WHERE task_id = ${taskId} AND first_ord <= ${from + 1} ORDER BY first_ord DESC LIMIT 1`[0];
    let page = holding && holding.last_ord > from ? holding : next(from);
    while (page && found.length < limit) {
      found.push(...this.pageItems(taskId, page.first_ord, list, from, limit - found.length));
      page = next(page.last_ord);
    }
    return found;
  }

  /** Of one page of a task's files (the one starting at `first`), up to `limit` items of a list after position `from`. */
  private pageItems(
    taskId: string,
    first: number,
    list: FileList,
    from: number,
    limit: number,
  ): { position: number; item: FileListItem }[] {
    const found: { position: number; item: FileListItem }[] = [];
    for (const tuple of this.parsedPage(taskId, first)) {
      if (found.length >= limit) break;
      if ((tuple[ORD] as number) <= from || !inList(tuple, list)) continue;
      const row = fileRowOf(taskId, tuple);
      const item: FileListItem =
        list === "line_ranges"
          ? rangesItem(row.path, row.line_ranges as string)
          : list === "renamed"
            ? { from: row.path, to: row.renamed_to as string }
            : list === "lines"
              ? (linesOf(row) as LineCount)
              : row.path;
      found.push({ position: row.ord, item });
    }
    return found;
  }

  /**
   * One page of a task's files, parsed: picking a list out of them costs less than SQL reading each
   * file's columns out of the JSON. The last few pages parsed are kept (a page never changes once
   * written): a list's next page of items starts where the last one stopped, often on the same
   * page, and the JSON export walks every list of a task in turn.
   */
  private parsedPage(taskId: string, first: number): readonly unknown[][] {
    const key = `${taskId}\n${first}`;
    const kept = this.pages.get(key);
    if (kept) {
      // The most recently used last: the oldest is dropped first.
      this.pages.delete(key);
      this.pages.set(key, kept);
      return kept.files;
    }
    const text =
      this.sql<{ files: string }>`SELECT files FROM file_pages WHERE task_id = ${taskId} AND first_ord = ${first}`[0]?.files ?? "[]";
    const page = { files: JSON.parse(text) as unknown[][], chars: text.length };
    for (const [oldest, dropped] of this.pages) {
      if (this.pagesChars + page.chars <= PAGES_KEPT_CHARS) break;
      this.pages.delete(oldest);
      this.pagesChars -= dropped.chars;
    }
    this.pages.set(key, page);
    this.pagesChars += page.chars;
    return page.files;
  }

  private legacyItems(
    task: TaskFilesColumns,
    list: FileList,
    after: number | null,
    limit: number,
  ): { position: number; item: FileListItem }[] {
    const files = parse<FilesChanged>(task.files_changed);
    const verification = parse<Verification>(task.verification);
    let all: readonly FileListItem[];
    if (list === "line_ranges") all = [];
    else if (list === "unexpected_files") all = verification?.unexpected_files ?? [];
    else if (list === "overlapping") {
      const more = this.overlapRows(() => this.sql<OverlapSql>`SELECT * FROM task_overlaps WHERE task_id = ${task.id} ORDER BY ord`).map(
        overlapOf,
      );
      all = [...(verification?.overlapping ?? []), ...more];
    } else all = files?.[list] ?? [];
    const start = (after ?? -1) + 1;
    return all.slice(start, start + limit).map((item, index) => ({ position: start + index, item }));
  }

  /**
   * Of the files a parent's view lists, those a subtask (any depth) changed too: the parent's
   * files table leaves them to the subtasks, which list them.
   */
  pathsInSubtasks(parent: TaskFilesColumns): string[] {
    const listed = parent.files_count === null ? Number.MAX_SAFE_INTEGER : (parent.files_listed ?? 0);
    return this.sql<{ path: string }>`
      WITH RECURSIVE below(id) AS (
        SELECT id FROM tasks WHERE parent_id = ${parent.id}
        UNION ALL SELECT t.id FROM tasks t JOIN below ON t.parent_id = below.id
      )
      , theirs(path) AS MATERIALIZED (SELECT DISTINCT c.path FROM below CROSS JOIN ${FILE_CHANGES} c ON c.task_id = below.id)
      SELECT own.path FROM ${FILE_CHANGES} own JOIN theirs ON theirs.path = own.path
      WHERE own.task_id = ${parent.id} AND own.page_first < ${listed} AND own.ord < ${listed}
      ORDER BY own.path`.map((r) => r.path);
  }
}

/** A window of whole lists (a task completed before files were rows): the files `from` … in path order, each list kept to them. */
function windowOfWholeLists(
  view: { files_changed: FilesChanged; verification: Verification | null },
  from: number,
  count: number,
): { files_changed: FilesChanged; verification: Verification | null } {
  const f = view.files_changed;
  const all = [...f.added, ...f.modified, ...f.deleted].sort();
  const kept = new Set(all.slice(from, from + count));
  const files_changed: FilesChanged = {
    ...f,
    added: f.added.filter((p) => kept.has(p)),
    modified: f.modified.filter((p) => kept.has(p)),
    deleted: f.deleted.filter((p) => kept.has(p)),
    renamed: f.renamed.filter((r) => kept.has(r.from)),
    uncommitted: f.uncommitted.filter((p) => kept.has(p)),
  };
  if (f.lines) files_changed.lines = f.lines.filter((line) => kept.has(line.path));
  if (f.not_by_agent_tools) files_changed.not_by_agent_tools = f.not_by_agent_tools.filter((p) => kept.has(p));
  const after = all.length - from - kept.size;
  if (after > 0) files_changed.more = after;
  const verification = view.verification && {
    ...view.verification,
    unexpected_files: view.verification.unexpected_files.filter((p) => kept.has(p)),
  };
  return { files_changed, verification };
}
