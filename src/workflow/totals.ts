/**
 * @module workflow/totals
 * The workflow's running totals, one row updated once at the end of each write's transaction
 * (with everything the write counted): reading them costs the same for 1 task or 5,000, and so
 * does every write. Also the per-workflow quotas (events, bytes stored), which are counted here,
 * and two marks every write would otherwise spend a row written on (each is billed): the time of
 * the agent's last write (the workflow's updated_at) and the account outbox's position.
 */

import { roundCost, type Totals } from "../domain/view";
import { type Failure, fail, WaymarkError } from "../errors";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

type TotalsRow = { [K in keyof Totals]: Totals[K] } & {
  id: number;
  events: number;
  bytes_stored: number;
  synced_seq: number;
  updated_at: number | null;
};

/** What a write stores besides its counts, in the same UPDATE. */
export interface WriteMarks {
  /** The write's time when it is the agent's (every write but a reviewer's feedback): the workflow's updated_at. */
  agentWriteAt: number | null;
  /** The last event seq the account index acknowledged since the last write (0: none): the outbox position. */
  syncedSeq: number;
}

export interface CompletedTaskDelta {
  topLevel: boolean;
  duration: number;
  newPaths: number;
  review: boolean;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** The running totals a write changes by a count. */
type Counter = keyof Totals;

const NO_CHANGE: Readonly<Record<Counter, number>> = {
  tasks: 0,
  open_tasks: 0,
  duration_seconds: 0,
  files_changed: 0,
  decisions: 0,
  issues: 0,
  reviews_needed: 0,
  input_tokens: 0,
  output_tokens: 0,
  cost_usd: 0,
};

export class RunningTotals {
  /**
   * What the current write changes, stored by countWrite in the one UPDATE every write makes
   * anyway: a log write then costs one statement for its totals, not two. Dropped when the
   * write rolls back (forgetUncommitted).
   */
  private change: Record<Counter, number> | null = null;

  constructor(private readonly sql: Sql) {}

  /** The schema migration creates the row, so it always exists. */
  private row(): TotalsRow {
    // Counted changes are stored at the end of their write: reading before then would miss them.
    if (this.change) throw new WaymarkError("INTERNAL", "totals read before the write's counts were stored");
    const row = this.sql<TotalsRow>`SELECT * FROM totals WHERE id = 1`[0];
    if (!row) throw new WaymarkError("INTERNAL", "totals row missing");
    return row;
  }

  read(): Totals {
    const { events: _events, bytes_stored: _bytes, id: _id, synced_seq: _synced, updated_at: _updated, ...totals } = this.row();
    return { ...totals, cost_usd: roundCost(totals.cost_usd) };
  }

  usage(): { events: number; bytes_stored: number } {
    const { events, bytes_stored } = this.row();
    return { events, bytes_stored };
  }

  /** The last event the account index acknowledged, as stored. */
  syncedSeq(): number {
    return this.row().synced_seq;
  }

  /** Stores an acknowledgement outside a write (the alarm's push). */
  saveSyncedSeq(seq: number): void {
    this.sql`UPDATE totals SET synced_seq = max(synced_seq, ${seq}) WHERE id = 1`;
  }

  /**
   * Stores the current write's counts with its events and bytes. Writes that open new work
   * (tasks, logs) are refused past the quota; completing a task or a workflow is always allowed,
   * so work that has started can always be closed.
   */
  countWrite(events: number, bytes: number, enforce: boolean, marks: WriteMarks): void {
    const c = this.change ?? NO_CHANGE;
    this.change = null;
    const [usage] = this.sql<{ events: number; bytes_stored: number }>`
      UPDATE totals SET events = events + ${events}, bytes_stored = bytes_stored + ${bytes},
        tasks = tasks + ${c.tasks}, open_tasks = open_tasks + ${c.open_tasks},
        duration_seconds = duration_seconds + ${c.duration_seconds}, files_changed = files_changed + ${c.files_changed},
        decisions = decisions + ${c.decisions}, issues = issues + ${c.issues}, reviews_needed = reviews_needed + ${c.reviews_needed},
        input_tokens = input_tokens + ${c.input_tokens}, output_tokens = output_tokens + ${c.output_tokens},
        cost_usd = cost_usd + ${c.cost_usd}, synced_seq = max(synced_seq, ${marks.syncedSeq}),
        updated_at = coalesce(${marks.agentWriteAt}, updated_at)
      WHERE id = 1 RETURNING events, bytes_stored`;
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

  /** The write rolled back: its counts go with it. */
  forgetUncommitted(): void {
    this.change = null;
  }

  private count(delta: Partial<Record<Counter, number>>): void {
    const change = this.change ?? { ...NO_CHANGE };
    this.change = change;
    for (const [counter, n] of Object.entries(delta) as [Counter, number][]) change[counter] += n;
  }

  taskStarted(): void {
    this.count({ tasks: 1, open_tasks: 1 });
  }

  taskCompleted(d: CompletedTaskDelta): void {
    this.count({
      open_tasks: -1,
      duration_seconds: d.topLevel ? d.duration : 0,
      files_changed: d.newPaths,
      reviews_needed: d.review ? 1 : 0,
      input_tokens: d.input_tokens,
      output_tokens: d.output_tokens,
      cost_usd: d.cost_usd,
    });
  }

  decisionLogged(): void {
    this.count({ decisions: 1 });
  }

  /** A reviewer's verdict settled a review item (-1) or reopened one it had settled (+1). */
  reviewAnswered(delta: -1 | 1): void {
    this.count({ reviews_needed: delta });
  }

  issueLogged(review: boolean): void {
    this.count({ issues: 1, reviews_needed: review ? 1 : 0 });
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
