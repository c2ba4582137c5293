/**
 * @module account/workflow-index
 * The account's index of its workflows: one row per workflow, the summary its workflow object
 * pushes after each write (name, status, times, counts, usage, bytes stored, share state). It
 * answers resume by name, get_workflow without an id, the quotas, the totals and the dashboard's
 * rows; it is never the source of truth for a workflow's content.
 */
import type { AccountTotals, DashboardRow } from "@waymark/protocol/views/reads";
import { type ShareInfo, shareStatus } from "../domain/share-status";
import { roundCost, type WorkflowRepository, type WorkflowSummary } from "../domain/view";
import type { Sql } from "../storage/sql";

/** An open workflow that start_workflow found under the same name. */
export interface ResumeCandidate {
  workflow_id: string;
  name: string;
  created_at: string;
  updated_at: string;
  open_tasks: number;
}

/** Usage over all the account's workflows (@waymark/protocol/views/reads). */
/** A dashboard row: the summary plus the state of the workflow's share link, and why it matched a search (@waymark/protocol/views/reads). */
export type { AccountTotals, DashboardRow } from "@waymark/protocol/views/reads";

/** Which rows a dashboard page shows: SQL filters plus, when a search ran, the ids it found. */
export interface RowFilter {
  status: WorkflowSummary["status"] | null;
  needsReview: boolean;
  /** Only these workflows (what a text or path search found), or null for all. */
  ids: readonly string[] | null;
}

/** The key two workflow names are compared by: trimmed, case-folded. */
export const nameKey = (name: string) => name.trim().toLowerCase();
/**
 * The key resume-by-name looks workflows up by: the name key and the repository fingerprint
 * (empty without one), so work from different repositories is never merged, and a client
 * without a fingerprint only resumes workflows that have none either. Names hold no control
 * characters, so the separator cannot be forged.
 */
export const resumeKey = (name: string, fingerprint: string | null | undefined) => `${nameKey(name)}\u0000${fingerprint ?? ""}`;

/** Bounds a caller's list size: at least 1, at most 500 rows per read. */
const listLimit = (limit: number) => Math.min(Math.max(limit, 1), 500);

type Row = Record<string, SqlStorageValue>;

/**
 * How long the stored summary's "updated" time may stay behind the workflow's last write when
 * nothing else it shows changed (the dashboard's time and its order by it lag by this much at most).
 */
export const SUMMARY_TIME_LAG_MS = 60_000;

/**
 * How far the stored summary's bytes may stay from the workflow's own count when nothing else it
 * shows changed: the account's byte quota (read at start_workflow) counts each open workflow at
 * most this much short (test/account/usage.test.ts).
 */
export const SUMMARY_BYTES_LAG = 64 * 1024;

/**
 * What a push lets the index do with the summary's counts (see record): wait for the workflow's
 * alarm, which is due within ACCOUNT_LAZY_PUSH_MS anyway, or settle them (that alarm's push).
 */
export type CountsRule = "may_wait" | "settle";

/**
 * Whether a push left the stored summary's counts behind ("behind": they wait for the workflow's
 * alarm) or the stored row counts what the push carried ("current": nothing is left to settle, so
 * the workflow's alarm need not push again for them).
 */
export type CountsLeft = "behind" | "current";

export class WorkflowIndex {
  /**
   * The quotas' usage as stored, kept once read: counting it reads every workflow's row (up to
   * ACCOUNT_WORKFLOWS) and every workflow's start asks for it, so each push moves it by what it
   * changed instead. Only this object writes its storage; a push that rolls back forgets it (forgetUsage).
   */
  private keptUsage: { workflows: number; bytes_stored: number } | null = null;

  constructor(private readonly sql: Sql) {}

  /**
   * Inserts or replaces a workflow's summary (pushes are replayed: the latest one wins), adding
   * `pathsAdded` to the paths the path index holds for it: at most one row written per push (the
   * summary is the most frequent row the account writes), and none when the push may leave the
   * stored row behind (whatMayWait): a decision's, an issue's or milestones' push that only moves
   * the time and the bytes; and, when the workflow's alarm is due within ACCOUNT_LAZY_PUSH_MS anyway
   * (`counts` "may_wait"), a push that moves only counts (a task's start: its open tasks and tasks)
   * within the same bounds: that alarm's push (`counts` "settle") stores them, unless a push that
   * writes the row (a completion, with its paths) did first. The next push that changes more, or
   * passes a bound, stores the time and the bytes. A `share` (the link state a new workflow's first
   * push carries) is stored with the row.
   */
  record(
    s: WorkflowSummary,
    options: { pathsAdded?: number; share?: ShareInfo | undefined; counts?: CountsRule | undefined } = {},
  ): CountsLeft {
    const { pathsAdded = 0, share, counts } = options;
    const repo = s.repository ?? null;
    const key = resumeKey(s.name, repo?.fingerprint);
    const bytes = s.bytes_stored ?? 0;
    // One row read by key (a thousandth of a row written): what decides whether anything is written.
    const stored = this.sql<Row>`SELECT name, name_key, status, updated_at, open_tasks, tasks, reviews_needed, input_tokens,
        output_tokens, cost_usd, bytes_stored, files_changed, repository_remote, repository_branch, repository_fingerprint
      FROM workflows WHERE id = ${s.id}`[0];
    const sameKeys =
      stored !== undefined &&
      stored.name === s.name &&
      stored.name_key === key &&
      stored.status === s.status &&
      stored.repository_remote === (repo?.remote ?? null) &&
      stored.repository_branch === (repo?.branch ?? null) &&
      stored.repository_fingerprint === (repo?.fingerprint ?? null);
    if (sameKeys && pathsAdded === 0 && !share) {
      const waits = whatMayWait(stored, s);
      if (waits === "time") return "current";
      if (waits === "counts" && counts === "may_wait") return "behind";
    }
    if (this.keptUsage) {
      // The kept usage moves by what the stored row's bytes move.
      this.keptUsage = {
        workflows: this.keptUsage.workflows + (stored ? 0 : 1),
        bytes_stored: this.keptUsage.bytes_stored + bytes - Number(stored?.bytes_stored ?? 0),
      };
    }
    if (sameKeys) {
      // Most pushes change the counts and the time only: then the row is updated without touching the
      // resume-key index (open workflows' name_key, account v21), one row written fewer (each is billed); otherwise the whole upsert.
      this.sql`UPDATE workflows SET updated_at = ${s.updated_at}, open_tasks = ${s.open_tasks}, tasks = ${s.tasks},
          reviews_needed = ${s.reviews_needed}, input_tokens = ${s.input_tokens}, output_tokens = ${s.output_tokens}, cost_usd = ${s.cost_usd},
          bytes_stored = ${bytes}, files_changed = ${s.files_changed ?? 0}, paths_indexed = paths_indexed + ${pathsAdded}
        WHERE id = ${s.id}`;
      if (share) this.recordShare(s.id, share);
      return "current";
    }
    // A new workflow's first push carries its link: stored with the row (one row written, not two).
    const link = share ?? { created_at: null, expires_at: null, revoked_at: null };
    this.sql`INSERT INTO workflows (id, name, name_key, status, created_at, updated_at, open_tasks, tasks, reviews_needed,
        input_tokens, output_tokens, cost_usd, bytes_stored, files_changed, repository_remote, repository_branch, repository_fingerprint,
        paths_indexed, share_created_at, share_expires_at, share_revoked_at)
      VALUES (${s.id}, ${s.name}, ${key}, ${s.status}, ${s.created_at}, ${s.updated_at}, ${s.open_tasks}, ${s.tasks},
        ${s.reviews_needed}, ${s.input_tokens}, ${s.output_tokens}, ${s.cost_usd}, ${bytes}, ${s.files_changed ?? 0},
        ${repo?.remote ?? null}, ${repo?.branch ?? null}, ${repo?.fingerprint ?? null}, ${pathsAdded},
        ${link.created_at}, ${link.expires_at}, ${link.revoked_at})
      ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, status = excluded.status,
        updated_at = excluded.updated_at, open_tasks = excluded.open_tasks, tasks = excluded.tasks,
        reviews_needed = excluded.reviews_needed, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
        cost_usd = excluded.cost_usd, bytes_stored = excluded.bytes_stored, files_changed = excluded.files_changed,
        repository_remote = excluded.repository_remote, repository_branch = excluded.repository_branch,
        repository_fingerprint = excluded.repository_fingerprint, paths_indexed = paths_indexed + excluded.paths_indexed`;
    // The link's columns above only take on a new row; a stored one (its name or status changed) gets them here.
    if (share && stored) this.recordShare(s.id, share);
    return "current";
  }

  /** A share link's state; a row is only updated, never created, here. */
  recordShare(workflowId: string, share: ShareInfo): void {
    this.sql`UPDATE workflows SET share_created_at = ${share.created_at}, share_expires_at = ${share.expires_at},
      share_revoked_at = ${share.revoked_at} WHERE id = ${workflowId}`;
  }

  /** The most recently updated open workflow with that resume key, if any. */
  openNamed(name: string, fingerprint: string | null): ResumeCandidate | null {
    const row = this.sql<Row>`
      SELECT * FROM workflows WHERE name_key = ${resumeKey(name, fingerprint)} AND status = 'active' ORDER BY updated_at DESC LIMIT 1`[0];
    if (!row) return null;
    const s = summaryFromRow(row);
    return { workflow_id: s.id, name: s.name, created_at: s.created_at, updated_at: s.updated_at, open_tasks: s.open_tasks };
  }

  /** What the account's quotas count: workflows and the bytes they store (counted once per object life, then kept). */
  usage(): { workflows: number; bytes_stored: number } {
    if (this.keptUsage) return { ...this.keptUsage };
    const row = this.sql<{ workflows: number; bytes: number | null }>`
      SELECT count(*) AS workflows, sum(bytes_stored) AS bytes FROM workflows`[0];
    this.keptUsage = { workflows: row?.workflows ?? 0, bytes_stored: row?.bytes ?? 0 };
    return { ...this.keptUsage };
  }

  /** A push rolled back: the kept usage may count what it did not store; the next usage() counts again. */
  forgetUsage(): void {
    this.keptUsage = null;
  }

  totals(): AccountTotals {
    const row = this.sql<{
      workflows: number;
      open: number | null;
      tasks: number | null;
      input_tokens: number | null;
      output_tokens: number | null;
      cost_usd: number | null;
      files_changed: number | null;
      reviews_needed: number | null;
    }>`SELECT count(*) AS workflows, sum(status = 'active') AS open, sum(tasks) AS tasks, sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd, sum(files_changed) AS files_changed,
        sum(reviews_needed) AS reviews_needed FROM workflows`[0];
    return {
      workflows: row?.workflows ?? 0,
      open_workflows: row?.open ?? 0,
      tasks: row?.tasks ?? 0,
      input_tokens: row?.input_tokens ?? 0,
      output_tokens: row?.output_tokens ?? 0,
      cost_usd: roundCost(row?.cost_usd ?? 0),
      // Summed per workflow: a file two workflows changed counts twice.
      files_changed: row?.files_changed ?? 0,
      reviews_needed: row?.reviews_needed ?? 0,
    };
  }

  /** The most recently updated workflows (only the open ones when `openOnly`). */
  list(openOnly: boolean, limit: number): WorkflowSummary[] {
    const n = listLimit(limit);
    const rows = openOnly
      ? this.sql<Row>`SELECT * FROM workflows WHERE status = 'active' ORDER BY updated_at DESC LIMIT ${n}`
      : this.sql<Row>`SELECT * FROM workflows ORDER BY updated_at DESC LIMIT ${n}`;
    return rows.map(summaryFromRow);
  }

  /** The most recently updated workflows with their share state. */
  dashboardRows(limit: number): DashboardRow[] {
    return this.sql<Row>`SELECT * FROM workflows ORDER BY updated_at DESC LIMIT ${listLimit(limit)}`.map(dashboardRowOf);
  }

  /** How many workflows pass the filter. */
  count(filter: RowFilter): number {
    const { status, review, ids } = filterParams(filter);
    return (
      this.sql<{ n: number }>`SELECT count(*) AS n FROM workflows WHERE (${status} IS NULL OR status = ${status})
        AND (${review} = 0 OR reviews_needed > 0) AND (${ids} IS NULL OR id IN (SELECT value FROM json_each(${ids})))`[0]?.n ?? 0
    );
  }

  /** One window of the workflows that pass the filter, newest activity first. */
  page(filter: RowFilter, offset: number, size: number): DashboardRow[] {
    const { status, review, ids } = filterParams(filter);
    return this.sql<Row>`SELECT * FROM workflows WHERE (${status} IS NULL OR status = ${status})
        AND (${review} = 0 OR reviews_needed > 0) AND (${ids} IS NULL OR id IN (SELECT value FROM json_each(${ids})))
        ORDER BY updated_at DESC, id DESC LIMIT ${size} OFFSET ${offset}`.map(dashboardRowOf);
  }
}

function filterParams(filter: RowFilter): { status: string | null; review: number; ids: string | null } {
  return { status: filter.status, review: filter.needsReview ? 1 : 0, ids: filter.ids === null ? null : JSON.stringify(filter.ids) };
}

function dashboardRowOf(r: Row): DashboardRow {
  const now = Date.now();
  const time = (value: SqlStorageValue | undefined) => (value === null || value === undefined ? null : String(value));
  const created = time(r.share_created_at);
  const expires = time(r.share_expires_at);
  const revoked = time(r.share_revoked_at);
  const status =
    created === null
      ? "none"
      : shareStatus({ revoked_at: revoked === null ? null : 1, expires_at: expires === null ? null : Date.parse(expires) }, now);
  return { ...summaryFromRow(r), share: { status, created_at: created, expires_at: expires, revoked_at: revoked } };
}

function summaryFromRow(r: Row): WorkflowSummary {
  return {
    id: String(r.id),
    name: String(r.name),
    status: String(r.status) as WorkflowSummary["status"],
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
    open_tasks: Number(r.open_tasks),
    tasks: Number(r.tasks),
    reviews_needed: Number(r.reviews_needed),
    input_tokens: Number(r.input_tokens ?? 0),
    output_tokens: Number(r.output_tokens ?? 0),
    cost_usd: Number(r.cost_usd ?? 0),
    bytes_stored: Number(r.bytes_stored ?? 0),
    files_changed: Number(r.files_changed ?? 0),
    repository: repositoryOf(r),
  };
}

/** The row's repository; null when none was reported (or the row predates the columns and was not pushed since). */
function repositoryOf(r: Row): WorkflowRepository | null {
  const text = (value: SqlStorageValue | undefined) => (typeof value === "string" ? value : null);
  const fingerprint = text(r.repository_fingerprint);
  return fingerprint === null ? null : { fingerprint, remote: text(r.repository_remote), branch: text(r.repository_branch) };
}

/**
 * What of the pushed summary may stay behind in the stored row (the caller has compared the keys):
 * "time" when it differs only in its time, by less than SUMMARY_TIME_LAG_MS after the stored one (or
 * before it: a replayed push), and its bytes, by less than SUMMARY_BYTES_LAG either way (a bounded
 * difference: nothing settles it); "counts" when, within those bounds, it also moves counts a person reads
 * (open tasks, tasks, usage, files changed: they wait only for the workflow's alarm); null when it
 * must be stored now (the reviews needed, which ask a person to act, or a bound passed).
 */
function whatMayWait(stored: Row, s: WorkflowSummary): "time" | "counts" | null {
  if (Number(stored.reviews_needed) !== s.reviews_needed) return null;
  const later = Date.parse(s.updated_at) - Date.parse(String(stored.updated_at));
  if (later >= SUMMARY_TIME_LAG_MS || Math.abs((s.bytes_stored ?? 0) - Number(stored.bytes_stored ?? 0)) >= SUMMARY_BYTES_LAG) return null;
  const sameCounts =
    Number(stored.open_tasks) === s.open_tasks &&
    Number(stored.tasks) === s.tasks &&
    Number(stored.input_tokens ?? 0) === s.input_tokens &&
    Number(stored.output_tokens ?? 0) === s.output_tokens &&
    Number(stored.cost_usd ?? 0) === s.cost_usd &&
    Number(stored.files_changed ?? 0) === (s.files_changed ?? 0);
  return sameCounts ? "time" : "counts";
}
