/**
 * @module pages/page
 * The shared workflow page, rendered on the server with hono/html: every interpolated value is
 * escaped, and agent text is only ever interpolated. `raw` is used for the static stylesheet
 * and script only. This is the page's only renderer: the live client (client/live.ts) fetches
 * the blocks again after events and swaps in what changed, keyed by the element ids given here.
 * The owner view (owner-view.ts) is this page with the owner's panels and comment links.
 *
 * One request renders one page of the timeline (pages.ts reads it: a bounded number of tasks,
 * each with its first files; the rest is a link away), so what a page costs is bounded whatever
 * the workflow's size. The document's order is the reading order a reviewer needs and the
 * screen shows: the workflow, its totals, what needs a human, the feedback, the plan, then the
 * timeline — the boxes before the timeline are written from what its page gathered, so the
 * timeline is rendered first and written after them. Headings give the outline (h1 workflow, h2
 * sections, h3 tasks, deeper for subtasks and a task's fields).
 */
import type { LineTotals } from "@waymark/protocol/review-fields";
import { html, raw } from "hono/html";
import type {
  FeedbackAuthor,
  FeedbackChannel,
  FeedbackVerdict,
  FeedbackView,
  PlanStep,
  TaskPage,
  Totals,
  WorkflowHead,
  WorkflowHeader,
} from "../domain/view";
import { LIMITS } from "../limits";
import { renderChanged, renderChecks, renderNeedsYou, renderOutside } from "./first-screen";
import { formatCompact, formatCount, formatDuration, formatUsd, renderTime, srOnly, statusBadge } from "./format";
import { commonProvenance, renderCommonProvenance, renderWorkflowRepository } from "./provenance-notes";
import { renderLineTotals } from "./review-data";
import { LIVE_SCRIPT } from "./scripts";
import { PAGE_STYLE } from "./style";
import { labelled } from "./task";
import { Timeline, type TimelineFacts } from "./timeline";

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
        ? html`<div class="outcome wf-outcome"><h2>Outcome</h2><p>${w.outcome.summary}</p>${labelled("Achievements", list(w.outcome.achievements), 3)}${labelled(
            "Limitations",
            list(w.outcome.limitations),
            3,
          )}</div>`
        : ""
    }
  </div>`;
}

/**
 * The workflow's figures; a rounded one says its exact value beside its label (never only on
 * hover); each label in the number its figure needs. "Needs review" is the open review items of
 * the head's counts (@waymark/protocol/review-counts), the number the review box, the exports and
 * `waymark summary` show.
 */
function renderTotals(t: Totals, head: WorkflowHead): Html {
  const cell = (value: string, label: string, exact?: string) =>
    html`<div><b>${value}</b><span>${label}${exact && exact !== value ? ` (${exact})` : ""}</span></div>`;
  const count = (n: number, one: string, many = `${one}s`) => cell(formatCount(n), n === 1 ? one : many);
  const tokens = t.input_tokens + t.output_tokens;
  return html`<div id="wf-totals" class="totals">
    ${cell(formatDuration(t.duration_seconds) || "0s", "duration")}${count(t.tasks, "task")}${cell(formatCount(t.open_tasks), "open")}${count(
      t.files_changed,
      "file changed",
      "files changed",
    )}${count(t.decisions, "decision")}${count(t.issues, "issue")}${cell(formatCount(head.review.review.open), "open for review")}${
      // Usage totals only once some task reported metrics.
      tokens > 0 || t.cost_usd > 0
        ? html`${cell(tokens >= 10_000 ? formatCompact(tokens) : formatCount(tokens), tokens === 1 ? "token" : "tokens", formatCount(tokens))}${cell(
            formatUsd(t.cost_usd),
            "cost (USD)",
          )}`
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

/** What the blocks depend on besides the workflow: the page's base and timeline page, and the owner view's review links. */
export interface BlockOptions {
  /** Base of this page (/s/<token> or /w/<id>): links to other timeline pages and to a task's files. */
  base: string;
  /** The cursor this page of the timeline starts after (null: the first page). */
  after: string | null;
  /** Base of the owner page (/w/<id>): each review item links to its feedback form. */
  reviewBase?: string;
  /** The id the owner's feedback form is preselected on (always among its choices). */
  selected?: string | null;
  /** The id of the key this deployment signs exports with (the chain's footer names it). */
  signingKey?: string;
}

const VIA: Record<FeedbackAuthor["via"], string> = {
  session: "signed in with",
  token: "sent with",
  oauth: "sent by an OAuth client approved with",
  github: "delivered by the GitHub receiver configured with",
};
const CHANNEL: Record<FeedbackChannel, string> = {
  page: "on the page",
  mcp_app: "from the review app in an MCP client (verdicts from there count as comments)",
  pull_request: "in a pull-request review",
};

/** Who posted a feedback item and where, in one wording for every rendering. */
export function feedbackAuthorText(f: FeedbackView): string {
  if (!f.author || !f.channel) return "author not recorded";
  const { kind, credential, via, client } = f.author;
  const token = kind === "managed_token" ? `token ${credential}` : "a bootstrap token";
  const app = via === "oauth" && client ? ` (client ${client})` : "";
  const where = f.location ? ` on ${f.location.line === null ? f.location.path : `${f.location.path}:${f.location.line}`}` : "";
  const github = f.author.github_user ? `${f.author.github_user.login} on GitHub, ` : "";
  return `${github}${VIA[via]} ${token}${app}, ${CHANNEL[f.channel]}${where}${f.requested_verdict ? requestedNote(f) : ""}`;
}

/**
 * Why a verdict someone asked for was recorded as a comment, in one wording for every rendering:
 * the channel could not tell a person from the agent, or the page session was signed in with the
 * credential that recorded the task under review.
 */
function requestedNote(f: FeedbackView): string {
  const asked = f.requested_verdict === "approved" ? "an approval" : "a request for changes";
  const why =
    f.channel === "page"
      ? "signed in with the credential that recorded this task, which the agent holds too: the server cannot tell a person from the agent"
      : "verdicts count only from the workflow's page";
  return `; asked for ${asked}, recorded as a comment (${why})`;
}

/** Reviewer feedback, oldest first, who posted each item and where, and whether the agent has received it yet. */
function renderFeedback(feedback: readonly FeedbackView[], targetName: (id: string) => string): Html {
  return html`<section id="wf-feedback" class="box" aria-labelledby="wf-feedback-title"${feedback.length === 0 ? html` hidden` : ""}><h2 id="wf-feedback-title">Reviewer feedback</h2>
    <ol class="cards" id="feedback-list">${feedback.map(
      (f) => html`<li class="feedback v-${f.verdict}" id="${f.id}">
      <p>${verdictBadge(f.verdict)} on <a href="#${f.target_id}">${targetName(f.target_id)}</a>
      <span class="muted">${renderTime(f.created_at)} · <span class="fb-author">${feedbackAuthorText(f)}</span> · ${f.delivered_at ? html`delivered to the agent ${renderTime(f.delivered_at)}` : "waiting for the agent's next call"}</span></p>
      <p class="fb-body">${f.body}</p></li>`,
    )}</ol></section>`;
}

const STEP_STATE = { done: "", running: "in progress: ", failed: "failed: " } as const;

/**
 * The plan, each step with the tasks named after it (where their names or goals say so): done,
 * in progress or failed; `paged`: only this page's tasks were looked at.
 */
function renderPlan(plan: readonly PlanStep[], steps: TimelineFacts["steps"], paged: boolean): Html | string {
  if (plan.length === 0) return "";
  const isDone = (step: TimelineFacts["steps"][number] | undefined) => (step?.tasks ?? []).some((t) => t.state === "done");
  const done = steps.filter(isDone).length;
  return html`<section id="wf-plan" class="plan box" aria-labelledby="wf-plan-title"><h2 id="wf-plan-title">Plan <span class="count">${done} of ${plan.length} steps done by a task named after them${
    paged ? " on this page of the timeline" : ""
  }</span></h2><ol class="steps">${plan.map((p, i) => {
    const step = steps[i] ?? { tasks: [], omitted: 0 };
    const finished = isDone(step);
    return html`<li class="step${finished ? " done" : ""}"><span class="step-mark" aria-hidden="true">${finished ? "✓" : "○"}</span>${srOnly(finished ? "done: " : "not done yet: ")}<strong>${p.step}</strong> — ${p.goal}${
      step.tasks.length > 0
        ? html` <span class="muted">· ${step.tasks.map(
            (t, j) => html`${j > 0 ? ", " : ""}${STEP_STATE[t.state]}<a href="#${t.id}">${t.name}</a>`,
          )}${step.omitted > 0 ? ` and ${formatCount(step.omitted)} more` : ""}</span>`
        : html` <span class="muted">· no task named after it</span>`
    }</li>`;
  })}</ol></section>`;
}

/** The lines changed in all, with a link to the one list of files below the first answers (What changed). */
function renderWorkflowLines(lines: LineTotals | null): Html | string {
  return lines
    ? html`<p class="muted" id="wf-lines">Lines changed: ${renderLineTotals(lines)} · <a href="#wf-changed">the files, by task</a></p>`
    : "";
}

/** The event log's hash chain head and the key exports are signed with: anyone can check a JSON export against them. */
function renderChain(head: WorkflowHead, signingKey: string | undefined): Html {
  const key = signingKey
    ? html` The JSON export is signed with key <code title="Ed25519 key id (RFC 7638 thumbprint)">${signingKey}</code>.`
    : "";
  return html`<footer id="wf-chain" class="chain">Record: ${formatCount(head.chain.events)} events, hash chain head
<code title="sha256 chain over every event">${head.chain.head}</code>.${key} Check a JSON export with
<code>waymark verify export.json --endpoint &lt;this site&gt;</code>.</footer>`;
}

/** The timeline's key: what the file letters, bars and marks say. */
const LEGEND = html`<p class="legend muted">Files: <span class="fs fs-A">A</span> added, <span class="fs fs-M">M</span> modified, <span class="fs fs-D">D</span> deleted, <span class="fs fs-R">R</span> renamed; each bar is a file's lines added and removed beside the task's largest change; "agent" counts the added lines the agent's own edit tools last wrote (solid in the bar), "others" those something else did (hatched), "not observed" those no hook saw (dashed).</p>`;

/** Links to the timeline's other pages: its first, and the next after this one. */
function renderPager(base: string, after: string | null, next: string | null, where: "top" | "bottom"): Html | string {
  if (after === null && next === null) return "";
  return html`<nav class="pager" aria-label="Timeline pages (${where})">${after !== null ? html`<a href="${base}">First tasks</a>` : ""}${
    next !== null ? html`<a href="${base}?after=${next}">Next tasks</a>` : ""
  }</nav>`;
}

export interface RenderedBlocks {
  /** The blocks' markup (bidi controls not yet revealed). */
  markup: string;
  facts: TimelineFacts;
}

/**
 * Everything the page shows of the workflow, as blocks with stable ids (the live client swaps
 * them by id), for one page of the timeline; with what the timeline gathered (the owner's form needs it).
 */
export function workflowBlocks(head: WorkflowHead, page: TaskPage, options: BlockOptions): RenderedBlocks {
  const feedback = head.feedback ?? [];
  // Provenance is said once for the page's tasks: read before the cards are written.
  const provenance = commonProvenance(
    page.entries.map((entry) => entry.task),
    head.workflow,
  );
  const timeline = new Timeline({
    plan: head.workflow.plan,
    provenance,
    totalTasks: head.task_count,
    labelsFor: new Set(feedback.map((f) => f.target_id)),
    selected: options.selected ?? null,
    base: options.base,
    ...(options.reviewBase ? { reviewBase: options.reviewBase } : {}),
  });
  const tasks: string[] = [];
  for (const entry of page.entries) for (const chunk of timeline.add(entry)) tasks.push(String(chunk));
  for (const chunk of timeline.finish()) tasks.push(String(chunk));
  const facts = timeline.facts;
  facts.labels.set(head.workflow.id, "the workflow");
  const paged = options.after !== null || page.next_cursor !== null;
  const elsewhere = paged ? Math.max(0, head.review.review.items - facts.reviewSeen) : 0;
  const markup = [
    renderHeader(head.workflow),
    renderTotals(head.totals, head),
    renderWorkflowLines(head.line_totals),
    // The first screen: what needs a person, whether the checks passed, what is outside the areas, what changed.
    html`<div id="wf-answers" class="answers">`,
    renderNeedsYou(facts, head.review, feedback, { elsewhere, ...(options.reviewBase ? { reviewBase: options.reviewBase } : {}) }),
    renderChecks(facts, head.review),
    renderOutside(facts, head.review),
    html`</div>`,
    renderChanged(facts, head.totals.files_changed, options.reviewBase),
    renderCommonProvenance(provenance),
    renderFeedback(feedback, (id) => facts.labels.get(id) ?? id),
    renderPlan(head.workflow.plan, facts.steps, paged),
    html`<section id="wf-tasks" aria-labelledby="wf-tasks-title"><h2 id="wf-tasks-title">Timeline${
      paged ? html` <span class="count">${formatCount(facts.tasks)} of ${formatCount(head.task_count)} tasks on this page</span>` : ""
    }</h2>${LEGEND}${renderPager(options.base, options.after, page.next_cursor, "top")}<ol class="tree" id="tl-root">`,
    ...tasks,
    html`</ol>${renderPager(options.base, options.after, page.next_cursor, "bottom")}</section>`,
    renderChain(head, options.signingKey),
  ]
    .map(String)
    .join("");
  return { markup, facts };
}

export interface PageOptions {
  nonce: string;
  /** Base path of this page (/s/<token> or the owner's /w/<id>), for exports, blocks and the live socket. */
  base: string;
  /** The page's query (`?after=<cursor>`): the live client fetches the blocks of the same timeline page. */
  query: string;
  /** Owner panels: navigation before the blocks, the feedback form and share link after them. */
  panel?: { top: Html; bottom: Html };
}

/** The whole page around the blocks (rendered by workflowBlocks, perhaps cached). */
export function workflowPage(head: WorkflowHead, blocks: string, options: PageOptions): string {
  const { nonce, base, panel } = options;
  const active = head.workflow.status === "active";
  return String(html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${head.workflow.name} — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main id="wm" data-base="${base}" data-query="${options.query}" data-seq="${head.last_seq}" data-state="static"${
    panel ? html` data-audience="owner"` : html` data-fetch-budget="${LIMITS.LIVE_FETCHES}/${LIMITS.LIVE_FETCH_WINDOW_MS}"`
  }>
<a class="skip" href="#wf-blocks">Skip to the workflow</a>
<div class="topbar"><span class="brand">Waymark</span> <span id="live" class="live"${active ? "" : html` hidden`}>not live</span>
<a href="${base}/export.md">Markdown export</a> <a href="${base}/export.json">JSON export</a> <a href="${base}/export.agent-trace.json">Agent Trace</a></div>
${panel?.top ?? ""}
<div id="wf-blocks" tabindex="-1">${raw(blocks)}</div>
${panel?.bottom ?? ""}
<div id="wf-announce" class="sr-only" role="status" aria-live="polite"></div>
</main>
<script nonce="${nonce}">${raw(LIVE_SCRIPT)}</script>
</body></html>`);
}

/** Shown for a revoked, expired, rotated or unknown link: says so, shows nothing of the workflow. */
export function renderGonePage(nonce: string): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><link rel="icon" href="data:,"><title>Not shared — Waymark</title>
<style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main class="gone"><a class="skip" href="#main-content">Skip to content</a><h1 id="main-content" tabindex="-1">This workflow is no longer shared</h1><p>The link was revoked, has expired or never existed. Ask the owner for a new link.</p></main></body></html>`;
}
