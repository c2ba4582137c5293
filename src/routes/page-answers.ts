/**
 * @module routes/page-answers
 * How the shared page's and the owner view's routes answer: the timeline page a request asks
 * for (`?after=<cursor>`) and the files page (`?from=<row>`), checked here for their form (the
 * object checks that a cursor is one it gave out); a rendered page with agent text's bidi
 * controls shown as code points; and a page read that fails after the head (a cursor that is not
 * one, a link revoked meanwhile) as the status it means rather than a broken page.
 */
import type { Context } from "hono";
import type { Reader, WorkflowHead } from "../domain/view";
import type { AppEnv } from "../http/types";
import { renderFilesPage } from "../pages/files-page";
import { revealBidiControls } from "../pages/format";
import { renderGonePage } from "../pages/page";
import { PagedReadError } from "../pages/paged-reads";
import type { WorkflowObject } from "../workflow/workflow-object";
import { nonceOf } from "./forms";

type Ctx = Context<AppEnv>;

const CURSOR = /^[A-Za-z0-9_-]{1,512}$/;
export const BAD_AFTER = 'INPUT_VALIDATION_ERROR: after: must be a cursor from this page\'s "Next tasks" link';
export const BAD_FROM = "INPUT_VALIDATION_ERROR: from: must be a whole number of files from 0 to 999999";

/** The timeline page asked for: null for the first, undefined when `after` is malformed. */
export function timelineAfter(c: Ctx): string | null | undefined {
  const after = c.req.query("after");
  if (after === undefined) return null;
  return CURSOR.test(after) ? after : undefined;
}

/** The query that asks for this timeline page again (the live client fetches its blocks with it). */
export const pageQuery = (after: string | null) => (after === null ? "" : `?after=${after}`);

/** The first row of a files page: 0 when absent, undefined when malformed. */
export function filesFrom(c: Ctx): number | undefined {
  const from = c.req.query("from");
  if (from === undefined) return 0;
  return /^\d{1,6}$/.test(from) ? Number(from) : undefined;
}

const HTML = { "Content-Type": "text/html; charset=UTF-8" };

/** A rendered page or blocks, or what a failed page read means. */
export async function answerPage(c: Ctx, render: () => Promise<string>, headers: Record<string, string> = {}): Promise<Response> {
  try {
    return c.body(revealBidiControls(await render()), 200, { ...HTML, ...headers });
  } catch (error) {
    if (!(error instanceof PagedReadError)) throw error;
    if (error.code === "INPUT_VALIDATION_ERROR") return c.text(`${error.code}: ${error.message.replace(/^cursor:/, "after:")}`, 400);
    const status = error.code === "UNAUTHORIZED" ? 410 : 404;
    return c.html(renderGonePage(nonceOf(c)), status);
  }
}

/** One task's files page for this reader (the object checks the reader again). */
export async function answerFilesPage(
  c: Ctx,
  stub: DurableObjectStub<WorkflowObject>,
  reader: Reader,
  head: WorkflowHead,
  base: string,
  from: number,
): Promise<Response> {
  const task = await stub.readTask(reader, c.req.param("taskId") ?? "", from);
  if (!task.ok) return c.text(`${task.code}: ${task.message}`, task.code === "UNAUTHORIZED" ? 410 : 404);
  return c.body(revealBidiControls(renderFilesPage(nonceOf(c), head, task.value, base, from)), 200, HTML);
}
