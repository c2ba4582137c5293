/**
 * @module workflow/account-outbox
 * Pushes the workflow's new events to its account index (summary, memory documents, webhook
 * notifications, path index, the Insights facts of completed tasks and verdicts) through an
 * outbox: the totals row's `synced_seq` is the last event the index acknowledged, and everything
 * after it is pushed again until taken. The index applies pushes idempotently (documents by entity
 * id, notifications by workflow and seq), so pushing a range twice is harmless, and a failed push
 * never fails a write that is already committed: the
 * object's alarm retries and the next push carries the backlog too.
 *
 * When: events the index must show before the tool answers (a workflow started or completed:
 * resume-by-name and status depend on them) are pushed on the reply path; milestones, which the
 * index only counts, ride on the next push (the alarm pushes them within ACCOUNT_LAZY_PUSH_MS if
 * no other write does); everything else (tasks, decisions, issues, changed files) right after
 * the reply, unless a push went
 * out less than ACCOUNT_PUSH_DELAY_MS ago: then the alarm pushes at the end of that window, with
 * whatever else was written meanwhile, so a burst of writes becomes one push per window. No timer
 * waits in between: a timer would keep the object from hibernating (the platform bills its
 * duration meanwhile: a 2 s timer after each write cost more than all the rest of a call); the
 * alarm lets it sleep, and outlives the process, so a push is never lost to a restart. An object
 * that starts with events the index lacks (the process died after a reply, before its push) sets
 * the alarm when it starts.
 *
 * The acknowledgement is kept in memory and stored by the next write's own totals update (or the
 * alarm), never by a commit or a row of its own: lost with the process, it only makes the next
 * push carry some events the index already has.
 *
 * The summary's counts alone (a task's start) may wait for an alarm that is due anyway (a
 * milestone's, a push window's: at most ACCOUNT_LAZY_PUSH_MS away), whose push settles them
 * (account/workflow-index: one summary row written fewer when a completion's push carries them
 * first); with no alarm due they go with the push, so waiting never sets an alarm of its own.
 *
 * Cost: each push reads only the new events and the running totals, never the whole workflow;
 * concurrent flushes share one push loop, which goes on past its first page only for a backlog or
 * for events a reply waits for: a write committed while a push is under way is the window's, so a
 * slow index does not turn each write into a push of its own. Empty parts of a push are left out, so the index does
 * no work for them.
 */

import type { AccountObject, PushAnswer, WorkflowPush } from "../account/account-object";
import { commitsFromEvents } from "../domain/commit-entries";
import type { DeviceUse } from "../domain/device-signature";
import { insightFactsFromEvents } from "../domain/insight-facts";
import { documentsFromEvents } from "../domain/memory-documents";
import { pathsFromEvents } from "../domain/path-entries";
import type { ShareInfo } from "../domain/share-status";
import type { WorkflowEvent } from "../domain/view";
import { notificationsFromEvents } from "../domain/webhook-events";
import { LIMITS } from "../limits";
import type { EventLog } from "./event-log";
import type { WorkflowRecords } from "./records";
import type { RunningTotals } from "./totals";

/** How long a failed push waits before the alarm tries again. */
export const ACCOUNT_SYNC_RETRY_MS = 10_000;

/**
 * At most one push per this window (urgent ones aside): a write within it waits for the window's
 * end, which is how stale search, related work, webhooks and the dashboard's list may be.
 */
export const ACCOUNT_PUSH_DELAY_MS = 2_000;

/**
 * How long a write whose events the index only counts (a milestone: no memory document, no path,
 * no notification, no Insights fact) may wait for a push: it rides on the workflow's next push,
 * or the alarm pushes it by then. The dashboard's "updated" time and counts may lag that long.
 */
export const ACCOUNT_LAZY_PUSH_MS = 60_000;

/** How soon the account index must see a write's events. */
export type PushUrgency = "before_reply" | "batched" | "lazy";

/** Events that give the index nothing but the summary's time and counts. */
const COUNTED_ONLY = new Set<string>(["milestone.logged"]);

export function pushUrgency(events: readonly WorkflowEvent[]): PushUrgency {
  if (events.some((e) => e.type === "workflow.started" || e.type === "workflow.completed")) return "before_reply";
  return events.every((e) => COUNTED_ONLY.has(e.type)) ? "lazy" : "batched";
}

/** The device signatures the workflow accepted (workflow/device-keys): they ride on the push, whose answer says whether its keys are current. */
export interface DeviceUses {
  takeUses(): DeviceUse[];
  returnUses(uses: readonly DeviceUse[]): void;
  noteGeneration(generation: number): void;
}

/** An array, or nothing when it is empty (the index skips absent parts of a push). */
function nonEmpty<T>(items: T[]): T[] | undefined {
  return items.length > 0 ? items : undefined;
}

export class AccountOutbox {
  private running: Promise<void> | null = null;
  /** A link state the index has not taken yet (a new workflow's first link rides on its first push). */
  private pendingShare: ShareInfo | undefined;
  /** When the last push started (0: none in this instance). */
  private lastPushAt = 0;
  /** The alarm this object set for a push is due by then (0: none known in this instance). */
  private alarmDueBy = 0;
  /** The last seq the index acknowledged that the totals row does not hold yet (0: none). */
  private unsavedAck = 0;
  /** The last event a reply waits to see pushed (a workflow's start or completion): a push under way goes on until it is in. */
  private urgentSeq = 0;
  /** The index may have left the summary's counts behind (countsRule; its answer says, once it answered). */
  private countsWaiting = false;
  /** The alarm fired with counts waiting (or not known not to be): the next push settles them (the alarm flushes when this is set). */
  private settleDue = false;

  constructor(
    private readonly log: EventLog,
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
    private readonly accountStub: (account: string) => DurableObjectStub<AccountObject>,
    private readonly scheduleRetry: (at: number) => Promise<void>,
    private readonly devices: DeviceUses,
  ) {}

  syncedSeq(): number {
    return Math.max(this.totals.syncedSeq(), this.unsavedAck);
  }

  /** The acknowledgement kept in memory, for a write to store with its totals (workflow/writer); 0 when none. */
  takeUnsavedAck(): number {
    const seq = this.unsavedAck;
    this.unsavedAck = 0;
    return seq;
  }

  /** Stores the acknowledgement kept in memory outside a write (the alarm). */
  saveAck(): void {
    if (this.unsavedAck === 0) return;
    this.totals.saveSyncedSeq(this.takeUnsavedAck());
  }

  /** Events the index lacks, or a settling push the alarm owes it. */
  pending(): boolean {
    return this.records.workflow() !== null && (this.settleDue || this.syncedSeq() < this.log.lastSeq());
  }

  /** Pushes everything not yet acknowledged; a flush requested while one runs joins it. */
  flush(): Promise<void> {
    if (!this.running) this.running = this.pushAll().finally(() => (this.running = null));
    return this.running;
  }

  /**
   * The alarm ran: none is due any more, so the next write that waits sets one again. Its push
   * settles the counts the index may have left behind: when a push since the last settling one
   * let it, while a push is under way (it may), and in an instance that has not pushed yet (the
   * alarm outlives the process; the one before may have). A settling push that finds the stored
   * summary current writes nothing.
   */
  alarmFired(): void {
    this.alarmDueBy = 0;
    if (this.countsWaiting || this.running || this.lastPushAt === 0) this.settleDue = true;
  }

  /** The next push carries this link state (the index then needs no call of its own for it). */
  carryShare(share: ShareInfo): void {
    this.pendingShare = { ...share, token: null };
  }

  /**
   * After a write: pushes its events now when `urgency` asks (the tool answers after the push);
   * otherwise right after the reply, or, when a push went out within ACCOUNT_PUSH_DELAY_MS (or
   * one is under way), from the alarm at the end of that window. The alarm is written only when
   * none is due by then, so a burst sets it once.
   */
  async afterWrite(urgency: PushUrgency, waitUntil: (promise: Promise<void>) => void): Promise<void> {
    if (urgency === "before_reply") {
      this.urgentSeq = Math.max(this.urgentSeq, this.log.lastSeq());
      await this.flush();
      return;
    }
    const now = Date.now();
    if (urgency === "lazy") {
      // Any alarm already due pushes it; otherwise one at the end of the lazy window (the next push carries it anyway).
      if (this.alarmDueBy > now) return;
      this.alarmDueBy = now + ACCOUNT_LAZY_PUSH_MS;
      await this.scheduleRetry(this.alarmDueBy);
      return;
    }
    const windowEnds = this.lastPushAt + ACCOUNT_PUSH_DELAY_MS;
    if (!this.running && now >= windowEnds) {
      waitUntil(this.flush());
      return;
    }
    const due = Math.max(windowEnds, now);
    if (this.alarmDueBy > now && this.alarmDueBy <= due) return;
    this.alarmDueBy = due;
    await this.scheduleRetry(due);
  }

  /**
   * What the index may do with the summary's counts (account/workflow-index): the alarm's push
   * settles them; while an alarm this instance set is due (at most ACCOUNT_LAZY_PUSH_MS away: a
   * milestone's, a push window's) they may wait for it, as its push will settle them; otherwise
   * they are stored at once, so waiting never costs an alarm of its own.
   */
  private countsRule(settle: boolean): WorkflowPush["counts"] {
    if (settle) return "settle";
    if (this.alarmDueBy <= Date.now()) return undefined;
    this.countsWaiting = true;
    return "may_wait";
  }

  private async pushAll(): Promise<void> {
    try {
      for (let more = true; more; ) {
        this.lastPushAt = Date.now();
        const workflow = this.records.workflow();
        if (!workflow) return;
        // Bounded in bytes too: a page of completed tasks' events is at most one event over LIMITS.READ_PAGE_BYTES.
        const page = this.log.after(this.syncedSeq(), LIMITS.EVENTS_PAGE, LIMITS.READ_PAGE_BYTES);
        // A settling push carries the summary alone when no event is new.
        const settle = this.settleDue;
        if (page.events.length === 0 && !settle) return;
        const share = this.pendingShare;
        const uses = this.devices.takeUses();
        const header = this.records.header();
        const insights = insightFactsFromEvents(page.events, header);
        const push: WorkflowPush = {
          documents: nonEmpty(documentsFromEvents(workflow.id, page.events, (taskId) => this.records.taskContext(taskId))),
          notifications: nonEmpty(notificationsFromEvents(page.events, header)),
          paths: nonEmpty(pathsFromEvents(page.events)),
          commits: nonEmpty(commitsFromEvents(page.events)),
          device_uses: nonEmpty(uses),
          ...(share ? { share } : {}),
          ...(Object.keys(insights).length > 0 ? { insights } : {}),
        };
        const counts = this.countsRule(settle);
        if (counts) push.counts = counts;
        let answer: PushAnswer | undefined;
        try {
          answer = await this.accountStub(workflow.account).recordWorkflow(workflow.account, this.records.summary(this.totals), push);
        } catch (error) {
          this.devices.returnUses(uses);
          throw error;
        }
        // An account from before the answer existed answers nothing.
        if (answer) this.devices.noteGeneration(answer.device_generation);
        if (this.pendingShare === share) this.pendingShare = undefined;
        if (settle) this.settleDue = false;
        // The index says whether it left the counts behind: a push that stored the row (a completion's,
        // with its paths) settled them as the alarm's would, so the alarm makes no push for them.
        if (answer?.counts !== undefined) this.countsWaiting = answer.counts === "behind";
        else if (settle) this.countsWaiting = false;
        // A settling push of the summary alone acknowledges nothing new (storing it again would be a row written).
        if (page.events.length > 0) this.unsavedAck = Math.max(this.unsavedAck, page.next_seq);
        // Events committed while the index answered wait for the window's alarm their writes set (afterWrite),
        // unless a reply waits for them: pushing them at once made a push per write whenever the index was slow.
        // A settling push the alarm asked for while this one was under way goes out too.
        more = page.has_more || this.syncedSeq() < this.urgentSeq || this.settleDue;
      }
    } catch (error) {
      console.error("account index push failed; retrying from the alarm", error);
      await this.scheduleRetry(Date.now() + ACCOUNT_SYNC_RETRY_MS);
    }
  }
}
