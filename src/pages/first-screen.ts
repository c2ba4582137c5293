/**
 * @module pages/first-screen
 * What a reviewer deciding whether to merge asks first, answered at the top of a workflow's page,
 * each answer with where it came from: what needs me (review items: failed tasks, tasks that asked
 * for review or changed files outside their areas, issues flagged for a human; and the figures
 * that are not computed and signed), did the checks pass (per kind, what the hooks observed after
 * each task's last edit next to what the agent claimed), what is outside the declared areas, and
 * what changed (one list of files across the tasks, each with its task and where to see its
 * diff). The counts are the head's (@waymark/protocol/review-counts, over the whole workflow), the
 * same numbers as the exports and `waymark summary`; the lists are this page's tasks. On the owner
 * view every open item carries its own review form, which works without script and which the
 * page script sends without leaving the page. Agent text is only ever interpolated.
 */
import type { CheckLine } from "@waymark/protocol/check-evidence";
import { displayPath } from "@waymark/protocol/paths";
import { checkLabel, checkWording } from "@waymark/protocol/provenance-wording";
import { type ReviewCounts, type ReviewState, Verdicts } from "@waymark/protocol/review-counts";
import { counted } from "@waymark/protocol/wording";
import { html } from "hono/html";
import type { FeedbackView } from "../domain/view";
import { renderSegment } from "./check-evidence";
import { STATUS_WORD } from "./files";
import { srOnly } from "./format";
import type { ChangedRow, OutsideTask, ReviewItem, TimelineFacts } from "./timeline";

type Html = ReturnType<typeof html>;

const STATE_WORDS: Record<ReviewState, string> = { open: "open", approved: "approved", changes_requested: "changes requested" };
const STATE_SHAPE: Record<ReviewState, string> = { open: "⚑", approved: "✓", changes_requested: "✕" };

/**
 * A review form in place: the message, then approve, request changes or comment (the button is
 * the verdict). Posted to the owner's feedback route; without script it comes back to the page,
 * with script it is sent in the background and the blocks are fetched again (client/review.ts).
 */
export function reviewForm(reviewBase: string, target: string, subject: string, idPrefix: string): Html {
  const id = `${idPrefix}-${target.replace(/[^A-Za-z0-9_-]/g, "-")}`;
  return html`<details class="rv" id="${id}"><summary>Review${srOnly(` ${subject}`)}</summary><form method="post" action="${reviewBase}/feedback" class="rv-form"><input type="hidden" name="target" value="${target}"><label for="${id}-body">Message to the agent <span class="muted">(needed for a comment)</span></label><textarea id="${id}-body" name="body" rows="2" maxlength="2000"></textarea><span class="rv-buttons"><button name="verdict" value="approved">Approve</button><button name="verdict" value="changes_requested">Request changes</button><button name="verdict" value="comment">Comment</button></span><span class="rv-status" role="status"></span></form></details>`;
}

const stateBadge = (state: ReviewState) =>
  html`<span class="badge rv-${state}"><span class="shape" aria-hidden="true">${STATE_SHAPE[state]}</span> ${STATE_WORDS[state]}</span>`;

function renderItem(item: ReviewItem, state: ReviewState, reviewBase: string | undefined): Html {
  const target = `${item.kind}:${item.id}`;
  const subject = item.kind === "task" ? `task ${item.title}` : `issue ${item.title} in ${item.task?.name ?? "its task"}`;
  return html`<li id="nr-${item.id}" class="nr nr-${state}" tabindex="-1"><span class="kind">${item.kind}</span> ${
    item.kind === "task"
      ? html`<a href="#${item.id}">${item.title}</a>`
      : html`<a href="#${item.id}">${item.title}</a> in <a href="#${item.task?.id ?? ""}">${item.task?.name ?? ""}</a>`
  }: ${item.reasons.join("; ")} ${stateBadge(state)}${state !== "approved" && reviewBase ? reviewForm(reviewBase, target, subject, "nr") : ""}</li>`;
}

/** The figures that are not computed and signed, over the whole workflow. */
function figuresLine(counts: ReviewCounts): Html | string {
  const f = counts.figures;
  const parts = [
    f.files_claimed > 0 ? `the files of ${counted(f.files_claimed, "task")} are claimed by the client` : "",
    f.files_not_observed > 0 ? `the files of ${counted(f.files_not_observed, "task")} were not observed` : "",
    f.usage_claimed > 0 ? `the usage of ${counted(f.usage_claimed, "task")} is claimed by the client` : "",
  ].filter(Boolean);
  if (parts.length === 0) return "";
  return html`<p class="figures"><span class="tag warn">not computed and signed</span> ${parts.join("; ")} (<a href="#wf-provenance">where the figures come from</a>).</p>`;
}

export interface NeedsYouOptions {
  reviewBase?: string;
  /** Review items of the workflow on other pages of the timeline. */
  elsewhere: number;
}

/**
 * What needs a person: the open review items (each with its reasons and, on the owner view, its
 * review form), those approved since (collapsed), and the figures no device signed. The count in
 * the heading is the head's, over the whole workflow.
 */
export function renderNeedsYou(
  facts: TimelineFacts,
  counts: ReviewCounts,
  feedback: readonly FeedbackView[],
  options: NeedsYouOptions,
): Html {
  const verdicts = new Verdicts(feedback);
  const listed = facts.review.map((item) => ({ item, state: verdicts.stateOf(item.id, item.since) }));
  const open = listed.filter((l) => l.state !== "approved");
  const approved = listed.filter((l) => l.state === "approved");
  const { review } = counts;
  const more = facts.reviewOmitted + options.elsewhere;
  return html`<section id="wf-review" class="box needs" aria-labelledby="wf-review-title"><h2 id="wf-review-title"><span aria-hidden="true">⚑</span> What needs you <span class="count">${counted(review.open, "open item")}${review.approved > 0 ? ` · ${review.approved} approved` : ""}</span></h2>
<p class="source">From the record: tasks the agent reported failed, tasks that asked for review or changed files outside their declared areas, issues it flagged for a human. Each stays open until a person approves it on this page.</p>
${
  open.length > 0
    ? html`<ul class="nr-list" id="nr-open">${open.map(({ item, state }) => renderItem(item, state, options.reviewBase))}</ul>`
    : html`<p id="nr-none">${review.open === 0 ? "Nothing is waiting for a review." : "Nothing open on this page of the timeline."}</p>`
}${more > 0 ? html`<p class="muted">… and ${counted(more, "more item")} in ${options.elsewhere > 0 ? "other pages of " : ""}the timeline</p>` : ""}${
  approved.length > 0
    ? html`<details class="settled" id="nr-settled"><summary>${counted(approved.length, "item")} approved</summary><ul class="nr-list">${approved.map(
        ({ item, state }) => renderItem(item, state, undefined),
      )}</ul></details>`
    : ""
}${figuresLine(counts)}</section>`;
}

const OBSERVED_WORDS = [
  ["passed", "✓", "passed"],
  ["failed", "✕", "failed"],
  ["exit_unknown", "?", "exit not observed"],
  ["not_run", "○", "not run after the last edit"],
  ["not_observed", "–", "not observed"],
] as const;
const CLAIMED_WORDS = [
  ["passed", "passed"],
  ["failed", "failed"],
  ["not_run", "not run"],
  ["ran", "ran one"],
  ["none", "no claim"],
] as const;
const KIND_LABEL = { test: "Tests", build: "Build", lint: "Lint", typecheck: "Type-check" } as const;

/** A task's check line whose observation is not a pass after its last edit, or whose claim the observation does not bear out. */
function exceptional(line: CheckLine): boolean {
  return line.observation?.last?.exit_code !== 0;
}

/**
 * Did the checks pass: per kind, the tasks by what the hooks observed after each one's last edit,
 * next to what the agent claimed (whole workflow, the head's counts); then this page's tasks, each
 * check in words, those that did not pass first.
 */
export function renderChecks(facts: TimelineFacts, counts: ReviewCounts): Html {
  const kinds = (Object.keys(KIND_LABEL) as (keyof typeof KIND_LABEL)[]).filter((kind) => {
    const c = counts.checks[kind];
    return Object.values(c.observed).some((n) => n > 0);
  });
  const tasks = [...facts.checks].sort((a, b) => Number(b.lines.some(exceptional)) - Number(a.lines.some(exceptional)));
  return html`<section id="wf-checks" class="box" aria-labelledby="wf-checks-title"><h2 id="wf-checks-title">Did the checks pass?</h2>
<p class="source">Observed: the commands the Waymark helper's hooks saw the agent run (exit code and time, never output), the last of each kind after each task's last edit. Claimed: what the agent said.</p>
${
  kinds.length === 0
    ? html`<p>No check was claimed or observed.</p>`
    : html`<ul class="checks-summary">${kinds.map((kind) => {
        const c = counts.checks[kind];
        const observed = OBSERVED_WORDS.filter(([key]) => c.observed[key] > 0).map(
          ([key, shape, words]) =>
            html`<span class="ck ck-${key}"><span aria-hidden="true">${shape}</span> ${c.observed[key]} ${words}</span>`,
        );
        const claimed = CLAIMED_WORDS.filter(([key]) => c.claimed[key] > 0).map(([key, words]) => `${c.claimed[key]} ${words}`);
        return html`<li><strong>${KIND_LABEL[kind]}</strong> <span class="muted">(${counted(
          Object.values(c.observed).reduce((a, b) => a + b, 0),
          "task",
        )})</span>: observed ${observed.map((o, i) => html`${i > 0 ? " · " : ""}${o}`)}; claimed: ${claimed.join(" · ")}</li>`;
      })}</ul>`
}${
  tasks.length > 0
    ? html`<ul class="check-tasks">${tasks.map(
        ({ task, lines }) =>
          html`<li><a href="#${task.id}">${task.name}</a>: ${lines.map(
            (line, i) => html`${i > 0 ? html`<br>` : ""}<strong>${checkLabel(line)}:</strong> ${checkWording(line).map(renderSegment)}`,
          )}</li>`,
      )}${facts.checksOmitted > 0 ? html`<li class="muted">… and ${counted(facts.checksOmitted, "more task")} in the timeline</li>` : ""}</ul>`
    : ""
}</section>`;
}

/** What is outside the declared areas: per task, its areas and the files outside them. */
export function renderOutside(facts: TimelineFacts, counts: ReviewCounts): Html {
  const { tasks, files } = counts.outside_areas;
  const row = (o: OutsideTask) =>
    html`<li><a href="#${o.task.id}">${o.task.name}</a> <span class="muted">(areas: ${o.areas.length > 0 ? o.areas.join(", ") : "none declared"})${
      o.throughSubtasks ? ", through its subtasks" : ""
    }</span>: ${o.paths.map(
      (path, i) => html`${i > 0 ? ", " : ""}<code>${path}</code>`,
    )}${o.more > 0 ? ` and ${counted(o.more, "more file")}` : ""}</li>`;
  return html`<section id="wf-outside" class="box" aria-labelledby="wf-outside-title"><h2 id="wf-outside-title">Outside the declared areas <span class="count">${
    files === 0 ? "none" : `${counted(tasks, "task")}, ${counted(files, "file")}`
  }</span></h2>
<p class="source">Each task declared its areas when it started; the files the helper computed are matched against them (a parent's files include its subtasks'). Advisory: nothing was blocked.</p>
${
  facts.outside.length > 0
    ? html`<ul>${facts.outside.map(row)}${facts.outsideOmitted > 0 ? html`<li class="muted">… and ${counted(facts.outsideOmitted, "more task")}</li>` : ""}</ul>`
    : html`<p>${files === 0 ? "Every changed file is inside its task's declared areas (or the task declared none)." : "None on this page of the timeline."}</p>`
}</section>`;
}

/** Where to see one file's change: the host's compare view, and the git command (always, to copy). */
function diffCell(changed: ChangedRow): Html {
  const { diff, row } = changed;
  const link = diff.url
    ? html`<a href="${diff.url}" rel="noreferrer">diff on ${diff.host}${srOnly(` of ${displayPath(row.path)}`)}</a> `
    : "";
  const command = diff.command ? html`<code class="cmd">${diff.command}</code>` : html`<span class="muted">no start commit recorded</span>`;
  return html`${link}${row.uncommitted && diff.command ? html`<span class="muted">uncommitted, on the developer's machine: </span>` : ""}${command}`;
}

/**
 * What changed: one list of the files this page's tasks changed (each task's own files: a
 * subtask's are under it, not its parent), path order, each with its change, its lines, the task
 * that changed it, what needs an eye, and where to see its diff; on the owner view a review link
 * per file (its feedback is about the task, naming the file).
 */
export function renderChanged(facts: TimelineFacts, totalFiles: number, reviewBase: string | undefined): Html {
  const rows = [...facts.changed].sort((a, b) =>
    a.row.path < b.row.path ? -1 : a.row.path > b.row.path ? 1 : a.task.name.localeCompare(b.task.name),
  );
  const tasks = new Set(rows.map((r) => r.task.id)).size;
  const cells = (c: ChangedRow) => {
    const r = c.row;
    const lines =
      r.lines === null
        ? html`<td class="num muted" data-label="lines" colspan="2">not measured</td>`
        : r.lines === "binary"
          ? html`<td class="num muted" data-label="lines" colspan="2">binary</td>`
          : html`<td class="num add" data-label="added">+${r.lines.added}</td><td class="num del" data-label="removed">−${r.lines.removed}</td>`;
    const review = reviewBase
      ? html` <a class="review-link" href="${reviewBase}?on=${c.task.id}#feedback" data-review="task:${c.task.id}" data-path="${r.path}">Review${srOnly(` ${displayPath(r.path)} in task ${c.task.name}`)}</a>`
      : "";
    return html`<tr class="chg${r.outOfScope ? " out-of-scope" : ""}"><td data-label="change"><span class="fs fs-${r.status}" aria-hidden="true">${r.status}</span><span class="sr-only">${STATUS_WORD[r.status]}</span></td><td class="path" data-label="file"><code>${
      r.from === undefined ? displayPath(r.path) : `${displayPath(r.from)} → ${displayPath(r.path)}`
    }</code>${r.uncommitted ? html` <span class="tag">○ uncommitted</span>` : ""}${r.outOfScope ? html` <span class="tag warn">⚠ outside declared areas</span>` : ""}</td>${lines}<td data-label="task"><a href="#${c.task.id}">${c.task.name}</a>${review}</td><td class="diff" data-label="diff">${diffCell(c)}</td></tr>`;
  };
  const more = facts.changedOmitted > 0 || facts.changedUnlisted > 0;
  return html`<section id="wf-changed" class="box" aria-labelledby="wf-changed-title"><h2 id="wf-changed-title">What changed <span class="count">${counted(totalFiles, "file")}${
    tasks > 0 ? ` · ${counted(rows.length, "change")} by ${counted(tasks, "task")} listed here` : ""
  }</span></h2>
<p class="source">Computed from git on the developer's machine by the Waymark helper (<a href="#wf-provenance">where the figures come from</a>); lines added and removed per file; the diff on the repository's host when its remote and the task's commits were recorded, else the command that shows it in a clone.</p>
${
  rows.length === 0
    ? html`<p>No changed file was recorded.</p>`
    : html`<table class="changed"><thead><tr><th scope="col"><span class="sr-only">Change</span></th><th scope="col">File</th><th scope="col" colspan="2">Lines</th><th scope="col">Task</th><th scope="col">Diff</th></tr></thead><tbody>${rows.map(cells)}</tbody></table>`
}${more ? html`<p class="muted">More files are listed under their tasks below${facts.changedOmitted > 0 ? ` (${counted(facts.changedOmitted, "change")} past this list)` : ""}.</p>` : ""}</section>`;
}
