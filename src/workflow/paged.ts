/**
 * @module workflow/paged
 * The Worker's side of the paged reads: async generators that ask the workflow object for one
 * bounded page at a time and yield its items, so a renderer can stream a workflow of any size
 * while holding at most one page. A page that fails (a link revoked mid-read, a bad cursor)
 * throws a PagedReadError carrying the object's code and message.
 */
import type { Reader, TaskEntry, TaskPage, WorkflowEvent } from "../domain/view";
import type { ErrorCode, Result } from "../errors";
import { LIMITS } from "../limits";
import type { EventsPage } from "./event-log";
import type { WorkflowObject } from "./object";
import type { RowsPage } from "./reader";
import type { RecordKind, RecordView } from "./records";

type Stub = Pick<DurableObjectStub<WorkflowObject>, "readTasks" | "readRows" | "events">;

export class PagedReadError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new PagedReadError(result.code, result.message);
  return result.value;
}

export interface PagedOptions {
  /** Entries asked for per page (at most LIMITS.READ_PAGE_ITEMS; the object also bounds each page in bytes). */
  pageSize?: number;
  /** Where to start: a next_cursor from an earlier page; absent or null for the first. */
  cursor?: string | null;
  /** List only each task's first files (a page's bound; the entry counts the rest in files_unlisted). */
  filesPerTask?: number;
}

/** The timeline, one TaskEntry at a time (top-level tasks by start, each followed depth-first by its subtasks). */
export async function* taskEntries(stub: Stub, reader: Reader, opts: PagedOptions = {}): AsyncGenerator<TaskEntry> {
  let cursor = opts.cursor ?? null;
  do {
    const page = await timelinePage(stub, reader, { ...opts, cursor });
    yield* page.entries;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

/** One page of the timeline (what a page of the shared page or owner view shows). */
export async function timelinePage(stub: Stub, reader: Reader, opts: PagedOptions = {}): Promise<TaskPage> {
  return unwrap(await stub.readTasks(reader, opts.cursor ?? null, opts.pageSize ?? LIMITS.READ_PAGE_ITEMS, opts.filesPerTask));
}

/** One of the whole view's arrays (tasks by start, logs by creation), a page at a time (logs with their tasks' names). */
export async function* recordPages(stub: Stub, reader: Reader, kind: RecordKind, opts: PagedOptions = {}): AsyncGenerator<RowsPage> {
  let cursor = opts.cursor ?? null;
  do {
    const page: RowsPage = unwrap(await stub.readRows(reader, kind, cursor, opts.pageSize ?? LIMITS.READ_PAGE_ITEMS));
    yield page;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

/** One of the whole view's arrays, one row at a time. */
export async function* recordRows<T extends RecordView>(
  stub: Stub,
  reader: Reader,
  kind: RecordKind,
  opts: PagedOptions = {},
): AsyncGenerator<T> {
  for await (const page of recordPages(stub, reader, kind, opts)) yield* page.rows as T[];
}

/** The events with seq in (fromSeq, toSeq], oldest first: an export stops at the chain head its head read. */
export async function* eventRange(
  stub: Stub,
  reader: Reader,
  fromSeq: number,
  toSeq: number,
  pageSize = LIMITS.EVENTS_PAGE,
): AsyncGenerator<WorkflowEvent> {
  let after = fromSeq;
  while (after < toSeq) {
    const page = unwrap(await stub.events(reader, after, Math.min(pageSize, toSeq - after)));
    for (const event of page.events) if (event.seq <= toSeq) yield event;
    if (page.events.length === 0) return;
    after = page.next_seq;
  }
}

/**
 * Every event from the first to the log's end as the first page found it, oldest first: read
 * after the pages of an export's records, so the events cover every state those pages showed.
 */
export async function* eventsToEnd(stub: Stub, reader: Reader, pageSize = LIMITS.EVENTS_PAGE): AsyncGenerator<WorkflowEvent> {
  const first: EventsPage & { last_seq: number } = unwrap(await stub.events(reader, 0, pageSize));
  const end = first.last_seq;
  let page: EventsPage = first;
  for (;;) {
    for (const event of page.events) if (event.seq <= end) yield event;
    if (page.events.length === 0 || page.next_seq >= end) return;
    page = unwrap(await stub.events(reader, page.next_seq, Math.min(pageSize, end - page.next_seq)));
  }
}
