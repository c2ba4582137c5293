/**
 * @module pages/provenance-notes
 * Where a record's figures come from, said plainly on the shared page: which repository and
 * branch a workflow and its tasks ran in, and for each figure whether it was computed and signed
 * on an approved device, claimed by the client, or not observed (each line tagged with which).
 * Said once per page: what most of the page's tasks share is stated at the top
 * (`commonProvenance`), and a task's card says only where it differs. The wording is
 * @waymark/protocol/provenance-wording; this module is its HTML rendering.
 */

import { PROVENANCE_TERMS, type ProvenanceLine, repositoryText, taskProvenance } from "@waymark/protocol/provenance-wording";
import { counted } from "@waymark/protocol/wording";
import { html } from "hono/html";
import type { TaskView, WorkflowHeader } from "../domain/view";
import { heading, type Level } from "./format";

type Html = ReturnType<typeof html>;

export function renderWorkflowRepository(w: WorkflowHeader) {
  const text = repositoryText(w.repository);
  return text ? html`<p class="repository muted">Repository: ${text}</p>` : "";
}

/** What the page says once: per label, the statement most of its tasks share, and how many tasks share it. */
export interface CommonProvenance {
  lines: { line: ProvenanceLine; tasks: number }[];
  /** Tasks on the page with any provenance at all. */
  tasks: number;
  /** The workflow's repository as the header says it: a task in it says only its commits (its card's Commits). */
  repository: string | null;
}

/** A statement's identity: its label and words (a line naming particular files is the task's own). */
const keyOf = (line: ProvenanceLine) => (line.paths ? null : `${line.label}\u0000${line.text}`);

/**
 * Per label, the statement shared by the most tasks of the page (two at least; the first seen on a
 * tie). A task's own repository line (its commits) is never common: the card's commits say them.
 */
export function commonProvenance(tasks: readonly TaskView[], workflow: WorkflowHeader): CommonProvenance {
  const counts = new Map<string, { line: ProvenanceLine; tasks: number }>();
  let withAny = 0;
  for (const task of tasks) {
    const lines = taskProvenance(task);
    if (lines.length > 0) withAny++;
    for (const line of lines) {
      const key = keyOf(line);
      if (key === null || line.label === "Repository") continue;
      const seen = counts.get(key);
      if (seen) seen.tasks++;
      else counts.set(key, { line, tasks: 1 });
    }
  }
  const best = new Map<string, { line: ProvenanceLine; tasks: number }>();
  for (const entry of counts.values()) {
    const current = best.get(entry.line.label);
    if (entry.tasks >= 2 && (!current || entry.tasks > current.tasks)) best.set(entry.line.label, entry);
  }
  return { lines: [...best.values()], tasks: withAny, repository: repositoryText(workflow.repository) };
}

function renderLine(line: ProvenanceLine, shared = ""): Html {
  return html`<li data-provenance="${line.kind ?? "context"}"><strong>${line.label}:</strong> ${
    line.kind
      ? html`<span class="tag${line.kind === "signed" ? "" : " warn"}">${PROVENANCE_TERMS[line.kind]}</span>${line.rest}`
      : line.text
  }${
    line.paths
      ? html`<ul class="filelist">${line.paths.map(
          (path) =>
            html`<li><code>${path}</code> <span class="tag${line.kind === "signed" ? "" : " warn"}">${line.kind === "signed" ? "" : "claimed: "}not by agent tools</span></li>`,
        )}</ul>`
      : ""
  }${shared ? html` <span class="muted">(${shared})</span>` : ""}</li>`;
}

/** The page's statements said once, before the timeline; nothing when the page's tasks share none. */
export function renderCommonProvenance(common: CommonProvenance): Html | string {
  if (common.lines.length === 0) return "";
  return html`<section id="wf-provenance" class="box" aria-labelledby="wf-provenance-title"><h2 id="wf-provenance-title">Where the figures come from</h2>
<ul class="provenance">${common.lines.map(({ line, tasks }) => renderLine(line, tasks === common.tasks ? "every task" : `${tasks} of ${counted(common.tasks, "task")}`))}</ul>
<p class="muted">Said once for the tasks on this page; a task that differs says so on its card, under Provenance.</p></section>`;
}

/** A task's provenance: only what differs from what the page said once (all of it when nothing was said once). */
export function renderTaskProvenance(t: TaskView, level: Level, common?: CommonProvenance) {
  const said = new Set((common?.lines ?? []).map(({ line }) => keyOf(line)));
  const lines = taskProvenance(t).filter((line) => {
    if (line.label === "Repository") return !common?.repository || !line.text.startsWith(common.repository);
    const key = keyOf(line);
    return key === null || !said.has(key);
  });
  if (lines.length === 0) return "";
  return html`<div class="field provenance">${heading(level, "Provenance")}<ul>${lines.map((line) => renderLine(line))}</ul></div>`;
}
