/**
 * @module pages/provenance-notes
 * Where a record's figures come from, said plainly on the shared page and in the Markdown
 * export: which repository and branch a workflow and its tasks ran in, whether files_changed
 * was computed by the Waymark helper (and which version) or reported by the client, which
 * changed files the agent's own edit tools did not touch, and whether usage was summed from
 * the agent's transcript or is the agent's claim. The wording is @waymark/protocol/provenance;
 * this module is its HTML rendering.
 */

import { repositoryText, taskProvenance } from "@waymark/protocol/provenance-wording";
import { html } from "hono/html";
import type { TaskView, WorkflowHeader } from "../domain/view";
import { heading, type Level } from "./format";

export function renderWorkflowRepository(w: WorkflowHeader) {
  const text = repositoryText(w.repository);
  return text ? html`<p class="repository muted">Repository: ${text}</p>` : "";
}

export function renderTaskProvenance(t: TaskView, level: Level) {
  const lines = taskProvenance(t);
  if (lines.length === 0) return "";
  return html`<div class="field provenance">${heading(level, "Provenance")}<ul>${lines.map(
    (line) =>
      html`<li><strong>${line.label}:</strong> ${line.text}${
        line.paths
          ? html`<ul class="filelist">${line.paths.map((path) => html`<li><code>${path}</code> <span class="tag">not by agent tools</span></li>`)}</ul>`
          : ""
      }</li>`,
  )}</ul></div>`;
}
