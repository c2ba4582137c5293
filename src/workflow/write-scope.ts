/**
 * @module workflow/write-scope
 * What a write's mutation can do besides its statements (workflow/writer runs it): record events
 * and count the bytes it stored. Its own module so that the collaborators a write runs
 * (lifecycle, feedback) and the writer itself depend on it, never on each other.
 */
import type { EventType, WorkflowEvent } from "../domain/view";

export interface WriteScope {
  /** The write's time (ms): never before the last event's, so the log's times never go back. */
  now: number;
  /** The seq of the last event appended so far (the write's own included). */
  lastSeq(): number;
  /**
   * Appends an event; returns its seq. `signed`: a device-signed payload the write accepted, kept
   * in the event's own row (workflow/device-signed: one that fits one part).
   */
  emit(type: EventType, taskId: string | null, data: WorkflowEvent["data"], signed?: string): number;
  /**
   * The same for an event whose data a row of the write keeps too (a log entry, a task as it
   * stands): the bytes are counted for the row as well.
   */
  emitWithRow(type: EventType, taskId: string | null, data: WorkflowEvent["data"], signed?: string): number;
  countBytes(bytes: number): void;
}
