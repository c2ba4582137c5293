/**
 * @module workflow/account-outbox
 * Pushes the workflow's new events to its account index (summary, memory documents, webhook
 * notifications) through an outbox: `account_sync.synced_seq` is the last event the index
 * acknowledged, and everything after it is pushed again until taken. The index applies pushes
 * idempotently (documents by entity id, notifications by workflow and seq), so pushing a range
 * twice is harmless, and a failed push never fails a write that is already committed: the
 * object's alarm retries and the next push carries the backlog too.
 *
 * Cost: each push reads only the new events and the running totals, never the whole workflow;
 * concurrent flushes share one push loop, so a burst of writes becomes one or two pushes.
 */
import { documentsFromEvents } from "../account/memory";
import type { AccountObject, WorkflowPush } from "../account/object";
import { pathsFromEvents } from "../account/path-index";
import { notificationsFromEvents } from "../account/webhooks";
import type { WorkflowEvent } from "../domain/view";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import type { EventLog } from "./event-log";
import type { WorkflowRecords } from "./records";
import type { RunningTotals } from "./totals";

/** How long a failed push waits before the alarm tries again. */
export const ACCOUNT_SYNC_RETRY_MS = 10_000;

/** Events the account must have seen before the tool answers: resume-by-name and status depend on them. */
export function needsPromptPush(events: readonly WorkflowEvent[]): boolean {
  return events.some((e) => e.type === "workflow.started" || e.type === "workflow.completed");
}

export class AccountOutbox {
  private running: Promise<void> | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly log: EventLog,
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
    private readonly accountStub: (account: string) => DurableObjectStub<AccountObject>,
    private readonly scheduleRetry: (at: number) => Promise<void>,
  ) {}

  syncedSeq(): number {
    return this.sql<{ synced_seq: number }>`SELECT synced_seq FROM account_sync WHERE id = 1`[0]?.synced_seq ?? 0;
  }

  pending(): boolean {
    return this.records.workflow() !== null && this.syncedSeq() < this.log.lastSeq();
  }

  /** Pushes everything not yet acknowledged; a flush requested while one runs joins it. */
  flush(): Promise<void> {
    if (!this.running) this.running = this.pushAll().finally(() => (this.running = null));
    return this.running;
  }

  private async pushAll(): Promise<void> {
    try {
      for (;;) {
        const workflow = this.records.workflow();
        if (!workflow) return;
        const page = this.log.after(this.syncedSeq(), LIMITS.EVENTS_PAGE);
        if (page.events.length === 0) return;
        const push: WorkflowPush = {
          documents: documentsFromEvents(workflow.id, page.events, (taskId) => this.records.taskContext(taskId)),
          notifications: notificationsFromEvents(page.events, this.records.header()),
          paths: pathsFromEvents(page.events),
        };
        await this.accountStub(workflow.account).recordWorkflow(workflow.account, this.records.summary(this.totals), push);
        this.sql`INSERT INTO account_sync (id, synced_seq) VALUES (1, ${page.next_seq})
          ON CONFLICT (id) DO UPDATE SET synced_seq = max(synced_seq, excluded.synced_seq)`;
      }
    } catch (error) {
      console.error("account index push failed; retrying from the alarm", error);
      await this.scheduleRetry(Date.now() + ACCOUNT_SYNC_RETRY_MS);
    }
  }
}
