/**
 * @module workflow/cursor
 * The cursors of the paged reads (workflow/reader): opaque to callers (base64url of a small
 * JSON position) but validated on the way back in, so a mangled or forged cursor is a clear
 * `cursor:` error and never reaches a query as anything but a bound value.
 */
import { RECORD_KINDS } from "@waymark/protocol/export-members";
import { z } from "zod";
import { WaymarkError } from "../errors";
import type { RecordKind, RowPosition } from "./records";
import { FILE_LISTS, type FileList } from "./task-files";

const ROW_ID = /^[a-z]{2}_[a-z2-7_]{1,64}$/;

const timelineCursor = z.object({ v: z.literal(1), after: z.string().regex(ROW_ID) }).strict();
const rowsCursor = z
  .object({
    v: z.literal(1),
    kind: z.enum(RECORD_KINDS),
    at: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    id: z.string().regex(ROW_ID),
  })
  .strict();

const filesCursor = z
  .object({
    v: z.literal(1),
    task: z.string().regex(ROW_ID),
    list: z.enum(FILE_LISTS),
    after: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  })
  .strict();

const encode = (position: object) => btoa(JSON.stringify(position)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

/** What every refused cursor says: callers pass next_cursor through unchanged. */
export const BAD_CURSOR = "cursor: not a cursor this read gave out (pass next_cursor unchanged, or null for the first page)";

function decode(cursor: string): unknown {
  if (cursor.length > 512 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new WaymarkError("INPUT_VALIDATION_ERROR", BAD_CURSOR);
  try {
    return JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    throw new WaymarkError("INPUT_VALIDATION_ERROR", BAD_CURSOR);
  }
}

/** The timeline continues after this task (its subtasks come next). */
export function timelineCursorAfter(taskId: string): string {
  return encode({ v: 1, after: taskId });
}

export function timelinePosition(cursor: string): string {
  const parsed = timelineCursor.safeParse(decode(cursor));
  if (!parsed.success) throw new WaymarkError("INPUT_VALIDATION_ERROR", BAD_CURSOR);
  return parsed.data.after;
}

export function rowsCursorAfter(kind: RecordKind, position: RowPosition): string {
  return encode({ v: 1, kind, at: position.at, id: position.id });
}

/** A cursor of another kind's pages is refused too: positions are only comparable within one array. */
export function rowsPosition(kind: RecordKind, cursor: string): RowPosition {
  const parsed = rowsCursor.safeParse(decode(cursor));
  if (!parsed.success || parsed.data.kind !== kind) throw new WaymarkError("INPUT_VALIDATION_ERROR", BAD_CURSOR);
  return { at: parsed.data.at, id: parsed.data.id };
}

/** A page of one list of a task's record continues after this position. */
export function filesCursorAfter(taskId: string, list: FileList, after: number): string {
  return encode({ v: 1, task: taskId, list, after });
}

/** A cursor of another task's or another list's pages is refused: positions are only comparable within one list. */
export function filesPosition(taskId: string, list: FileList, cursor: string): number {
  const parsed = filesCursor.safeParse(decode(cursor));
  if (!parsed.success || parsed.data.task !== taskId || parsed.data.list !== list)
    throw new WaymarkError("INPUT_VALIDATION_ERROR", BAD_CURSOR);
  return parsed.data.after;
}
