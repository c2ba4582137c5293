/**
 * @module workflow/head-figures
 * What the whole-workflow figures of a page's head are counted from (workflow/reader): every
 * task's status, completion and kept review facts, the issues that ask for review, how many tasks
 * asked for review in their outcome, and the top-level tasks' line totals. Reading them scans the
 * tasks, and the head is read after every write by each live page; so they are read once per
 * object instance and kept: a start, a completion and an issue add what they change, and a write
 * that rolls back forgets them all (the next head reads them again). Only the object writes its storage.
 */
import type { TaskView } from "../domain/view";
import type { Sql } from "../storage/sql";

/** A task as the review counts read it (records' TaskRow's columns). */
export type ReviewRow = {
  id: string;
  status: TaskView["status"];
  completed_at: number | null;
  review_facts: string | null;
};

interface Kept {
  /** In start order: loaded in it, and each start is the newest. */
  tasks: Map<string, ReviewRow>;
  flaggedIssues: string[];
  /** Tasks whose outcome asked for a person's review (`manual_review_needed`). */
  askedTasks: number;
  /** The top-level tasks that measured their lines, and their sums. */
  lines: LineSums;
}

type LineSums = { n: number; added: number; removed: number; binary: number };

/** A task's line totals as its files_changed JSON keeps them; null when it measured none. */
function lineTotalsOf(filesChanged: string | null): Omit<LineSums, "n"> | null {
  if (filesChanged === null) return null;
  const totals = (JSON.parse(filesChanged) as { line_totals?: unknown }).line_totals;
  if (typeof totals !== "object" || totals === null || Array.isArray(totals)) return null;
  const { added, removed, binary } = totals as Record<string, unknown>;
  const n = (value: unknown) => (typeof value === "number" ? value : 0);
  return { added: n(added), removed: n(removed), binary: n(binary) };
}

export class HeadFigures {
  private kept: Kept | null = null;

  constructor(private readonly sql: Sql) {}

  private read(): Kept {
    this.kept ??= {
      tasks: new Map(
        this.sql<ReviewRow>`SELECT id, status, completed_at, review_facts FROM tasks ORDER BY started_at, id`.map((row) => [row.id, row]),
      ),
      // Only issues have the flag: the partial index log_entries_review holds exactly these.
      flaggedIssues: this.sql<{ id: string }>`SELECT id FROM log_entries WHERE requires_human_review = 1 ORDER BY created_at, id`.map(
        (row) => row.id,
      ),
      askedTasks:
        this.sql<{ n: number }>`SELECT count(*) AS n FROM tasks WHERE json_extract(outcome, '$.manual_review_needed') = 1`[0]?.n ?? 0,
      lines: this.sql<LineSums>`
        SELECT count(*) AS n, coalesce(sum(json_extract(files_changed, '$.line_totals.added')), 0) AS added,
          coalesce(sum(json_extract(files_changed, '$.line_totals.removed')), 0) AS removed,
          coalesce(sum(json_extract(files_changed, '$.line_totals.binary')), 0) AS binary
        FROM tasks WHERE parent_id IS NULL AND json_type(files_changed, '$.line_totals') = 'object'`[0] ?? {
        n: 0,
        added: 0,
        removed: 0,
        binary: 0,
      },
    };
    return this.kept;
  }

  /** Every task's id, status, completion and kept review facts, in start order. */
  tasks(): ReviewRow[] {
    return [...this.read().tasks.values()];
  }

  /** The ids of the issues that require human review, in creation order. */
  flaggedIssues(): readonly string[] {
    return this.read().flaggedIssues;
  }

  /** How many tasks asked for a person's review in their outcome. */
  askedTasks(): number {
    return this.read().askedTasks;
  }

  /** Lines summed over the top-level tasks that measured them; null when none did. */
  lineTotals(): Omit<LineSums, "n"> | null {
    const { n, added, removed, binary } = this.read().lines;
    return n === 0 ? null : { added, removed, binary };
  }

  started(id: string): void {
    this.kept?.tasks.set(id, { id, status: "in_progress", completed_at: null, review_facts: null });
  }

  completed(row: ReviewRow & { outcome: string | null; parent_id: string | null; files_changed: string | null }): void {
    if (!this.kept) return;
    const lines = row.parent_id === null ? lineTotalsOf(row.files_changed) : null;
    if (lines) {
      const sums = this.kept.lines;
      this.kept.lines = {
        n: sums.n + 1,
        added: sums.added + lines.added,
        removed: sums.removed + lines.removed,
        binary: sums.binary + lines.binary,
      };
    }
    this.kept.tasks.set(row.id, { id: row.id, status: row.status, completed_at: row.completed_at, review_facts: row.review_facts });
    if (row.outcome !== null && (JSON.parse(row.outcome) as { manual_review_needed?: unknown }).manual_review_needed === true)
      this.kept.askedTasks++;
  }

  issueLogged(id: string, flagged: boolean): void {
    if (flagged) this.kept?.flaggedIssues.push(id);
  }

  forgetUncommitted(): void {
    this.kept = null;
  }
}
