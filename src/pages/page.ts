/**
 * @module pages/page
 * The shared workflow page, rendered on the server with hono/html: every interpolated value is
 * escaped, and agent text is only ever interpolated. `raw` is used for the static stylesheet
 * and script only. This is the page's only renderer: the live client (live-client.ts) fetches
 * the blocks again after events and swaps in what changed, keyed by the element ids given here.
 * The owner view (owner-view.ts) is this page with the owner's panels and comment links.
 *
 * The page is written as a stream of chunks from the workflow's head and its task entries (the
 * paged reads), so a 5,000-task workflow is never held in memory: the timeline (timeline.ts)
 * is written as entries arrive, and the boxes a reviewer wants first (review, feedback, plan)
 * are written after it, from what the timeline gathered, and shown above it by the stylesheet
 * (flex `order`). Printing keeps that order.
 */
import type { LineTotals } from "@waymark/protocol/review-fields";
import { html, raw } from "hono/html";
import type { FeedbackVerdict, FeedbackView, PlanStep, TaskEntry, Totals, WorkflowHead, WorkflowHeader } from "../domain/view";
import { formatCompact, formatCount, formatDuration, renderTime, statusBadge } from "./format";
import { LIVE_SCRIPT } from "./live-client";
import { renderWorkflowRepository } from "./provenance-notes";
import { renderLineTotals } from "./review-data";
import { PAGE_STYLE } from "./style";
import { labelled } from "./task";
import { type Chunk, type ReviewItem, Timeline, type TimelineFacts } from "./timeline";

type Html = ReturnType<typeof html>;

const list = (items: readonly string[]) => (items.length > 0 ? html`<ul>${items.map((item) => html`<li>${item}</li>`)}</ul>` : "");

function renderHeader(w: WorkflowHeader): Html {
  return html`<div id="wf-header" data-status="${w.status}">
    <h1><span class="wf-name">${w.name}</span> ${statusBadge(w.status)}</h1>
    ${w.description ? html`<p class="description">${w.description}</p>` : ""}
    ${renderWorkflowRepository(w)}
    <p class="times">Started ${renderTime(w.created_at)}${
      w.completed_at ? html` · <strong>completed ${renderTime(w.completed_at)}</strong>` : ""
    } · last activity ${renderTime(w.updated_at)}</p>
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

function renderTotals(t: Totals): Html {
  const cell = (value: string, label: string, exact?: string) =>
    html`<div><b${exact ? html` title="${exact}"` : ""}>${value}</b><span>${label}</span></div>`;
  const tokens = t.input_tokens + t.output_tokens;
  return html`<div id="wf-totals" class="totals">
    ${cell(formatDuration(t.duration_seconds) || "0s", "duration")}${cell(formatCount(t.tasks), "tasks")}${cell(formatCount(t.open_tasks), "open")}${cell(
      formatCount(t.files_changed),
      "files changed",
    )}${cell(formatCount(t.decisions), "decisions")}${cell(formatCount(t.issues), "issues")}${cell(formatCount(t.reviews_needed), "reviews needed")}${
      // Usage totals only once some task reported metrics.
      tokens > 0 || t.cost_usd > 0
        ? html`${cell(tokens >= 10_000 ? formatCompact(tokens) : formatCount(tokens), "tokens", `${formatCount(tokens)} tokens`)}${cell(`$${t.cost_usd.toFixed(2)}`, "cost", `$${t.cost_usd.toFixed(4)}`)}`
        : ""
    }
  </div>`;
}

export const VERDICT_LABEL: Record<FeedbackVerdict, string> = {
  comment: "comment",
  approved: "approved",
  changes_requested: "changes requested",
};

const VERDICT_SHAPE: Record<FeedbackVerdict, string> = { comment: "✎", approved: "✓", changes_requested: "✕" };

const verdictBadge = (verdict: FeedbackVerdict) =>
  html`<span class="badge v-${verdict}"><span class="shape" aria-hidden="true">${VERDICT_SHAPE[verdict]}</span> ${VERDICT_LABEL[verdict]}</span>`;

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
  /** The id the owner's feedback form is preselected on (always among its choices). */
  selected?: string | null;
}

/** Everything that asks for a human: issues flagged for review and tasks whose outcome asks for manual review. */
function renderReview(items: readonly ReviewItem[], omitted: number, feedback: readonly FeedbackView[], options: BlockOptions = {}): Html {
  const latest = verdicts(feedback);
  const state = (id: string) => {
    const verdict = latest.get(id);
    const review = options.reviewBase ? html` <a class="review-link" href="${options.reviewBase}?on=${id}#feedback">Review</a>` : "";
    return html`${verdict ? html` ${verdictBadge(verdict)}` : ""}${review}`;
  };
  return html`<section id="wf-review" class="review box"${items.length === 0 ? html` hidden` : ""}>
    <h2>⚑ Needs human review <span class="count">${formatCount(items.filter((item) => latest.get(item.id) !== "approved").length + omitted)} open</span></h2>
    <ul>${items.map(
      (item) =>
        html`<li${latest.get(item.id) === "approved" ? html` class="settled"` : ""}><span class="kind">${item.kind}</span> <a href="#${item.id}">${item.title}</a>: ${item.text}${state(item.id)}</li>`,
    )}${omitted > 0 ? html`<li class="muted">… and ${formatCount(omitted)} more in the timeline</li>` : ""}</ul>
  </section>`;
}

/** Reviewer feedback, oldest first, and whether the agent has received each item yet. */
function renderFeedback(feedback: readonly FeedbackView[], targetName: (id: string) => string): Html {
  return html`<section id="wf-feedback" class="box"${feedback.length === 0 ? html` hidden` : ""}><h2>Reviewer feedback</h2>
    <ol class="cards" id="feedback-list">${feedback.map(
      (f) => html`<li class="feedback v-${f.verdict}" id="${f.id}">
      <p>${verdictBadge(f.verdict)} on <a href="#${f.target_id}">${targetName(f.target_id)}</a>
      <span class="muted">${renderTime(f.created_at)} · ${f.delivered_at ? html`delivered to the agent ${renderTime(f.delivered_at)}` : "waiting for the agent's next call"}</span></p>
      <p class="fb-body">${f.body}</p></li>`,
    )}</ol></section>`;
}

const STEP_STATE = { done: "", running: "in progress: ", failed: "failed: " } as const;

/** The plan, each step with the tasks named after it (where their names or goals say so): done, in progress or failed. */
function renderPlan(plan: readonly PlanStep[], steps: TimelineFacts["steps"]): Html | string {
  if (plan.length === 0) return "";
  const isDone = (step: TimelineFacts["steps"][number] | undefined) => (step?.tasks ?? []).some((t) => t.state === "done");
  const done = steps.filter(isDone).length;
  return html`<section id="wf-plan" class="plan box"><h2>Plan <span class="count">${done} of ${plan.length} steps done by a task named after them</span></h2><ol class="steps">${plan.map(
    (p, i) => {
      const step = steps[i] ?? { tasks: [], omitted: 0 };
      const finished = isDone(step);
      return html`<li class="step${finished ? " done" : ""}"><span class="step-mark" aria-hidden="true">${finished ? "✓" : "○"}</span> <strong>${p.step}</strong> — ${p.goal}${
        step.tasks.length > 0
          ? html` <span class="muted">· ${step.tasks.map(
              (t, j) => html`${j > 0 ? ", " : ""}${STEP_STATE[t.state]}<a href="#${t.id}">${t.name}</a>`,
            )}${step.omitted > 0 ? ` and ${formatCount(step.omitted)} more` : ""}</span>`
          : html` <span class="muted">· no task named after it</span>`
      }</li>`;
    },
  )}</ol></section>`;
}

function renderWorkflowLines(lines: LineTotals | null): Html | string {
  return lines ? html`<p class="muted" id="wf-lines">Lines changed: ${renderLineTotals(lines)}</p>` : "";
}

/** The event log's hash chain head: anyone can check a JSON export against it offline. */
function renderChain(head: WorkflowHead): Html {
  return html`<footer id="wf-chain" class="chain">Record: ${formatCount(head.chain.events)} events, hash chain head
<code title="sha256 chain over every event">${head.chain.head}</code>. Check a JSON export offline with
<code>waymark verify export.json</code>.</footer>`;
}

/**
 * Everything the page shows of the workflow, as blocks with stable ids (the live client swaps
 * them by id), chunk by chunk; returns what the timeline gathered (the owner's form needs it).
 */
export async function* workflowBlocks(
  head: WorkflowHead,
  entries: AsyncIterable<TaskEntry>,
  options: BlockOptions = {},
): AsyncGenerator<Chunk, TimelineFacts> {
  const feedback = head.feedback ?? [];
  const timeline = new Timeline({
    plan: head.workflow.plan,
    totalTasks: head.task_count,
    labelsFor: new Set(feedback.map((f) => f.target_id)),
    selected: options.selected ?? null,
    ...(options.reviewBase ? { reviewBase: options.reviewBase } : {}),
  });
  yield renderHeader(head.workflow);
  yield renderTotals(head.totals);
  yield renderWorkflowLines(head.line_totals);
  yield `<section id="wf-tasks"><h2>Timeline</h2><ol class="tree" id="tl-root">`;
  let broken = false;
  try {
    for await (const entry of entries) yield* timeline.add(entry);
  } catch (error) {
    // A page of the read failed (the link was revoked meanwhile, say): the page still closes whole, and says so.
    console.error("timeline read failed", error);
    broken = true;
  }
  yield* timeline.finish();
  yield "</ol></section>";
  if (broken) yield `<p class="alert" id="wf-broken">Part of this workflow could not be read. Reload the page.</p>`;
  const facts = timeline.facts;
  facts.labels.set(head.workflow.id, "the workflow");
  yield renderReview(facts.review, facts.reviewOmitted, feedback, options);
  yield renderFeedback(feedback, (id) => facts.labels.get(id) ?? id);
  yield renderPlan(head.workflow.plan, facts.steps);
  yield renderChain(head);
  return facts;
}

export interface PageOptions {
  nonce: string;
  /** Base path of this page (/s/<token> or the owner's /w/<id>), for exports, blocks and the live socket. */
  base: string;
  /** Owner panels: above the blocks (navigation, share link), and after them from what the timeline gathered (feedback form). */
  panel?: { top: Html; bottom: (facts: TimelineFacts) => Html };
  /** Passed to the blocks renderer (the live client fetches the same blocks from `<base>/blocks`). */
  blocks?: BlockOptions;
}

export async function* workflowPage(head: WorkflowHead, entries: AsyncIterable<TaskEntry>, options: PageOptions): AsyncGenerator<Chunk> {
  const { nonce, base, panel } = options;
  const active = head.workflow.status === "active";
  yield html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${head.workflow.name} — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main id="wm" data-base="${base}" data-seq="${head.last_seq}" data-state="static"${panel ? html` data-audience="owner"` : ""}>
<p class="topbar"><span class="brand">Waymark</span> <span id="live" class="live"${active ? "" : html` hidden`}>not live</span>
<a href="${base}/export.md">Markdown</a> <a href="${base}/export.json">JSON</a></p>
${panel?.top ?? ""}
<div id="wf-blocks">`;
  const facts = yield* workflowBlocks(head, entries, options.blocks);
  yield "</div>";
  if (panel) yield panel.bottom(facts);
  yield html`</main>
<script nonce="${nonce}">${raw(LIVE_SCRIPT)}</script>
</body></html>`;
}

/** Shown for a revoked, expired, rotated or unknown link: says so, shows nothing of the workflow. */
export function renderGonePage(nonce: string): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><link rel="icon" href="data:,"><title>Not shared — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main class="gone"><h1>This workflow is no longer shared</h1><p>The link was revoked, has expired or never existed. Ask the owner for a new link.</p></main></body></html>`;
}
