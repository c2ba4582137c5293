/**
 * @module workflow/account-outbox
 * Pushes the workflow's new events to its account index (summary, memory documents, webhook
 * notifications, the Insights facts of completed tasks and verdicts) through an outbox: `account_sync.synced_seq` is the last event the index
 * acknowledged, and everything after it is pushed again until taken. The index applies pushes
 * idempotently (documents by entity id, notifications by workflow and seq), so pushing a range
 * twice is harmless, and a failed push never fails a write that is already committed: the
 * object's alarm retries and the next push carries the backlog too.
 *
 * When: events the index must show before the tool answers (a workflow started or completed:
 * resume-by-name and status depend on them) are pushed on the reply path; everything else
 * (tasks, decisions, issues, changed files, milestones) within ACCOUNT_PUSH_DELAY_MS. A push
 * carries everything written before it, so an agent's burst of writes becomes one push instead
 * of one each: under load, the pushes were a fifth of the Worker's CPU, and waiting 2 s instead
 * of 0.5 s for searchable writes took another 5% off. The waits are timers, not an alarm per
 * batch (that cost more than the push it saved); the alarm is the backstop when a timer dies
 * with its process (see afterWrite).
 *
 * The acknowledgement is kept in memory and stored by the next write's own transaction (or the
 * alarm), never by a commit of its own: a commit is a SQLite transaction and an
 * fsync, and storing it right after each push was the costliest statement of a push. Lost with
 * the process, it only makes the next push carry some events the index already has.
 *
 * Cost: each push reads only the new events and the running totals, never the whole workflow;
 * concurrent flushes share one push loop, so a burst of writes becomes one or two pushes. Empty
 * parts of a push are left out, so the index does no work for them.
 */

import type { AccountObject, WorkflowPush } from "../account/account-object";
import { commitsFromEvents } from "../domain/commit-entries";
import { insightFactsFromEvents } from "../domain/insight-facts";
import { documentsFromEvents } from "../domain/memory-documents";
import { pathsFromEvents } from "../domain/path-entries";
import type { ShareInfo } from "../domain/share-status";
import type { WorkflowEvent } from "../domain/view";
import { notificationsFromEvents } from "../domain/webhook-events";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import type { EventLog } from "./event-log";
import type { WorkflowRecords } from "./records";
import type { RunningTotals } from "./totals";

/** How long a failed push waits before the alarm tries again. */
export const ACCOUNT_SYNC_RETRY_MS = 10_000;

/**
 * How long a write's events may wait for others to join their push: how stale search, related
 * work, webhooks and the dashboard's list may be.
 */
export const ACCOUNT_PUSH_DELAY_MS = 2_000;

/** How soon the account index must see a write's events. */
export type PushUrgency = "before_reply" | "batched";

export function pushUrgency(events: readonly WorkflowEvent[]): PushUrgency {
  return events.some((e) => e.type === "workflow.started" || e.type === "workflow.completed") ? "before_reply" : "batched";
}

/** An array, or nothing when it is empty (the index skips absent parts of a push). */
function nonEmpty<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}

export class AccountOutbox {
  private running: Promise<void> | null = null;
  /** A link state the index has not taken yet (a new workflow's first link rides on its first push). */
  private pendingShare: ShareInfo | undefined;
  /** When the next timed push is due (a timer runs for it); later writes due no sooner join it. Reset by every push. */
  private dueAt = Number.POSITIVE_INFINITY;
  /** The alarm this object set as the backstop is due by then (0: none known in this instance). */
  private backstopDueBy = 0;
  /** The last seq the index acknowledged that account_sync does not hold yet (0: none). */
  private unsavedAck = 0;

  constructor(
    private readonly sql: Sql,
    private readonly log: EventLog,
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
    private readonly accountStub: (account: string) => DurableObjectStub<AccountObject>,
    private readonly scheduleRetry: (at: number) => Promise<void>,
  ) {}

  syncedSeq(): number {
    const stored = this.sql<{ synced_seq: number }>`SELECT synced_seq FROM account_sync WHERE id = 1`[0]?.synced_seq ?? 0;
    return Math.max(stored, this.unsavedAck);
  }

  /** Stores the acknowledgement kept in memory; the caller's transaction (a write, the alarm) commits it. */
  saveAck(): void {
    if (this.unsavedAck === 0) return;
    this.sql`INSERT INTO account_sync (id, synced_seq) VALUES (1, ${this.unsavedAck})
      ON CONFLICT (id) DO UPDATE SET synced_seq = max(synced_seq, excluded.synced_seq)`;
    this.unsavedAck = 0;
  }

  pending(): boolean {
    return this.records.workflow() !== null && this.syncedSeq() < this.log.lastSeq();
  }

  /** Pushes everything not yet acknowledged; a flush requested while one runs joins it. */
  flush(): Promise<void> {
    if (!this.running) this.running = this.pushAll().finally(() => (this.running = null));
    return this.running;
  }

  /** The alarm ran: no backstop is due any more, so the next timed push sets one again. */
  backstopFired(): void {
    this.backstopDueBy = 0;
  }

  /** The next push carries this link state (the index then needs no call of its own for it). */
  carryShare(share: ShareInfo): void {
    this.pendingShare = { ...share, token: null };
  }

  /** Pushes within ACCOUNT_PUSH_DELAY_MS, unless a push already due (or one that runs meanwhile) carries these events first. */
  private async pushSoon(): Promise<void> {
    const at = Date.now() + ACCOUNT_PUSH_DELAY_MS;
    if (at >= this.dueAt) return;
    this.dueAt = at;
    await new Promise((resolve) => setTimeout(resolve, ACCOUNT_PUSH_DELAY_MS));
    // Another timer took over (a sooner one) or a push ran since: that push carried these events.
    if (this.dueAt === at) await this.flush();
  }

  /**
   * Pushes a write's events as soon as `urgency` asks; resolves when the tool may answer. A
   * timed push also makes sure the alarm is set within ACCOUNT_SYNC_RETRY_MS: a timer dies with
   * the process (a restart, a deploy), the alarm does not, so the index catches up either way.
   * The alarm is only written when none is due sooner, so a busy workflow sets it about once
   * per ACCOUNT_SYNC_RETRY_MS, not once per write.
   */
  async afterWrite(urgency: PushUrgency, waitUntil: (promise: Promise<void>) => void): Promise<void> {
    if (urgency === "before_reply") {
      await this.flush();
      return;
    }
    // An alarm set here is never moved later (only an earlier one replaces it), so until it is due no write needs to look.
    const now = Date.now();
    if (this.backstopDueBy <= now) {
      this.backstopDueBy = now + ACCOUNT_SYNC_RETRY_MS;
      await this.scheduleRetry(this.backstopDueBy);
    }
    waitUntil(this.pushSoon());
  }

  private async pushAll(): Promise<void> {
    try {
      for (let more = true; more; ) {
        // Anything written from here on is in this push or the next loop.
        this.dueAt = Number.POSITIVE_INFINITY;
        const workflow = this.records.workflow();
        if (!workflow) return;
        // Bounded in bytes too: a page of completed tasks' events is at most one event over LIMITS.READ_PAGE_BYTES.
        const page = this.log.after(this.syncedSeq(), LIMITS.EVENTS_PAGE, LIMITS.READ_PAGE_BYTES);
        if (page.events.length === 0) return;
        const share = this.pendingShare;
        const header = this.records.header();
        const insights = insightFactsFromEvents(page.events, header);
        const push: WorkflowPush = {
          documents: nonEmpty(documentsFromEvents(workflow.id, page.events, (taskId) => this.records.taskContext(taskId))),
          notifications: nonEmpty(notificationsFromEvents(page.events, header)),
          paths: nonEmpty(pathsFromEvents(page.events)),
          commits: nonEmpty(commitsFromEvents(page.events)),
          ...(share ? { share } : {}),
          ...(Object.keys(insights).length > 0 ? { insights } : {}),
        };
        await this.accountStub(workflow.account).recordWorkflow(workflow.account, this.records.summary(this.totals), push);
        if (this.pendingShare === share) this.pendingShare = undefined;
        this.unsavedAck = Math.max(this.unsavedAck, page.next_seq);
        // Events committed while the index answered are pushed by the next loop.
        more = page.has_more || this.log.lastSeq() > page.next_seq;
      }
    } catch (error) {
      console.error("account index push failed; retrying from the alarm", error);
      await this.scheduleRetry(Date.now() + ACCOUNT_SYNC_RETRY_MS);
    }
  }
}
