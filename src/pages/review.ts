/**
 * @module pages/review
 * The review data of a task on the shared page: lines added and removed (in total and per
 * file), the commits made during the task and the branch, and the workflow's line totals.
 * Helper-measured (@waymark/protocol/review); agent-controlled text (commit subjects, branch,
 * paths) is only ever interpolated, so hono/html escapes it.
 */
import { sumTotals } from "@waymark/protocol/review";
import { formatLineTotals } from "@waymark/protocol/summary";
import { html } from "hono/html";
import type { TaskView, WorkflowView } from "../domain/view";

type Html = ReturnType<typeof html>;

/** Per task: "+12 −3", the per-file counts (collapsed), the branch and the commits. */
export function renderTaskReview(t: TaskView): Html | string {
  const f = t.files_changed;
  if (!f || (f.line_totals === undefined && f.commits === undefined)) return "";
  const commits = f.commits ?? [];
  const branch = f.branch === undefined ? "" : f.branch === null ? html`detached HEAD · ` : html`branch <code>${f.branch}</code> · `;
  return html`<div class="field review-data" id="review-${t.id}">${
    f.line_totals
      ? html`<details class="lines"><summary>Lines <span class="fs-A">+${f.line_totals.added}</span> <span class="fs-D">−${f.line_totals.removed}</span>${
          f.line_totals.binary > 0 ? html` <span class="muted">(${f.line_totals.binary} binary)</span>` : ""
        }</summary><table class="line-counts"><tbody>${(f.lines ?? []).map(
          (line) =>
            html`<tr><td><code>${line.path}</code></td>${
              "binary" in line
                ? html`<td colspan="2" class="muted">binary</td>`
                : html`<td class="fs-A">+${line.added}</td><td class="fs-D">−${line.removed}</td>`
            }</tr>`,
        )}</tbody></table></details>`
      : ""
  }<p class="commits">${branch}${
    commits.length === 0
      ? "no commits during this task"
      : html`${commits.length + (f.commits_omitted ?? 0)} commit(s) during this task (not known to be pushed):`
  }</p>${
    commits.length > 0
      ? html`<ul class="commit-list">${commits.map((c) => html`<li><code>${c.sha}</code> ${c.subject}</li>`)}${
          f.commits_omitted ? html`<li class="muted">… and ${f.commits_omitted} older</li>` : ""
        }</ul>`
      : ""
  }</div>`;
}

/** The workflow's lines: the sum over its top-level tasks (a parent's window includes its subtasks'). */
export function renderWorkflowLines(view: Pick<WorkflowView, "tasks">): Html | string {
  const roots = view.tasks.filter((t) => t.parent_task_id === null);
  if (!roots.some((t) => t.files_changed?.line_totals)) return "";
  return html`<p class="muted" id="wf-lines">Lines changed: ${formatLineTotals(sumTotals(roots.map((t) => t.files_changed?.line_totals)))}</p>`;
}
