/**
 * @module pages/page
 * The shared workflow page, rendered on the server with hono/html: every interpolated
 * value is escaped, and agent text is only ever interpolated. `raw` is used for the
 * static stylesheet and script only. This is the page's only renderer: the live client
 * (live-client.ts) fetches `renderWorkflowBlocks` again after events and swaps in what
 * changed, keyed by the element ids given here. The owner view (owner-view.ts) is this page
 * with an owner panel above the blocks and review links in them.
 */
import { html, raw } from "hono/html";
import type {
  DecisionView,
  FeedbackVerdict,
  FeedbackView,
  IssueView,
  MilestoneView,
  TaskView,
  Totals,
  WorkflowHeader,
  WorkflowView,
} from "../domain/view";
import { formatDuration, formatTime, formatUsage, STATUS_LABEL } from "./format";
import { LIVE_SCRIPT } from "./live-client";
import { renderTaskProvenance, renderWorkflowRepository } from "./provenance";
import { renderTaskReview, renderWorkflowLines } from "./review";
import { PAGE_STYLE } from "./style";

type Html = ReturnType<typeof html>;

const statusBadge = (status: string) => html`<span class="badge s-${status}">${STATUS_LABEL[status] ?? status}</span>`;

const list = (items: readonly string[] | undefined, cls = "") =>
  items && items.length > 0 ? html`<ul class="${cls}">${items.map((item) => html`<li>${item}</li>`)}</ul>` : "";

const labelled = (label: string, content: Html | string) =>
  content === "" ? "" : html`<div class="field"><h4>${label}</h4>${content}</div>`;

export function renderHeader(w: WorkflowHeader): Html {
  return html`<div id="wf-header">
    <h1><span class="wf-name">${w.name}</span> ${statusBadge(w.status)}</h1>
    ${w.description ? html`<p class="description">${w.description}</p>` : ""}
    ${renderWorkflowRepository(w)}
    <p class="times">Started ${formatTime(w.created_at)}${w.completed_at ? html` · completed ${formatTime(w.completed_at)}` : ""} · last activity ${formatTime(w.updated_at)}</p>
    ${
      w.plan.length > 0
        ? html`<details class="plan" open><summary>Plan (${w.plan.length} steps)</summary><ol>${w.plan.map(
            (p) => html`<li><strong>${p.step}</strong> — ${p.goal}</li>`,
          )}</ol></details>`
        : ""
    }
    ${
      w.outcome
        ? html`<div class="outcome wf-outcome"><h2>Outcome</h2><p>${w.outcome.summary}</p>${labelled("Achievements", list(w.outcome.achievements))}${labelled(
            "Limitations",
            list(w.outcome.limitations),
          )}</div>`
        : ""
    }
  </div>`;
}

export function renderTotals(t: Totals): Html {
  const cell = (value: string | number, label: string) => html`<div><b>${value}</b><span>${label}</span></div>`;
  return html`<div id="wf-totals" class="totals">
    ${cell(formatDuration(t.duration_seconds) || "0s", "duration")}${cell(t.tasks, "tasks")}${cell(t.open_tasks, "open")}${cell(
      t.files_changed,
      "files changed",
    )}${cell(t.decisions, "decisions")}${cell(t.issues, "issues")}${cell(t.reviews_needed, "reviews needed")}${
      // Usage totals only once some task reported metrics.
      t.input_tokens + t.output_tokens > 0 || t.cost_usd > 0
        ? html`${cell(t.input_tokens + t.output_tokens, "tokens")}${cell(`$${t.cost_usd.toFixed(4)}`, "cost")}`
        : ""
    }
  </div>`;
}

export const VERDICT_LABEL: Record<FeedbackVerdict, string> = {
  comment: "comment",
  approved: "approved",
  changes_requested: "changes requested",
};

/** The latest verdict (approved / changes requested) per reviewed id; comments do not change it. */
function verdicts(feedback: readonly FeedbackView[]): Map<string, FeedbackVerdict> {
  const latest = new Map<string, FeedbackVerdict>();
  for (const f of feedback) if (f.verdict !== "comment") latest.set(f.target_id, f.verdict);
  return latest;
}

/** Rendering differences of the owner view: review links to the feedback form. */
export interface BlockOptions {
  /** Base of the owner page (/w/<id>): each review item links to its feedback form. */
  reviewBase?: string;
}

/**
 * Everything that asks for a human: issues flagged for review and tasks whose outcome asks for
 * manual review, each with the reviewer's latest verdict.
 */
export function renderReview(
  view: Pick<WorkflowView, "tasks" | "issues"> & { feedback?: FeedbackView[] },
  options: BlockOptions = {},
): Html {
  const issues = view.issues.filter((i) => i.requires_human_review);
  const tasks = view.tasks.filter((t) => t.outcome?.manual_review_needed);
  const empty = issues.length === 0 && tasks.length === 0;
  const latest = verdicts(view.feedback ?? []);
  const state = (id: string) => {
    const verdict = latest.get(id);
    const review = options.reviewBase ? html` <a class="review-link" href="${options.reviewBase}?on=${id}#feedback">Review</a>` : "";
    return html`${verdict ? html` <span class="badge v-${verdict}">${VERDICT_LABEL[verdict]}</span>` : ""}${review}`;
  };
  return html`<section id="wf-review" class="review"${empty ? html` hidden` : ""}>
    <h2>Needs human review</h2>
    <ul>
      ${tasks.map((t) => html`<li><a href="#${t.id}">${t.name}</a>: ${t.outcome?.manual_review_reason || "manual review requested"}${state(t.id)}</li>`)}
      ${issues.map((i) => html`<li><a href="#${i.id}">${i.type}</a>: ${i.description}${state(i.id)}</li>`)}
    </ul>
  </section>`;
}

/** Reviewer feedback, oldest first, and whether the agent has received each item yet. */
export function renderFeedback(feedback: readonly FeedbackView[], targetName: (id: string) => string): Html {
  return html`<section id="wf-feedback"${feedback.length === 0 ? html` hidden` : ""}><h2>Reviewer feedback</h2>
    <ol class="cards" id="feedback-list">${feedback.map(
      (f) => html`<li class="feedback v-${f.verdict}" id="${f.id}">
      <p><span class="badge v-${f.verdict}">${VERDICT_LABEL[f.verdict]}</span> on <a href="#${f.target_id}">${targetName(f.target_id)}</a>
      <span class="muted">${formatTime(f.created_at)} · ${f.delivered_at ? `delivered to the agent ${formatTime(f.delivered_at)}` : "waiting for the agent's next call"}</span></p>
      <p class="fb-body">${f.body}</p></li>`,
    )}</ol></section>`;
}

function renderFiles(t: TaskView): Html | string {
  const f = t.files_changed;
  const v = t.verification;
  if (!f) return "";
  const unexpected = new Set(v?.unexpected_files ?? []);
  const uncommitted = new Set(f.uncommitted);
  const row = (status: string, path: string, shown: Html | string = path) =>
    html`<li class="${unexpected.has(path) ? "out-of-scope" : ""}"><span class="fs fs-${status}">${status}</span> <code>${shown}</code>${
      uncommitted.has(path) ? html` <span class="tag">uncommitted</span>` : ""
    }${unexpected.has(path) ? html` <span class="tag warn">outside declared areas</span>` : ""}</li>`;
  const rows = [
    ...f.added.map((p) => row("A", p)),
    ...f.modified.map((p) => row("M", p)),
    ...f.deleted.map((p) => row("D", p)),
    ...f.renamed.map((r) => row("R", r.to, html`${r.from} → ${r.to}`)),
  ];
  const overlaps = v?.overlapping ?? [];
  return html`<div class="field files"><h4>Files changed (${rows.length})</h4>${rows.length > 0 ? html`<ul class="filelist">${rows}</ul>` : html`<p class="muted">none</p>`}${
    overlaps.length > 0
      ? html`<div class="overlaps"><h4>Overlaps with concurrent tasks</h4><ul>${overlaps.map(
          (o) =>
            html`<li><code>${o.path}</code> also changed by <a href="#${o.task_id}">${o.task_id}</a>${o.same_change ? " (same change)" : ""}</li>`,
        )}</ul></div>`
      : ""
  }</div>`;
}

export function renderTaskBody(t: TaskView): Html {
  const o = t.outcome;
  const m = t.metadata;
  const v = t.verification;
  const duration = t.duration_seconds !== null ? formatDuration(t.duration_seconds) : `running since ${formatTime(t.started_at)}`;
  return html`<div class="task-body" id="body-${t.id}">
    <div class="task-head"><h3>${t.name}</h3> ${statusBadge(t.status)} <span class="muted">${duration}</span></div>
    <p class="goal">${t.goal}</p>
    ${t.areas.length > 0 ? html`<p class="areas">${t.areas.map((a) => html`<span class="chip">${a}</span>`)}</p>` : ""}
    ${
      o
        ? html`<div class="outcome">${o.manual_review_needed ? html`<p class="alert">Manual review needed${o.manual_review_reason ? html`: ${o.manual_review_reason}` : ""}</p>` : ""}
        <p>${o.summary}</p>${labelled("Achievements", list(o.achievements))}${labelled("Limitations", list(o.limitations))}${labelled("Next steps", list(o.next_steps))}</div>`
        : ""
    }
    ${
      m
        ? html`<div class="meta">${m.tests_status ? html`<p>Tests: <span class="tests t-${m.tests_status}">${m.tests_status.replace("_", " ")}</span></p>` : ""}${labelled(
            "Packages added",
            list(m.packages_added),
          )}${labelled("Packages removed", list(m.packages_removed))}${labelled("Commands", list(m.commands_executed, "commands"))}</div>`
        : ""
    }
    ${t.metrics ? html`<p class="metrics muted">Usage: ${formatUsage(t.metrics)}</p>` : ""}
    ${renderFiles(t)}
    ${renderTaskProvenance(t)}
    ${renderTaskReview(t)}
    ${v && v.warnings.length > 0 ? html`<div class="field warnings"><h4>Warnings</h4>${list(v.warnings)}</div>` : ""}
  </div>`;
}

export function renderMilestone(ms: MilestoneView): Html {
  return html`<li class="milestone" id="${ms.id}"><span>${ms.message}</span>${
    ms.progress !== null ? html` <progress max="100" value="${ms.progress}"></progress> <span class="muted">${ms.progress}%</span>` : ""
  }${ms.metadata ? html` <code class="muted">${JSON.stringify(ms.metadata)}</code>` : ""}</li>`;
}

export function renderDecision(d: DecisionView, taskName: string): Html {
  return html`<li class="decision" id="${d.id}">
    <p><span class="chip">${d.category}</span> <strong>${d.question}</strong> <a class="muted" href="#${d.task_id}">${taskName}</a></p>
    ${d.options_considered.length > 0 ? html`<ul class="options">${d.options_considered.map((o) => html`<li class="${o === d.chosen ? "chosen" : ""}">${o}</li>`)}</ul>` : ""}
    <p>Chosen: <strong>${d.chosen}</strong></p>
    <p>${d.reasoning}</p>
    ${d.trade_offs ? html`<p class="muted">Trade-offs: ${d.trade_offs}</p>` : ""}
  </li>`;
}

export function renderIssue(i: IssueView, taskName: string): Html {
  return html`<li class="issue${i.requires_human_review ? " needs-review" : ""}" id="${i.id}">
    <p><span class="chip">${i.type}</span>${i.requires_human_review ? html` <span class="tag warn">needs human review</span>` : ""} <a class="muted" href="#${i.task_id}">${taskName}</a></p>
    <p>${i.description}</p>
    <p class="muted">Resolution: ${i.resolution}</p>
  </li>`;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string | null): Map<string | null, T[]> {
  const groups = new Map<string | null, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** The task tree: each task's milestones and subtasks nested under it; tasks whose parent is unknown go to the top. */
function renderTaskTree(view: WorkflowView): Html {
  const ids = new Set(view.tasks.map((t) => t.id));
  const children = groupBy(view.tasks, (t) => (t.parent_task_id !== null && ids.has(t.parent_task_id) ? t.parent_task_id : null));
  const milestones = groupBy(view.milestones, (m) => m.task_id);
  const node = (t: TaskView): Html => html`<li class="task s-${t.status}" id="${t.id}">
    ${renderTaskBody(t)}
    <ul class="milestones" id="mss-${t.id}">${(milestones.get(t.id) ?? []).map(renderMilestone)}</ul>
    <ul class="subtasks" id="sub-${t.id}">${(children.get(t.id) ?? []).map(node)}</ul>
  </li>`;
  return html`<ul class="tree" id="sub-root">${(children.get(null) ?? []).map(node)}</ul>`;
}

export interface PageOptions {
  nonce: string;
  /** Base path of this page (/s/<token> or the owner's /w/<id>), for exports, blocks and the live socket. */
  base: string;
  /** The owner view's panel (navigation, share link, feedback form), above the live blocks; marks the page as the owner's. */
  panel?: Html;
  /** Passed to the blocks renderer (the live client fetches the same blocks from `<base>/blocks`). */
  blocks?: BlockOptions;
}

/** Everything the page shows of the workflow, as blocks with stable ids (the live client swaps them by id). */
export function renderWorkflowBlocks(view: WorkflowView & { feedback?: FeedbackView[] }, options: BlockOptions = {}): Html {
  const names = new Map(view.tasks.map((t) => [t.id, t.name]));
  const taskName = (id: string) => names.get(id) ?? id;
  const labels = new Map<string, string>([
    [view.workflow.id, "the workflow"],
    ...view.tasks.map((t): [string, string] => [t.id, `task ${t.name}`]),
    ...view.decisions.map((d): [string, string] => [d.id, `decision ${d.question}`]),
    ...view.issues.map((i): [string, string] => [i.id, `issue ${i.type}`]),
  ]);
  return html`${renderHeader(view.workflow)}
${renderTotals(view.totals)}
${renderWorkflowLines(view)}
${renderReview(view, options)}
${renderFeedback(view.feedback ?? [], (id) => labels.get(id) ?? id)}
<section id="wf-tasks"><h2>Tasks</h2>${renderTaskTree(view)}</section>
<section id="wf-decisions"><h2>Decisions</h2><ol class="cards" id="decisions">${view.decisions.map((d) => renderDecision(d, taskName(d.task_id)))}</ol></section>
<section id="wf-issues"><h2>Issues</h2><ol class="cards" id="issues">${view.issues.map((i) => renderIssue(i, taskName(i.task_id)))}</ol></section>
${renderChain(view)}`;
}

/** The event log's hash chain head: anyone can check a JSON export against it offline. */
function renderChain(view: WorkflowView): Html {
  if (!view.chain) return html``;
  return html`<footer id="wf-chain" class="chain">Record: ${view.chain.events} events, hash chain head
<code title="sha256 chain over every event">${view.chain.head}</code>. Check a JSON export offline with
<code>waymark verify export.json</code>.</footer>`;
}

export function renderWorkflowPage(view: WorkflowView, options: PageOptions): Html {
  const { nonce, base, panel } = options;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${view.workflow.name} — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main id="wm" data-base="${base}" data-seq="${view.last_seq}" data-state="static"${panel ? html` data-audience="owner"` : ""}>
<p class="topbar"><span class="brand">Waymark</span> <span id="live" class="live">static</span>
<a href="${base}/export.md">Markdown</a> <a href="${base}/export.json">JSON</a></p>
${panel ?? ""}
<div id="wf-blocks">${renderWorkflowBlocks(view, options.blocks)}</div>
</main>
<script nonce="${nonce}">${raw(LIVE_SCRIPT)}</script>
</body></html>`;
}

/** Shown for a revoked, expired, rotated or unknown link: says so, shows nothing of the workflow. */
export function renderGonePage(nonce: string): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>Not shared — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main class="gone"><h1>This workflow is no longer shared</h1><p>The link was revoked, has expired or never existed. Ask the owner for a new link.</p></main></body></html>`;
}
