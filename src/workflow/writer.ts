/**
 * @module workflow/writer
 * How every write of a workflow runs: authorize, replay or mutate, count, commit, fan out.
 *
 * The invariant live followers rely on is enforced here: the mutation runs synchronously in
 * one transaction and its events are broadcast before the first `await` after the commit, so
 * no other request can interleave between a commit and its broadcast (followers see events in
 * seq order, each once). The account index is updated off the reply path (milestones batched),
 * except for the events resume-by-name depends on (workflow/account-outbox).
 */
import type { WorkflowEvent } from "../domain/view";
import { ok, type Result, WaymarkError } from "../errors";
import { type AccountOutbox, pushUrgency } from "./account-outbox";
import type { EventLog } from "./event-log";
import type { FeedbackDigest } from "./feedback";
import type { LiveFollowers } from "./followers";
import { type IdempotencyRecords, requestHash } from "./idempotency";
import type { RunningTotals } from "./totals";
import type { WriteScope } from "./write-scope";

export interface WriteOptions {
  /** Writes that open new work are refused past the workflow's quota; completions never are. */
  enforceQuota: boolean;
  /**
   * Whether the result carries the reviewer feedback the agent has not seen yet (taken, so marked
   * delivered, in the write's own transaction: no second call to this object per tool call).
   * Every write is the agent's except the owner's own feedback, which passes false.
   */
  deliverFeedback?: boolean;
}

/** A successful write's value, with the feedback it delivers (absent when there is none). */
export type WithFeedback<T extends object> = T & { reviewer_feedback?: FeedbackDigest };

/** Takes the undelivered feedback that fits one tool result, marking it delivered; null when none. */
export type TakeFeedback = (now: number) => FeedbackDigest | null;

/** A collaborator that keeps what a write changed in memory: a rolled-back write must not leave it behind. */
export interface KeepsUncommitted {
  forgetUncommitted(): void;
}

export class Writer {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly idempotency: IdempotencyRecords,
    private readonly log: EventLog,
    private readonly totals: RunningTotals,
    private readonly followers: LiveFollowers,
    private readonly outbox: AccountOutbox,
    private readonly takeFeedback: TakeFeedback,
    private readonly memories: readonly KeepsUncommitted[],
  ) {}

  /**
   * Runs a mutation atomically. `authorize` runs first, inside the transaction, so an
   * idempotent replay is only ever returned to the workflow's owner. With an idempotency key a
   * retry of the same request returns the stored first result; the same key with other input
   * is a CONFLICT. A WaymarkError thrown anywhere rolls everything back and becomes the result.
   * A successful result (a replay too) carries the feedback it delivers (WriteOptions.deliverFeedback).
   */
  async run<C, T extends object>(
    tool: string,
    input: { idempotency_key?: string },
    authorize: () => C,
    mutate: (context: C, scope: WriteScope) => T,
    options: WriteOptions = { enforceQuota: true },
  ): Promise<Result<WithFeedback<T>>> {
    // Only a keyed request can be replayed, so only it needs its input hashed.
    const hash = input.idempotency_key === undefined ? "" : await requestHash(tool, input);
    let events: WorkflowEvent[] = [];
    let result: Result<WithFeedback<T>>;
    const withFeedback = (value: T, now: number): WithFeedback<T> => {
      const digest = options.deliverFeedback === false ? null : this.takeFeedback(now);
      // Absent rather than null when there is none: the field is then simply not in the result.
      const carried: WithFeedback<T> = value;
      return digest ? { ...carried, reviewer_feedback: digest } : carried;
    };
    try {
      result = this.ctx.storage.transactionSync(() => {
        const context = authorize();
        const replayed = this.idempotency.replay<T>(tool, input.idempotency_key, hash);
        if (replayed) return replayed.ok ? ok(withFeedback(replayed.value, Date.now())) : replayed;
        const written: WorkflowEvent[] = [];
        let bytes = 0;
        /** Appends an event, its bytes counted `copies` times (its row, and a row that keeps the same data). */
        const append = (copies: 1 | 2, ...[type, taskId, data, signed]: Parameters<WriteScope["emit"]>) => {
          const appended = this.log.append(scope.now, type, taskId, data, signed);
          written.push(appended.event);
          bytes += copies * appended.bytes;
          return appended.event.seq;
        };
        const scope: WriteScope = {
          now: Math.max(Date.now(), this.log.lastAt()),
          lastSeq: () => this.log.lastSeq(),
          emit: (...args) => append(1, ...args),
          emitWithRow: (...args) => append(2, ...args),
          countBytes: (n) => {
            bytes += n;
          },
        };
        const value = mutate(context, scope);
        // The workflow's updated_at is the agent's last write: a reviewer's feedback leaves it.
        const agentWrite = written.some((event) => event.type !== "feedback.created");
        this.totals.countWrite(
          written.length,
          bytes,
          options.enforceQuota,
          { agentWriteAt: agentWrite ? scope.now : null, syncedSeq: this.outbox.takeUnsavedAck() },
          (totals) => this.log.seal(totals),
          () => this.log.lastSeq(),
        );
        this.idempotency.record(tool, input.idempotency_key, hash, value, scope.now);
        events = written;
        return ok(withFeedback(value, scope.now));
      });
    } catch (error) {
      for (const memory of this.memories) memory.forgetUncommitted();
      if (error instanceof WaymarkError) return error.toFailure();
      throw error;
    }
    // No await between the commit above and this broadcast.
    this.followers.broadcast(events);
    if (events.length > 0) await this.outbox.afterWrite(pushUrgency(events), (pushed) => this.ctx.waitUntil(pushed));
    return result;
  }
}
