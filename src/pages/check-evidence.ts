/**
 * @module pages/check-evidence
 * A task's checks on the shared page: per kind (tests, build, lint, type-check) what the agent
 * claimed next to what the helper's hooks observed after its last edit, then the runs of each kind
 * in order, and every command observed (collapsed). The reading and the words are
 * @waymark/protocol/check-evidence and provenance-wording; this module is their HTML. A failing
 * exit code is red and says so in words with a shape (✕), never by colour alone; command lines
 * are agent-written text and only ever interpolated (hono/html escapes them).
 */
import { checkLines, type EvidenceRun } from "@waymark/protocol/check-evidence";
import { checkLabel, checkWording, type EvidenceSegment, exitWords } from "@waymark/protocol/provenance-wording";
import { html } from "hono/html";
import type { CommandRunView, TaskView } from "../domain/view";
import { formatDuration, heading, type Level, renderTime } from "./format";

type Html = ReturnType<typeof html>;

/** An exit code as a shape, words and colour: ✓ exit 0 (passed), ✕ exit 1 (failed), ? exit code not observed. */
export function renderExit(exit: number | null): Html {
  const [state, shape] = exit === null ? ["unknown", "?"] : exit === 0 ? ["pass", "✓"] : ["fail", "✕"];
  return html`<span class="exit exit-${state}"><span aria-hidden="true">${shape}</span> ${exitWords(exit)}</span>`;
}

/** One piece of a check's sentence as HTML. */
export function renderSegment(segment: EvidenceSegment): Html | string {
  if (typeof segment === "string") return segment;
  if ("code" in segment) return html`<code>${segment.code}</code>`;
  if ("time" in segment) return renderTime(segment.time);
  return renderExit(segment.exit);
}

function renderRun(run: EvidenceRun | CommandRunView): Html {
  const took = "duration_ms" in run && run.duration_ms !== null ? html` · ${formatDuration(run.duration_ms / 1000) || "0s"}` : "";
  const cut = "truncated" in run && run.truncated ? html` <span class="muted">(cut)</span>` : "";
  return html`<li><code>${run.command}</code>${cut} ${renderExit(run.exit_code)} · ${renderTime(run.at)}${took}</li>`;
}

/** The task's checks and the commands observed; nothing for a task with neither a claim nor an observation. */
export function renderCheckEvidence(t: TaskView, level: Level): Html | string {
  const lines = checkLines(t);
  const commands = t.commands;
  if (lines.length === 0 && !commands?.runs.length) return "";
  return html`<div class="field checks">${heading(level, "Checks")}<ul class="check-lines">${lines.map(
    (line) =>
      html`<li><strong>${checkLabel(line)}:</strong> ${checkWording(line).map(renderSegment)}${
        line.observation && line.observation.runs.length > 1
          ? html`<ol class="runs" aria-label="${checkLabel(line)} runs in order">${line.observation.runs.map(renderRun)}</ol>`
          : ""
      }</li>`,
  )}</ul>${
    commands && commands.runs.length > 0
      ? html`<details class="commands-observed"><summary>${commands.runs.length} command${commands.runs.length === 1 ? "" : "s"} observed${
          commands.omitted > 0 ? ` (and ${commands.omitted} more not recorded)` : ""
        }</summary><ol class="runs">${commands.runs.map(renderRun)}</ol></details>`
      : ""
  }</div>`;
}
