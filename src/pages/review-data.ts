/**
 * @module pages/review-data
 * The review data of a task on the shared page besides its files (files.ts): the commits made
 * during the task and the branch, and the workflow's line totals. Helper-measured
 * (@waymark/protocol/review); agent-controlled text (commit subjects, branch) is only ever
 * interpolated, so hono/html escapes it.
 */
import type { LineTotals } from "@waymark/protocol/review-fields";
import { counted } from "@waymark/protocol/wording";
import { html } from "hono/html";
import type { TaskView } from "../domain/view";
import { formatCount, heading, type Level } from "./format";

type Html = ReturnType<typeof html>;

/** "+1,234 −56" (and "· 2 binary"), coloured and worded. */
export function renderLineTotals(totals: LineTotals): Html {
  return html`<span class="lines"><span class="add">+${formatCount(totals.added)}</span> <span class="del">−${formatCount(totals.removed)}</span>${
    totals.binary > 0 ? html` <span class="muted">· ${formatCount(totals.binary)} binary</span>` : ""
  }</span>`;
}

/** Per task: the branch and the commits made during it (never claimed to be pushed). */
export function renderCommits(t: TaskView, level: Level): Html | string {
  const f = t.files_changed;
  if (!f || f.commits === undefined) return "";
  const commits = f.commits;
  const total = commits.length + (f.commits_omitted ?? 0);
  const branch = f.branch === undefined ? "" : f.branch === null ? html`detached HEAD · ` : html`branch <code>${f.branch}</code> · `;
  // The commits it started and ended at (what a diff of its committed work compares).
  const start = t.repository?.start_commit;
  const end = t.repository?.end_commit;
  const range = start && end && start !== end ? html` · from <code>${start.slice(0, 10)}</code> to <code>${end.slice(0, 10)}</code>` : "";
  return html`<div class="field commits">${heading(level, "Commits")}<p>${branch}${
    total === 0 ? "no commits during this task" : html`${counted(total, "commit")} during this task (not known to be pushed)`
  }${range}</p>${
    commits.length > 0
      ? html`<ul class="commit-list">${commits.map((c) => html`<li><code>${c.sha}</code> ${c.subject}</li>`)}${
          f.commits_omitted ? html`<li class="muted">… and ${formatCount(f.commits_omitted)} older</li>` : ""
        }</ul>`
      : ""
  }</div>`;
}
