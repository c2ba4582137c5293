/**
 * @module workflow/totals
 * The workflow's running totals, stored once at the end of each write's transaction (with
 * everything the write counted) on the write's last event, or on the one totals row when the
 * write appended none: reading them costs the same for 1 task or 5,000, and so does every write,
 * and a write spends no row written on them. Nothing is kept only in memory: an object that
 * restarts reads them back from where the last write stored them (a copy is kept in memory meanwhile, so a write reads none). Also the per-workflow quotas (events, bytes stored), which are counted here,
 * and two marks every write would otherwise spend a row written on (each is billed): the time of
 * the agent's last write (the workflow's updated_at) and the account outbox's position.
 */

import { roundCost, type Totals } from "../domain/view";
import { type Failure, fail, WaymarkError } from "../errors";
import { LIMITS } from "../limits";

/** The JSON of the totals a write's last event carries: fourteen numbers and their names, under 400 bytes. */
const SEALED_TOTALS_BYTES = 400;

import type { Sql } from "../storage/sql";

/** The totals as stored: on the totals row (with `id` and `seq`) or as the JSON on a write's last event. */
type StoredTotals = { [K in keyof Totals]: Totals[K] } & {
  events: number;
  bytes_stored: number;
  synced_seq: number;
  updated_at: number | null;
};
/** The row as stored: `device_keys` is the device keys' copy kept on it (workflow/device-keys), no total. */
/** The row's columns that are not totals: its key, its seq, the device keys' copy and (v31) the schema's version. */
type TotalsRow = StoredTotals & { id: number; seq: number; device_keys: string | null; schema_version: number };

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
  /**
   * The stored totals as the last read or committed write left them: only this object writes
   * them, so a write reads no row for them (two statements and a JSON parse per write). A write
   * that rolls back forgets them (forgetUncommitted), and they are read again.
   */
  private kept: StoredTotals | null = null;

  constructor(private readonly sql: Sql) {}

  /**
   * The totals after the last write: the JSON its last event carries, or the totals row when that
   * is newer (a write without events, a migration, an object whose events predate the column).
   * The schema creates the row, so it always exists; only events after its `seq` are looked at.
   */
  private row(): StoredTotals {
    // Counted changes are stored at the end of their write: reading before then would miss them.
    if (this.change) throw new WaymarkError("INTERNAL", "totals read before the write's counts were stored");
    if (this.kept) return this.kept;
    this.kept = this.stored();
    return this.kept;
  }

  private stored(): StoredTotals {
    const row = this.sql<TotalsRow>`SELECT * FROM totals WHERE id = 1`[0];
    if (!row) throw new WaymarkError("INTERNAL", "totals row missing");
    const { id: _id, seq, device_keys: _keys, schema_version: _version, ...stored } = row;
    const last = this.sql<{ totals: string }>`
      SELECT totals FROM events WHERE seq > ${seq} AND totals IS NOT NULL ORDER BY seq DESC LIMIT 1`[0];
    if (!last) return stored;
    const carried = JSON.parse(last.totals) as StoredTotals;
    // The alarm's acknowledgements are stored on the row between writes.
    return { ...carried, synced_seq: Math.max(carried.synced_seq, stored.synced_seq) };
  }

  read(): Totals {
    const { events: _events, bytes_stored: _bytes, synced_seq: _synced, updated_at: _updated, ...totals } = this.row();
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
    if (this.kept) this.kept = { ...this.kept, synced_seq: Math.max(this.kept.synced_seq, seq) };
  }

  /**
   * Stores the current write's counts with its events and bytes: on the write's last event
   * (`seal`, no row written of their own), or on the totals row when the write appended none
   * (`lastSeq`: the log's last event, which the row is then as new as). Writes that open new work
   * (tasks, logs) are refused past the quota; completing a task or a workflow is always allowed,
   * so work that has started can always be closed.
   */
  countWrite(
    events: number,
    bytes: number,
    enforce: boolean,
    marks: WriteMarks,
    seal: (totals: string) => boolean,
    lastSeq: () => number,
  ): void {
    const c = this.change ?? NO_CHANGE;
    this.change = null;
    const before = this.row();
    const next: StoredTotals = {
      tasks: before.tasks + c.tasks,
      open_tasks: before.open_tasks + c.open_tasks,
      duration_seconds: before.duration_seconds + c.duration_seconds,
      files_changed: before.files_changed + c.files_changed,
      decisions: before.decisions + c.decisions,
      issues: before.issues + c.issues,
      reviews_needed: before.reviews_needed + c.reviews_needed,
      input_tokens: before.input_tokens + c.input_tokens,
      output_tokens: before.output_tokens + c.output_tokens,
      cost_usd: before.cost_usd + c.cost_usd,
      events: before.events + events,
      bytes_stored: before.bytes_stored + bytes,
      synced_seq: Math.max(before.synced_seq, marks.syncedSeq),
      updated_at: marks.agentWriteAt ?? before.updated_at,
    };
    // The totals ride on the write's last event: their JSON is what that row keeps besides the event.
    if (events > 0) next.bytes_stored += SEALED_TOTALS_BYTES;
    if (!seal(JSON.stringify(next))) {
      this.sql`UPDATE totals SET tasks = ${next.tasks}, open_tasks = ${next.open_tasks}, duration_seconds = ${next.duration_seconds},
        files_changed = ${next.files_changed}, decisions = ${next.decisions}, issues = ${next.issues},
        reviews_needed = ${next.reviews_needed}, input_tokens = ${next.input_tokens}, output_tokens = ${next.output_tokens},
        cost_usd = ${next.cost_usd}, events = ${next.events}, bytes_stored = ${next.bytes_stored}, synced_seq = ${next.synced_seq},
        updated_at = ${next.updated_at}, seq = ${lastSeq()}
      WHERE id = 1`;
    }
    this.kept = next;
    if (!enforce) return;
    if (next.events > LIMITS.WORKFLOW_EVENTS) {
      throw new WaymarkError(
        "QUOTA_EXCEEDED",
        `workflow: at most ${LIMITS.WORKFLOW_EVENTS} events per workflow (this one has ${next.events}); complete it and start another`,
      );
    }
    if (next.bytes_stored > LIMITS.WORKFLOW_BYTES) {
      throw new WaymarkError(
        "QUOTA_EXCEEDED",
        `workflow: at most ${LIMITS.WORKFLOW_BYTES} bytes stored per workflow (this one stores ${next.bytes_stored}); complete it and start another`,
      );
    }
  }

  /** The write rolled back: its counts go with it. */
  forgetUncommitted(): void {
    this.change = null;
    this.kept = null;
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
