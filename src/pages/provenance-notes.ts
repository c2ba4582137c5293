/**
 * @module pages/provenance-notes
 * Where a record's figures come from, said plainly on the shared page: which repository and
 * branch a workflow and its tasks ran in, and for each figure whether it was computed and signed
 * on an approved device, claimed by the client, or not observed (each line tagged with which).
 * The wording is @waymark/protocol/provenance-wording; this module is its HTML rendering.
 */

import { PROVENANCE_TERMS, repositoryText, taskProvenance } from "@waymark/protocol/provenance-wording";
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
      html`<li data-provenance="${line.kind ?? "context"}"><strong>${line.label}:</strong> ${
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
      }</li>`,
  )}</ul></div>`;
}
