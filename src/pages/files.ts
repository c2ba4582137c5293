/**
 * @module pages/files
 * A task's changed files as a reviewer reads them: one row per file (a rename once, not as a
 * deletion, an addition and a rename), its lines added and removed with a small bar in
 * proportion to the task's largest change, who last wrote its added lines (the agent's own edit
 * tools, others, not observed), and text labels for what needs an eye: outside the declared
 * areas, left uncommitted. Bars are width classes (the CSP allows no inline style).
 */

import { authorsOf, formatLineAuthors, type LineAuthors } from "@waymark/protocol/line-authors";
import { displayPath } from "@waymark/protocol/paths";
import type { LineTotals } from "@waymark/protocol/review-fields";
import type { LineCount } from "@waymark/protocol/wire";
import { html } from "hono/html";
import type { TaskView } from "../domain/view";
import { formatCount, heading, srOnly } from "./format";

type Html = ReturnType<typeof html>;

/** Bar widths are multiples of 100 / BAR_STEPS percent (style.ts defines a class per step). */
export const BAR_STEPS = 20;

export interface FileRow {
  status: "A" | "M" | "D" | "R";
  path: string;
  /** The old path of a rename. */
  from?: string;
  /** Lines added and removed; "binary" for a file git treats as binary; null when not measured. */
  lines: { added: number; removed: number } | "binary" | null;
  outOfScope: boolean;
  uncommitted: boolean;
  /**
   * Bar widths in steps of BAR_STEPS (a non-zero count is at least one step); `authored`: the added
   * part split by who last wrote the lines (agent, others, not observed), when they were attributed.
   */
  bar: { added: number; removed: number; authored?: [number, number, number] };
  /** Who last wrote the added lines (the agent's edit tools, others, not observed); null when not attributed. */
  authors: LineAuthors | null;
}

/** A task's own files (a parent's without those its subtasks changed) and how many its subtasks changed. */
export interface TaskFiles {
  rows: FileRow[];
  inSubtasks: number;
  /** Not listed: more than the helper could send (counted per directory in the JSON export). */
  omitted: number;
  /** Recorded but not in the task's view: it changed too many files for one value (the JSON export lists them). */
  unlisted: number;
  /** Lines of the rows listed. */
  totals: LineTotals;
}

const steps = (count: number, largest: number) =>
  count === 0 || largest === 0 ? 0 : Math.max(1, Math.round((count / largest) * BAR_STEPS));

/**
 * The rows of a task's files: added, modified, deleted, then renamed; each path once. Paths in
 * `inSubtasks` (a parent's files that a subtask also lists) are counted, not listed: the
 * subtask lists them.
 */
export function taskFiles(task: Pick<TaskView, "files_changed" | "verification">, inSubtasks: ReadonlySet<string> = new Set()): TaskFiles {
  const f = task.files_changed;
  const totals: LineTotals = { added: 0, removed: 0, binary: 0 };
  if (!f) return { rows: [], inSubtasks: 0, omitted: 0, unlisted: 0, totals };
  const unexpected = new Set(task.verification?.unexpected_files ?? []);
  const uncommitted = new Set(f.uncommitted);
  const counts = new Map<string, LineCount>((f.lines ?? []).map((line) => [line.path, line]));
  const renamedFrom = new Set(f.renamed.map((r) => r.from));
  const renamedTo = new Set(f.renamed.map((r) => r.to));
  const row = (status: FileRow["status"], path: string, from?: string): FileRow => {
    const count = counts.get(path);
    return {
      status,
      path,
      ...(from === undefined ? {} : { from }),
      lines: count === undefined ? null : "binary" in count ? "binary" : { added: count.added, removed: count.removed },
      outOfScope: unexpected.has(path) || (from !== undefined && unexpected.has(from)),
      uncommitted: uncommitted.has(path) || (from !== undefined && uncommitted.has(from)),
      bar: { added: 0, removed: 0 },
      authors: count === undefined ? null : authorsOf(count),
    };
  };
  const all = [
    ...f.added.filter((p) => !renamedTo.has(p)).map((p) => row("A", p)),
    ...f.modified.map((p) => row("M", p)),
    ...f.deleted.filter((p) => !renamedFrom.has(p)).map((p) => row("D", p)),
    ...f.renamed.map((r) => row("R", r.to, r.from)),
  ];
  const rows = all.filter((r) => !inSubtasks.has(r.path) && (r.from === undefined || !inSubtasks.has(r.from)));
  const largest = Math.max(0, ...rows.map((r) => (r.lines && r.lines !== "binary" ? r.lines.added + r.lines.removed : 0)));
  for (const r of rows) {
    if (r.lines === "binary") totals.binary++;
    else if (r.lines) {
      totals.added += r.lines.added;
      totals.removed += r.lines.removed;
      r.bar = { added: steps(r.lines.added, largest), removed: steps(r.lines.removed, largest) };
      // Split only where some line was observed: an all-unobserved bar stays the plain +/− bar.
      if (r.authors && r.lines.added > 0 && r.authors.agent + r.authors.others > 0) r.bar.authored = splitSteps(r.bar.added, r.authors);
    }
  }
  return { rows, inSubtasks: all.length - rows.length, omitted: f.truncated?.omitted ?? 0, unlisted: f.more ?? 0, totals };
}

/** A bar's added steps shared out by author, each non-zero count at least one step where the steps allow, summing to `total`. */
function splitSteps(total: number, authors: LineAuthors): [number, number, number] {
  const counts = [authors.agent, authors.others, authors.not_observed];
  const all = counts.reduce((a, b) => a + b, 0);
  const parts = counts.map((count) => (count === 0 ? 0 : Math.max(1, Math.round((count / all) * total))));
  // Rounding may overshoot or fall short: the largest part takes the difference.
  const largest = parts.indexOf(Math.max(...parts));
  parts[largest] = Math.max(0, (parts[largest] ?? 0) + total - parts.reduce((a, b) => a + b, 0));
  return parts as [number, number, number];
}

export const STATUS_WORD: Record<FileRow["status"], string> = { A: "added", M: "modified", D: "deleted", R: "renamed" };

/** Who last wrote a file's added lines, beside its counts: "agent 9 · others 3", "not observed 4". */
function authorsNote(authors: LineAuthors | null): Html | string {
  const text = authors ? formatLineAuthors(authors) : "";
  return text === "" ? "" : html` <span class="who">${text}<span class="sr-only"> added lines</span></span>`;
}

/** The bar's added part: one segment, or the agent's, others' and not observed lines' segments. */
function addedBar(bar: FileRow["bar"]): Html {
  if (!bar.authored) return html`<span class="b-add w${bar.added}"></span>`;
  const [agent, others, unobserved] = bar.authored;
  return html`<span class="b-add w${agent}"></span><span class="b-oth w${others}"></span><span class="b-nob w${unobserved}"></span>`;
}

/** One file; `measured`: the task has line counts (else the counts and bar columns are left out). */
function renderRow(r: FileRow, measured: boolean): Html {
  const counts = !measured
    ? ""
    : r.lines === null
      ? html`<td class="num muted" colspan="2">not measured</td><td></td>`
      : r.lines === "binary"
        ? html`<td class="num muted" colspan="2">binary</td><td></td>`
        : html`<td class="num add">+${formatCount(r.lines.added)}</td><td class="num del">−${formatCount(r.lines.removed)}</td><td class="bar" aria-hidden="true">${addedBar(r.bar)}<span class="b-del w${r.bar.removed}"></span></td>`;
  return html`<tr class="file${r.outOfScope ? " out-of-scope" : ""}"><td><span class="fs fs-${r.status}" aria-hidden="true" title="${STATUS_WORD[r.status]}">${r.status}</span><span class="sr-only">${STATUS_WORD[r.status]}</span></td><td class="path"><code>${
    // A name that is not UTF-8 shown readably (lat\xE9.txt), as the Markdown export shows it.
    r.from === undefined ? displayPath(r.path) : html`${displayPath(r.from)} → ${displayPath(r.path)}`
  }</code>${r.uncommitted ? html` <span class="tag">○ uncommitted</span>` : ""}${
    r.outOfScope ? html` <span class="tag warn">⚠ outside declared areas</span>` : ""
  }${authorsNote(r.authors)}</td>${counts}</tr>`;
}

/** Columns, and a header row for assistive technology (the letters, colours and bars speak to the eye; the page's legend says what they mean). */
const MEASURED_COLUMNS = html`<colgroup><col class="cs"><col><col class="cn"><col class="cn"><col class="cb"></colgroup><thead class="sr-only"><tr><th scope="col">Change</th><th scope="col">File</th><th scope="col">Lines added</th><th scope="col">Lines removed</th><td></td></tr></thead>`;
const UNMEASURED_COLUMNS = html`<colgroup><col class="cs"><col></colgroup><thead class="sr-only"><tr><th scope="col">Change</th><th scope="col">File</th></tr></thead>`;

/** The table of some of a task's files (a task card's first ones, or a page of its files page). */
export function filesTable(rows: readonly FileRow[], measured: boolean): Html {
  return html`<table class="files">${measured ? MEASURED_COLUMNS : UNMEASURED_COLUMNS}<tbody>${rows.map((r) => renderRow(r, measured))}</tbody></table>`;
}

export interface FilesOptions {
  /** The field's heading level. */
  level: number;
  /** Files this read left out, and where the task's files page lists them all. */
  unlisted: number;
  href?: string;
}

/** The task's files table, its overlaps with concurrent tasks and what was too many to list. */
export function renderFiles(t: TaskView, files: TaskFiles, options: FilesOptions): Html | string {
  if (!t.files_changed) return "";
  const { rows, omitted, inSubtasks } = files;
  // Left out by this read (a page's bound), and beyond the task's view (a task that changed many files).
  const unlisted = options.unlisted + files.unlisted;
  const { href } = options;
  // Line counts come with the helper's review data; without it there is nothing to count or draw.
  const measured = t.files_changed.lines !== undefined;
  const overlaps = t.verification?.overlapping ?? [];
  const bySubtasks = html`${formatCount(inSubtasks)} file${inSubtasks === 1 ? "" : "s"} changed by its subtasks, listed under them`;
  return html`<div class="field files">${heading(options.level, `Files changed (${formatCount(rows.length + omitted + unlisted)})`)}${
    rows.length > 0
      ? html`${filesTable(rows, measured)}${inSubtasks > 0 ? html`<p class="muted">and ${bySubtasks}</p>` : ""}`
      : html`<p class="muted">${inSubtasks > 0 ? html`None of its own; ${bySubtasks}` : "none"}</p>`
  }${
    unlisted > 0
      ? html`<p class="more-files">${formatCount(unlisted)} more not shown here: ${
          href ? html`<a href="${href}">list every file${srOnly(` of task ${t.name}`)}</a>` : "see the JSON export"
        }</p>`
      : ""
  }${omitted > 0 ? html`<p class="muted">… and ${formatCount(omitted)} more changes, too many to list (counted per directory in the JSON export)</p>` : ""}${
    overlaps.length > 0
      ? html`<div class="overlaps">${heading(Math.min(6, options.level + 1), "Overlaps with concurrent tasks")}<ul>${overlaps.map(
          (o) =>
            // A task of another workflow (two agents in one checkout) is not on this page: named, not linked.
            html`<li><code>${displayPath(o.path)}</code> also changed by ${o.workflow_id ? html`${o.task_id} (workflow ${o.workflow_id})` : html`<a href="#${o.task_id}">${o.task_id}</a>`}${o.same_change ? " (same change)" : ""}</li>`,
        )}</ul></div>`
      : ""
  }</div>`;
}
