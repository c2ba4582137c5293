/**
 * @module workflow/totals
 * The workflow's running totals, one row updated inside each write's transaction: reading
 * them costs the same for 1 task or 5,000, and so does every write. Also the per-workflow
 * quotas (events, bytes stored), which are counted here.
 */

import { roundCost, type Totals } from "../domain/view";
import { type Failure, fail, WaymarkError } from "../errors";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

type TotalsRow = { [K in keyof Totals]: Totals[K] } & { id: number; events: number; bytes_stored: number };

export interface CompletedTaskDelta {
  topLevel: boolean;
  duration: number;
  newPaths: number;
  review: boolean;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export class RunningTotals {
  constructor(private readonly sql: Sql) {}

  /** The schema migration creates the row, so it always exists. */
  private row(): TotalsRow {
    const row = this.sql<TotalsRow>`SELECT * FROM totals WHERE id = 1`[0];
    if (!row) throw new WaymarkError("INTERNAL", "totals row missing");
    return row;
  }

  read(): Totals {
    const { events: _events, bytes_stored: _bytes, id: _id, ...totals } = this.row();
    return { ...totals, cost_usd: roundCost(totals.cost_usd) };
  }

  usage(): { events: number; bytes_stored: number } {
    const { events, bytes_stored } = this.row();
    return { events, bytes_stored };
  }

  /**
   * Counts events and bytes written by the current write. Writes that open new work (tasks,
   * logs) are refused past the quota; completing a task or a workflow is always allowed, so
   * work that has started can always be closed.
   */
  countWrite(events: number, bytes: number, enforce: boolean): void {
    const [usage] = this.sql<{ events: number; bytes_stored: number }>`
      UPDATE totals SET events = events + ${events}, bytes_stored = bytes_stored + ${bytes} WHERE id = 1 RETURNING events, bytes_stored`;
    if (!usage) throw new WaymarkError("INTERNAL", "totals row missing");
    if (!enforce) return;
    if (usage.events > LIMITS.WORKFLOW_EVENTS) {
      throw new WaymarkError(
        "QUOTA_EXCEEDED",
        `workflow: at most ${LIMITS.WORKFLOW_EVENTS} events per workflow (this one has ${usage.events}); complete it and start another`,
      );
    }
    if (usage.bytes_stored > LIMITS.WORKFLOW_BYTES) {
      throw new WaymarkError(
        "QUOTA_EXCEEDED",
        `workflow: at most ${LIMITS.WORKFLOW_BYTES} bytes stored per workflow (this one stores ${usage.bytes_stored}); complete it and start another`,
      );
    }
  }

  taskStarted(): void {
    this.sql`UPDATE totals SET tasks = tasks + 1, open_tasks = open_tasks + 1 WHERE id = 1`;
  }

  taskCompleted(d: CompletedTaskDelta): void {
    this.sql`UPDATE totals SET open_tasks = open_tasks - 1,
      duration_seconds = duration_seconds + ${d.topLevel ? d.duration : 0},
      files_changed = files_changed + ${d.newPaths},
      reviews_needed = reviews_needed + ${d.review ? 1 : 0},
      input_tokens = input_tokens + ${d.input_tokens}, output_tokens = output_tokens + ${d.output_tokens},
      cost_usd = cost_usd + ${d.cost_usd}
      WHERE id = 1`;
  }

  decisionLogged(): void {
    this.sql`UPDATE totals SET decisions = decisions + 1 WHERE id = 1`;
  }

  /** A reviewer's verdict settled a review item (-1) or reopened one it had settled (+1). */
  reviewAnswered(delta: -1 | 1): void {
    this.sql`UPDATE totals SET reviews_needed = reviews_needed + ${delta} WHERE id = 1`;
  }

  issueLogged(review: boolean): void {
    this.sql`UPDATE totals SET issues = issues + 1, reviews_needed = reviews_needed + ${review ? 1 : 0} WHERE id = 1`;
  }
}

/** Why the account may not start another workflow, or null. Checked when a workflow starts. */
export function accountQuotaFailure(usage: { workflows: number; bytes_stored: number }): Failure | null {
  if (usage.workflows >= LIMITS.ACCOUNT_WORKFLOWS) {
    return fail(
      "QUOTA_EXCEEDED",
      `account: at most ${LIMITS.ACCOUNT_WORKFLOWS} workflows per account (this account has ${usage.workflows})`,
    );
  }
  if (usage.bytes_stored >= LIMITS.ACCOUNT_BYTES) {
    return fail(
      "QUOTA_EXCEEDED",
      `account: at most ${LIMITS.ACCOUNT_BYTES} bytes stored per account (this account stores ${usage.bytes_stored})`,
    );
  }
  return null;
}
