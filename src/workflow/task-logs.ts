/**
 * @module workflow/task-logs
 * A task's log entries (decisions, issues, milestones) without an index entry for most of them.
 * The entries of every kind are one table since v31 (`log_entries`), keyed by kind and then in the
 * order every whole-workflow read pages a kind, (created_at, id): a kind is a range of the key;
 * since v27 an entry written within LIMITS.LOG_WINDOW_EVENTS events of its task's start is left
 * out of the task index (`in_task_index = 0`: a row written fewer) and found by that key instead,
 * in its task's window: from the task's start to the time of the LOG_WINDOW_EVENTS-th event after
 * it (or the end of the log while there are fewer). The log's times never go back (the writer times
 * a write no earlier than the last event), so every entry written inside that span of events lies
 * inside that span of time, and the window holds about LOG_WINDOW_EVENTS rows of each kind
 * whatever the workflow's size. Later entries, and every entry of a task started before v27 (no
 * `start_seq`), are in the partial index `log_entries_task` (kind, task id) and read through it.
 */
import { LIMITS } from "../limits";
import { type Sql, SqlText } from "../storage/sql";

/** The log kinds: the `kind` of their entries in `log_entries` (each its own table before v31). */
export const LOG_KINDS = ["decisions", "issues", "milestones"] as const;
export type LogKind = (typeof LOG_KINDS)[number];

/** Each kind's columns (its table's before v31): a row of `log_entries` holds every kind's, the others NULL, and reading them all was a third more time per page. */
const KIND_COLUMNS: Record<LogKind, readonly string[]> = {
  decisions: ["category", "question", "options", "chosen", "reasoning", "trade_offs"],
  issues: ["type", "description", "resolution", "requires_human_review"],
  milestones: ["message", "progress", "metadata"],
};

/** A kind's entry as read: its key, its task and its own columns, in statements (`prefix`: the entry's alias in a join). */
export function logColumns(kind: LogKind, prefix = ""): SqlText {
  // Named as the columns are (AS): an ORDER BY of the join then means the entry's id, not json_each's.
  const columns = ["id", "task_id", "created_at", ...KIND_COLUMNS[kind]];
  return new SqlText(columns.map((column) => (prefix ? `${prefix}${column} AS ${column}` : column)).join(", "));
}

/** What finding a task's entries needs of it: its start, and the last event's seq before it (null: started before v27). */
export type LogWindowTask = { id: string; started_at: number; start_seq: number | null };

/** What orders a log entry (the tables' key) and whose it is. */
type LogKey = { task_id: string; created_at: number; id: string };

/** Past any time a write is given (the end of a window whose closing event is not written yet). */
const OPEN_END = Number.MAX_SAFE_INTEGER;

/**
 * Whether an entry of `task` goes into its task's index: its task started before v27, or its event
 * (the one after `lastSeq`) is past the task's window.
 */
export function inTaskIndex(task: Pick<LogWindowTask, "start_seq">, lastSeq: number): boolean {
  return task.start_seq === null || lastSeq + 1 >= task.start_seq + LIMITS.LOG_WINDOW_EVENTS;
}

export class TaskLogs {
  constructor(private readonly sql: Sql) {}

  /**
   * Each kind's entries of these tasks, each oldest first (the whole view's order): those in the
   * task index through it, the others by the table's key within their tasks' windows (merged where
   * they overlap, so a row is read once however many of the tasks' windows hold it).
   */
  of<T>(kind: LogKind, tasks: readonly LogWindowTask[]): T[] {
    if (tasks.length === 0) return [];
    const ids = JSON.stringify(tasks.map((task) => task.id));
    const ranges = JSON.stringify(this.windows(tasks));
    // CROSS JOIN: each window is a range of the key (SEARCH … USING PRIMARY KEY), never a scan per window.
    // INDEXED BY: the kind is also the key's first column, and a planner taking that range reads every entry of the kind.
    return this.sql<T & Record<string, SqlStorageValue>>`
      SELECT ${logColumns(kind)} FROM log_entries INDEXED BY log_entries_task
        WHERE kind = ${kind} AND in_task_index = 1 AND task_id IN (SELECT value FROM json_each(${ids}))
      UNION ALL SELECT ${logColumns(kind, "entry.")} FROM json_each(${ranges}) r CROSS JOIN log_entries entry
        WHERE entry.kind = ${kind} AND entry.created_at >= r.value ->> 0 AND entry.created_at <= r.value ->> 1 AND entry.in_task_index = 0
          AND entry.task_id IN (SELECT value FROM json_each(${ids}))
      ORDER BY created_at, id`;
  }

  /**
   * Each task's newest entry of a kind, by task id (the resume's last milestones), without reading
   * all of a long-running task's entries as `of` does. Its newest index entry first, along the task
   * index (which holds the table's key after the task id: newest first is its order, one row). An
   * index entry is written after its task's window closed, so it is newer than every entry in the
   * window but those of the window's last millisecond: only a task with no index entry, or one of
   * that millisecond, has its window read, and those windows are read together (merged, as `of`
   * reads them: a row once however many of the tasks' windows hold it).
   */
  newest<T extends LogKey>(kind: LogKind, tasks: readonly LogWindowTask[]): Map<string, T> {
    const spans = this.spans(tasks);
    const newest = new Map<string, T>();
    const windowed: LogWindowTask[] = [];
    for (const task of tasks) {
      const [row] = this.sql<T & Record<string, SqlStorageValue>>`
        SELECT ${logColumns(kind)} FROM log_entries INDEXED BY log_entries_task WHERE kind = ${kind} AND in_task_index = 1 AND task_id = ${task.id}
        ORDER BY created_at DESC, id DESC LIMIT 1`;
      if (row) newest.set(task.id, row);
      const span = spans.get(task.id);
      if (span && (!row || row.created_at <= span[1])) windowed.push(task);
    }
    if (windowed.length === 0) return newest;
    const ids = JSON.stringify(windowed.map((task) => task.id));
    const ranges = JSON.stringify(merged(windowed.map((task) => spans.get(task.id)).filter((span) => span !== undefined)));
    // Oldest first: each task's last row is its newest in the windows.
    for (const row of this.sql<T & Record<string, SqlStorageValue>>`
      SELECT ${logColumns(kind, "entry.")} FROM json_each(${ranges}) r CROSS JOIN log_entries entry
        WHERE entry.kind = ${kind} AND entry.created_at >= r.value ->> 0 AND entry.created_at <= r.value ->> 1
          AND entry.in_task_index = 0 AND entry.task_id IN (SELECT value FROM json_each(${ids}))
      ORDER BY created_at, id`) {
      const kept = newest.get(row.task_id);
      if (!kept || newer(row, kept)) newest.set(row.task_id, row);
    }
    return newest;
  }

  /** Each windowed task's window as a [from, to] time range, by task id (tasks started before v27 have none). */
  private spans(tasks: readonly LogWindowTask[]): Map<string, [number, number]> {
    const windowed = tasks.filter((task): task is LogWindowTask & { start_seq: number } => task.start_seq !== null);
    if (windowed.length === 0) return new Map();
    const ends = JSON.stringify(windowed.map((task) => task.start_seq + LIMITS.LOG_WINDOW_EVENTS));
    const closed = new Map(
      this.sql<{ seq: number; at: number }>`SELECT seq, at FROM events WHERE seq IN (SELECT value FROM json_each(${ends}))`.map((row) => [
        row.seq,
        row.at,
      ]),
    );
    return new Map(
      windowed.map((task) => [
        task.id,
        [task.started_at, closed.get(task.start_seq + LIMITS.LOG_WINDOW_EVENTS) ?? OPEN_END] as [number, number],
      ]),
    );
  }

  /** The tasks' windows as disjoint [from, to] time ranges, in order (tasks started before v27 have none). */
  private windows(tasks: readonly LogWindowTask[]): [number, number][] {
    return merged([...this.spans(tasks).values()]);
  }
}

/** Time ranges merged where they overlap, in order. */
function merged(spans: readonly [number, number][]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const span of [...spans].sort((a, b) => a[0] - b[0])) {
    const last = ranges.at(-1);
    if (last && span[0] <= last[1]) last[1] = Math.max(last[1], span[1]);
    else ranges.push([...span]);
  }
  return ranges;
}

/** Whether `a` comes after `b` in a kind's key order, (created_at, id) (ids compared as SQLite compares them: ASCII, code unit by code unit). */
const newer = (a: LogKey, b: LogKey): boolean => a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);
