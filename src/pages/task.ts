/**
 * @module pages/task
 * One task on the timeline, and the things logged inside it. A task is a collapsible card
 * (<details>): its summary line says what a reviewer scans for (status badge, name, duration,
 * files and lines, plan steps, review flags); its body the goal, outcome, its checks (claimed and
 * observed), files, commits, provenance and warnings. Milestones, decisions and issues are timeline items, each with its
 * time. Agent text is only ever interpolated (hono/html escapes it).
 */
import { enumLabel } from "@waymark/protocol/wording";
import { html, raw } from "hono/html";
import type { DecisionView, IssueView, MilestoneView, TaskView } from "../domain/view";
import { renderCheckEvidence } from "./check-evidence";
import { renderFiles, type TaskFiles, taskFiles } from "./files";
import { formatCount, formatDuration, formatUsage, heading, type Level, renderTime, srOnly, statusBadge } from "./format";
import { type CommonProvenance, renderTaskProvenance } from "./provenance-notes";
import { renderCommits, renderLineTotals } from "./review-data";

type Html = ReturnType<typeof html>;

const list = (items: readonly string[] | undefined, cls?: string) =>
  items && items.length > 0 ? html`<ul${cls ? html` class="${cls}"` : ""}>${items.map((item) => html`<li>${item}</li>`)}</ul>` : "";

/** Heading levels: h1 the workflow, h2 its sections, h3 a top-level task, deeper for subtasks and a task's fields. */
const deeper = (level: Level): Level => Math.min(6, level + 1) as Level;

/** A field of a task or of the workflow's outcome: a heading at `level` (styled small whatever its level), then the content. */
export const labelled = (label: string, content: Html | string, level: Level) =>
  content === "" ? "" : html`<div class="field">${heading(level, label)}${content}</div>`;

/** How the page differs for its audience: the owner's view links each item to the feedback form. */
export interface ItemOptions {
  /** Base of the owner page (/w/<id>): items link to its feedback form. */
  reviewBase?: string;
  /** Base of this page (/s/<token> or /w/<id>): a task's files beyond the first are listed under it. */
  base?: string;
  /** What the page said once about provenance: a task's card says only where it differs. */
  provenance?: CommonProvenance;
}

/**
 * "Review", named for what it reviews (a page has one per item). Without script it leads to the
 * owner's feedback form with the item chosen; the page script opens that form here instead
 * (`data-review`: what it is about) and sends it without leaving the page.
 */
export const reviewLink = (target: string, id: string, subject: string, options: ItemOptions, extra = "") =>
  options.reviewBase
    ? html` <a class="review-link" href="${options.reviewBase}?on=${id}#feedback" data-review="${target}:${id}"${
        extra ? html` data-path="${extra}"` : ""
      }>Review${srOnly(` ${subject}`)}</a>`
    : "";

/** What a task's card shows before it is opened. */
export interface TaskCard {
  task: TaskView;
  /** Labels of the plan steps this task did. */
  planSteps: string[];
  /** A parent's paths that its subtasks list too (null: no subtasks). */
  inSubtasks: ReadonlySet<string> | null;
  /** Counts of its own logs, for the summary line. */
  logs: { decisions: number; issues: number; reviews: number };
  open: boolean;
  /** Its heading's level (3 for a top-level task, one more per level of nesting). */
  level: Level;
  /** Changed files this read left out (listed on the task's files page). */
  filesUnlisted: number;
}

function summaryFacts(card: TaskCard, files: TaskFiles): Html {
  const t = card.task;
  const f = t.files_changed;
  const own = files.rows.length + files.omitted + files.unlisted + card.filesUnlisted;
  const duration = t.duration_seconds !== null ? formatDuration(t.duration_seconds) || "0s" : null;
  const facts: (Html | string)[] = [];
  if (duration) facts.push(html`<span class="fact">${duration}</span>`);
  if (f && (own > 0 || files.inSubtasks === 0))
    facts.push(html`<span class="fact files-count">${formatCount(own)} file${own === 1 ? "" : "s"}</span>`);
  if (files.inSubtasks > 0)
    facts.push(html`<span class="fact">${formatCount(files.inSubtasks)} file${files.inSubtasks === 1 ? "" : "s"} in subtasks</span>`);
  // A parent's own lines (its subtasks show theirs); nothing when it changed no file itself.
  if (f?.line_totals && own > 0)
    facts.push(html`<span class="fact">${renderLineTotals(files.inSubtasks > 0 ? files.totals : f.line_totals)}</span>`);
  if (card.logs.decisions > 0)
    facts.push(html`<span class="fact">${card.logs.decisions} decision${card.logs.decisions === 1 ? "" : "s"}</span>`);
  if (card.logs.issues > 0) facts.push(html`<span class="fact">${card.logs.issues} issue${card.logs.issues === 1 ? "" : "s"}</span>`);
  return html`${facts}${card.planSteps.map((s) => html` <span class="chip plan-chip">plan step ${s}</span>`)}${
    t.outcome?.manual_review_needed || card.logs.reviews > 0 ? html` <span class="tag warn">⚑ needs review</span>` : ""
  }${t.verification && !t.verification.scope_match && t.verification.unexpected_files.length > 0 ? html` <span class="tag warn">⚠ outside areas</span>` : ""}`;
}

function renderBody(card: TaskCard, files: TaskFiles, options: ItemOptions): Html {
  const t = card.task;
  const field = deeper(card.level);
  const o = t.outcome;
  const m = t.metadata;
  const v = t.verification;
  // Parts side by side, no whitespace between them: a 5,000-task page is megabytes already.
  const parts: (Html | string)[] = [
    html`<p class="goal">${t.goal}</p>`,
    t.areas.length > 0
      ? html`<p class="areas"><span class="muted">Areas:</span> ${t.areas.map((a) => html`<span class="chip">${a}</span>`)}</p>`
      : "",
    html`<p class="times">Started ${renderTime(t.started_at)}${t.completed_at ? html` · completed ${renderTime(t.completed_at)}` : html` · running`}${reviewLink("task", t.id, `task ${t.name}`, options)}</p>`,
    o
      ? html`<div class="outcome">${o.manual_review_needed ? html`<p class="alert">⚑ Manual review needed${o.manual_review_reason ? html`: ${o.manual_review_reason}` : ""}</p>` : ""}<p>${
          o.summary
        }</p>${labelled("Achievements", list(o.achievements), field)}${labelled("Limitations", list(o.limitations), field)}${labelled("Next steps", list(o.next_steps), field)}</div>`
      : "",
    m
      ? html`<div class="meta">${labelled("Packages added", list(m.packages_added), field)}${labelled(
          "Packages removed",
          list(m.packages_removed),
          field,
        )}${labelled("Commands (as the agent listed them)", list(m.commands_executed, "commands"), field)}</div>`
      : "",
    // The agent's claims about its checks (tests_status included) next to what the hooks observed.
    renderCheckEvidence(t, field),
    t.metrics ? html`<p class="metrics muted">Usage: ${formatUsage(t.metrics)}</p>` : "",
    renderFiles(t, files, {
      level: field,
      unlisted: card.filesUnlisted,
      ...(options.base ? { href: `${options.base}/files/${t.id}` } : {}),
    }),
    renderCommits(t, field),
    renderTaskProvenance(t, field, options.provenance),
    v && v.warnings.length > 0 ? labelled("Warnings", list(v.warnings, "warnings"), field) : "",
  ];
  return html`<div class="task-body">${parts}</div>`;
}

/** The opening of a task's card, up to its timeline list (closed by `closeTask`). */
export function openTask(card: TaskCard, options: ItemOptions): Html {
  const t = card.task;
  const files = taskFiles(t, card.inSubtasks ?? undefined);
  return html`<li class="task" id="${t.id}" data-status="${t.status}"><details class="task-card"${card.open ? html` open` : ""}>
<summary><span class="task-line">${statusBadge(t.status)} ${raw(`<h${card.level} class="task-name what">`)}${t.name}${raw(`</h${card.level}>`)}</span> <span class="facts">${summaryFacts(card, files)}</span></summary>
${renderBody(card, files, options)}
<ol class="timeline" id="tl-${t.id}">`;
}

export const closeTask = "</ol></details></li>";

export function renderMilestone(ms: MilestoneView): Html {
  return html`<li class="item milestone" id="${ms.id}"><span class="kind">milestone</span> ${renderTime(ms.created_at)} <span class="what" id="${ms.id}-what">${ms.message}</span>${
    ms.progress !== null
      ? html` <progress max="100" value="${ms.progress}" aria-labelledby="${ms.id}-what"></progress> <span class="muted">${ms.progress}%</span>`
      : ""
  }${ms.metadata ? html` <code class="muted">${JSON.stringify(ms.metadata)}</code>` : ""}</li>`;
}

export function renderDecision(d: DecisionView, options: ItemOptions): Html {
  return html`<li class="item decision" id="${d.id}"><p><span class="kind">decision</span> ${renderTime(d.created_at)} <span class="chip">${enumLabel(d.category)}</span> <strong class="what">${d.question}</strong>${reviewLink("decision", d.id, `decision ${d.question}`, options)}</p>${d.options_considered.length > 0 ? html`<ul class="options">${d.options_considered.map((o) => html`<li class="${o === d.chosen ? "chosen" : ""}">${o}</li>`)}</ul>` : ""}<p>Chosen: <strong>${d.chosen}</strong></p><p>${d.reasoning}</p>${
    d.trade_offs ? html`<p class="muted">Trade-offs: ${d.trade_offs}</p>` : ""
  }</li>`;
}

export function renderIssue(i: IssueView, options: ItemOptions): Html {
  return html`<li class="item issue${i.requires_human_review ? " needs-review" : ""}" id="${i.id}"><p><span class="kind">issue</span> ${renderTime(i.created_at)} <span class="chip">${enumLabel(i.type)}</span>${
    i.requires_human_review ? html` <span class="tag warn">⚑ needs human review</span>` : ""
  }${reviewLink("issue", i.id, `issue ${enumLabel(i.type)}: ${i.description}`, options)}</p><p class="what">${i.description}</p><p class="muted">Resolution: ${i.resolution}</p></li>`;
}
