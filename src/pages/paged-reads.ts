/**
 * @module pages/paged-reads
 * The Worker's side of the paged reads: async generators that ask the workflow object for one
 * bounded page at a time and yield its items, so a renderer can stream a workflow of any size
 * while holding at most one page. A page that fails (a link revoked mid-read, a bad cursor)
 * throws a PagedReadError carrying the object's code and message.
 */
import type { Reader, TaskEntry, TaskPage, WorkflowEvent } from "../domain/view";
import type { ErrorCode, Result } from "../errors";
import { LIMITS } from "../limits";
import type { EventsPage } from "../workflow/event-log";
import type { FilesPage, RowsPage } from "../workflow/reader";
import type { RecordKind, RecordView } from "../workflow/records";
import type { FileList, FileListItem } from "../workflow/task-files";
import type { WorkflowObject } from "../workflow/workflow-object";

type Stub = Pick<DurableObjectStub<WorkflowObject>, "readTasks" | "readRows" | "readFiles" | "events">;

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

/** One list of a task's record (FilesChanged.more: a task's view names only its first files), one item at a time. */
export async function* fileItems(stub: Stub, reader: Reader, taskId: string, list: FileList): AsyncGenerator<FileListItem> {
  let cursor: string | null = null;
  do {
    const page: FilesPage = unwrap(await stub.readFiles(reader, taskId, list, cursor, LIMITS.FILE_PAGE_ITEMS));
    yield* page.items;
    cursor = page.next_cursor;
  } while (cursor !== null);
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
