/**
 * @module workflow/event-log
 * The workflow's append-only event log. `seq` is gap-free: rows are never deleted and every
 * append happens inside the transaction of the write it records, so a follower that has seen
 * seq n has seen everything up to n. Each event also carries the hash chain of
 * @waymark/protocol/chain (its hash covers the previous one), so an export can be verified
 * offline against the head the page shows. The last event of each write also carries the
 * workflow's running totals after it (column `totals`, never exported: workflow/totals), so a
 * write stores them without a row of their own.
 */
import { eventHash, genesisHash } from "@waymark/protocol/chain";
import type { EventsPage } from "@waymark/protocol/views/events";
import { utf8Length } from "../domain/stored-files";
import type { EventType, WorkflowEvent } from "../domain/view";
import { isoTime } from "../iso-time";
import type { Sql } from "../storage/sql";

export type { EventsPage } from "@waymark/protocol/views/events";

/** What an event adds on the wire around its data (seq, time, type, task id, JSON framing). */
const EVENT_ENVELOPE_BYTES = 200;
/** What an event's row keeps besides its data, for the workflow's byte quota: seq, time, type, task id and the 64-character hash. */
const EVENT_ROW_BYTES = 130;

type EventRow = { seq: number; at: number; type: string; task_id: string | null; data: string; hash: string | null };

export interface ChainHead {
  algorithm: "sha256";
  genesis: string;
  head: string;
  events: number;
}

type PendingEvent = { seq: number; at: number; type: EventType; taskId: string | null; json: string; hash: string; signed: string | null };

export class EventLog {
  /**
   * The last event's seq and hash once read: only append moves them, so an append costs no
   * query for its predecessor. A write that rolls back forgets them (forgetUncommitted), as its
   * appends are undone with it.
   */
  private head: { seq: number; hash: string; at: number } | null = null;
  /**
   * The write's latest event, inserted by the next append or by seal: the last event of a write
   * carries the workflow's running totals after it (workflow/totals) in the same row written.
   */
  private pending: PendingEvent | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly workflowId: () => string,
  ) {}

  /**
   * Appends one event and returns it with the bytes its row keeps (UTF-8), for the workflow's quota.
   * `signed`: the device-signed payload the write kept with it, stored in the same row (column
   * `signed`, never part of the event itself or its hash; workflow/device-signed reads it).
   */
  append(
    now: number,
    type: EventType,
    taskId: string | null,
    data: WorkflowEvent["data"],
    signed?: string,
  ): { event: WorkflowEvent; bytes: number } {
    const last = this.last();
    const seq = last.seq + 1;
    const json = JSON.stringify(data);
    const event: WorkflowEvent = { seq, at: isoTime(now), type, task_id: taskId, data };
    // Hashed from the stored bytes, exactly as an export will carry them.
    const hash = eventHash(last.hash, { ...event, data: JSON.parse(json) });
    this.insertPending(null);
    this.pending = { seq, at: now, type, taskId, json, hash, signed: signed ?? null };
    this.head = { seq, hash, at: now };
    return { event: { ...event, hash }, bytes: utf8Length(json) + EVENT_ROW_BYTES };
  }

  /**
   * Inserts the write's last event with `totals` (JSON: the running totals after the write), at
   * the end of the write; false when the write appended no event (the totals are stored elsewhere).
   */
  seal(totals: string): boolean {
    if (!this.pending) return false;
    this.insertPending(totals);
    return true;
  }

  private insertPending(totals: string | null): void {
    const e = this.pending;
    if (!e) return;
    this.pending = null;
    this.sql`INSERT INTO events (seq, at, type, task_id, data, hash, totals, signed)
      VALUES (${e.seq}, ${e.at}, ${e.type}, ${e.taskId}, ${e.json}, ${e.hash}, ${totals}, ${e.signed})`;
  }

  /** The write that appended since the last commit rolled back: the head is read again. */
  forgetUncommitted(): void {
    this.head = null;
    this.pending = null;
  }

  lastSeq(): number {
    if (this.head) return this.head.seq;
    return this.sql<{ seq: number | null }>`SELECT max(seq) AS seq FROM events`[0]?.seq ?? 0;
  }

  /**
   * The time of the last event (ms; 0 before the first): a write is timed no earlier, so the log's
   * times never go back even if the clock does (a task's log entries are found by time from its
   * start: workflow/task-logs).
   */
  lastAt(): number {
    return this.last().at;
  }

  chain(): ChainHead {
    const last = this.last();
    return { algorithm: "sha256", genesis: genesisHash(this.workflowId()), head: last.hash, events: last.seq };
  }

  /**
   * Chains events written before the log was hashed, oldest first. Asked each time the object
   * starts; only the first start after the migration that added the column finds any (later
   * appends chain as they go).
   */
  backfillChain(): void {
    // Every append is hashed and the backfill runs oldest first before any write, so an unhashed
    // event leaves the last one unhashed: one row read when the object starts, not every event.
    const last = this.sql<{ hash: string | null }>`SELECT hash FROM events ORDER BY seq DESC LIMIT 1`[0];
    if (last === undefined || last.hash !== null || this.workflowId() === "") return;
    let previous = genesisHash(this.workflowId());
    for (const row of this.sql<EventRow>`SELECT seq, at, type, task_id, data, hash FROM events ORDER BY seq`) {
      const hash =
        row.hash ??
        eventHash(previous, {
          seq: row.seq,
          at: isoTime(row.at),
          type: row.type,
          task_id: row.task_id,
          data: JSON.parse(row.data),
        });
      if (row.hash === null) this.sql`UPDATE events SET hash = ${hash} WHERE seq = ${row.seq}`;
      previous = hash;
    }
    this.head = null;
  }

  private last(): { seq: number; hash: string; at: number } {
    if (this.head) return this.head;
    const row = this.sql<{ seq: number; hash: string | null; at: number }>`SELECT seq, hash, at FROM events ORDER BY seq DESC LIMIT 1`[0];
    // The genesis is not kept: it depends on the workflow id, which a write may be creating.
    if (!row) return { seq: 0, hash: genesisHash(this.workflowId()), at: 0 };
    this.head = { seq: row.seq, hash: row.hash ?? "", at: row.at };
    return this.head;
  }

  /**
   * Events with seq > fromSeq, oldest first: at most `limit` events and, past the first
   * event, at most `maxBytes` of event data, so a page never holds a whole large log.
   */
  after(fromSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): EventsPage {
    const rows = this.sql<EventRow>`
      SELECT seq, at, type, task_id, data, hash FROM events WHERE seq > ${fromSeq} ORDER BY seq LIMIT ${limit + 1}`;
    const events: WorkflowEvent[] = [];
    let bytes = 0;
    for (const row of rows.slice(0, limit)) {
      bytes += row.data.length + EVENT_ENVELOPE_BYTES;
      if (events.length > 0 && bytes > maxBytes) break;
      events.push({
        seq: row.seq,
        at: isoTime(row.at),
        type: row.type as EventType,
        task_id: row.task_id,
        data: JSON.parse(row.data) as WorkflowEvent["data"],
        ...(row.hash === null ? {} : { hash: row.hash }),
      });
    }
    const next = events.at(-1)?.seq ?? fromSeq;
    return { events, next_seq: next, has_more: events.length < rows.length };
  }
}
