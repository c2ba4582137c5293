/**
 * @module workflow/event-log
 * The workflow's append-only event log. `seq` is gap-free: rows are never deleted and every
 * append happens inside the transaction of the write it records, so a follower that has seen
 * seq n has seen everything up to n.
 */
import type { EventType, WorkflowEvent } from "../domain/view";
import type { Sql } from "../storage/sql";

export interface EventsPage {
  events: WorkflowEvent[];
  next_seq: number;
  has_more: boolean;
}

/** What an event adds on the wire around its data (seq, time, type, task id, JSON framing). */
const EVENT_ENVELOPE_BYTES = 200;

type EventRow = { seq: number; at: number; type: string; task_id: string | null; data: string };

export class EventLog {
  constructor(private readonly sql: Sql) {}

  /** Appends one event and returns it with its size in bytes, for the caller's fan-out and quota. */
  append(now: number, type: EventType, taskId: string | null, data: WorkflowEvent["data"]): { event: WorkflowEvent; bytes: number } {
    const seq = this.lastSeq() + 1;
    const json = JSON.stringify(data);
    this.sql`INSERT INTO events (seq, at, type, task_id, data) VALUES (${seq}, ${now}, ${type}, ${taskId}, ${json})`;
    return { event: { seq, at: new Date(now).toISOString(), type, task_id: taskId, data }, bytes: json.length };
  }

  lastSeq(): number {
    return this.sql<{ seq: number | null }>`SELECT max(seq) AS seq FROM events`[0]?.seq ?? 0;
  }

  /**
   * Events with seq > fromSeq, oldest first: at most `limit` events and, past the first
   * event, at most `maxBytes` of event data, so a page never holds a whole large log.
   */
  after(fromSeq: number, limit: number, maxBytes = Number.POSITIVE_INFINITY): EventsPage {
    const rows = this.sql<EventRow>`
      SELECT seq, at, type, task_id, data FROM events WHERE seq > ${fromSeq} ORDER BY seq LIMIT ${limit + 1}`;
    const events: WorkflowEvent[] = [];
    let bytes = 0;
    for (const row of rows.slice(0, limit)) {
      bytes += row.data.length + EVENT_ENVELOPE_BYTES;
      if (events.length > 0 && bytes > maxBytes) break;
      events.push({
        seq: row.seq,
        at: new Date(row.at).toISOString(),
        type: row.type as EventType,
        task_id: row.task_id,
        data: JSON.parse(row.data) as WorkflowEvent["data"],
      });
    }
    const next = events.at(-1)?.seq ?? fromSeq;
    return { events, next_seq: next, has_more: events.length < rows.length };
  }
}
