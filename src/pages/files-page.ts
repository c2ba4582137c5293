/**
 * @module pages/files-page
 * Every file of one task (/s/<token>/files/<task> and /w/<id>/files/<task>), LIMITS.FILES_PAGE
 * files at a time in path order (the object reads only those: a task's files are rows, never one
 * value): what a task's card lists only the first of. The same rows, table and legend as
 * the card (files.ts), in the workflow page's shell, with links back and between pages.
 */
import { html, raw } from "hono/html";
import type { TaskView, WorkflowHead } from "../domain/view";
import { LIMITS } from "../limits";
import { filesTable, taskFiles } from "./files";
import { formatCount } from "./format";
import { PAGE_STYLE } from "./style";

export function renderFilesPage(nonce: string, head: WorkflowHead, task: TaskView, base: string, from: number): string {
  // The task as read for this page: its files `from` on, and how many come after them.
  const { rows: shown } = taskFiles(task);
  const f = task.files_changed;
  const here = f ? f.added.length + f.modified.length + f.deleted.length : 0;
  const after = f?.more ?? 0;
  const measured = f?.lines !== undefined;
  const link = `${base}/files/${task.id}`;
  const pager =
    from > 0 || after > 0
      ? html`<nav class="pager" aria-label="Pages of files">${from > 0 ? html`<a href="${link}?from=${Math.max(0, from - LIMITS.FILES_PAGE)}">Previous files</a>` : ""}${
          after > 0 ? html`<a href="${link}?from=${from + here}">Next files</a>` : ""
        }</nav>`
      : "";
  const range = here === 0 ? "none" : `${formatCount(from + 1)}–${formatCount(from + here)} of ${formatCount(from + here + after)}`;
  return String(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>Files of ${task.name} — ${head.workflow.name} — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main><a class="skip" href="#main-content">Skip to the files</a>
<div class="topbar"><span class="brand">Waymark</span> <a href="${base}#${task.id}">Back to the workflow</a></div>
<h1 id="main-content" tabindex="-1">Files changed by ${task.name}</h1>
<p class="muted">In the workflow ${head.workflow.name}: files ${range}.</p>
<p class="legend muted">Files: <span class="fs fs-A">A</span> added, <span class="fs fs-M">M</span> modified, <span class="fs fs-D">D</span> deleted, <span class="fs fs-R">R</span> renamed; "agent" counts the added lines the agent's own edit tools last wrote (solid in the bar), "others" those something else did (hatched), "not observed" those no hook saw (dashed).</p>
${pager}${shown.length > 0 ? filesTable(shown, measured) : html`<p class="muted">No files on this page.</p>`}${pager}
</main></body></html>`);
}
