/**
 * @module pr-summary
 * A workflow as pull-request-ready Markdown (GitHub Flavored): per task its outcome, its files
 * with lines added and removed (and who wrote the added ones), its commits and branch, its decisions and what needs a
 * reviewer. One renderer for the edge's Markdown export and the helper's `waymark summary`.
 *
 * Two kinds of text, two treatments:
 * - Paths are shown verbatim in code spans (a fence longer than any backtick run inside;
 *   control characters and bidi controls made visible; `|` escaped inside tables, as GFM
 *   requires even in code). A rename is one row; a parent task lists only its own files,
 *   its subtasks list theirs.
 * - Agent text is untrusted: what Markdown or inline HTML would act on is backslash-escaped, and
 *   only that (prose stays readable: `app.js`, `claude-sonnet-4-5`, `agent's`, `snake_case`),
 *   and line breaks are folded, so an agent cannot add headings, links, images, HTML, emphasis
 *   or break out of a list item. GitHub's autolinks and mentions (e-mail addresses, `@name`,
 *   `www.`, `scheme:`) ignore backslashes, so a WORD JOINER (U+2060, invisible) is put where
 *   they would start; bidi controls are shown as code points.
 */
import { checkLines } from "./check-evidence";
import { authorsOf, formatLineAuthors, type LineAuthors } from "./line-authors";
import { displayPath } from "./paths";
import { checkLabel, checkWording, type EvidenceSegment, exitWords, markdownTaskProvenance, repositoryText } from "./provenance-wording";
import { isReviewItem, type ReviewCounts, reviewCounts, taskReviewFacts, type VerdictLike, Verdicts } from "./review-counts";
import { type LineTotals, sumTotals } from "./review-fields";
import { SIGNING_KEYS_PATH } from "./statement";
import type { ChainHead } from "./views/events";
import type { DecisionView, IssueView } from "./views/logs";
import type { TaskEntry, WorkflowHead } from "./views/reads";
import type { TaskView, Verification } from "./views/task";
import type { Totals } from "./views/totals";
import type { WorkflowHeader } from "./views/workflow";
import { counted, enumLabel, formatUsd } from "./wording";

/** The parts of a task (./views/task.ts) the summary shows. */
export type SummaryTask = Pick<
  TaskView,
  "id" | "parent_task_id" | "name" | "status" | "duration_seconds" | "outcome" | "metadata" | "files_changed"
> &
  Partial<Pick<TaskView, "metrics" | "repository" | "commands" | "completed_at">> & {
    verification: Pick<Verification, "unexpected_files" | "more"> | null;
  };
type SummaryDecision = Pick<DecisionView, "task_id" | "question" | "chosen" | "reasoning" | "trade_offs">;
type SummaryIssue = Pick<IssueView, "id" | "task_id" | "type" | "description" | "resolution" | "requires_human_review">;

/** The parts of the whole view (./views/reads.ts WorkflowView) the summary shows. */
export interface SummaryView {
  workflow: Pick<WorkflowHeader, "name" | "description" | "status" | "outcome" | "created_at" | "completed_at" | "repository">;
  tasks: SummaryTask[];
  decisions: SummaryDecision[];
  issues: SummaryIssue[];
  /** Usage totals are shown once some task reported usage. */
  totals: Pick<Totals, "tasks" | "open_tasks" | "duration_seconds" | "files_changed" | "reviews_needed"> &
    Partial<Pick<Totals, "input_tokens" | "output_tokens" | "cost_usd">>;
  chain?: Pick<ChainHead, "head">;
  /** The reviewers' verdicts, when the reader has them: an approved item is not listed as needing review. */
  feedback?: readonly VerdictLike[];
}

const WORD_JOINER = "\u2060";
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/g;

const codePoint = (c: string) => `[U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}]`;

/**
 * What GFM (and GitHub's renderer on top of it) acts on inside a line of text: a backslash before
 * punctuation, code spans, emphasis and strong emphasis, links and images, strikethrough, math,
 * raw HTML and autolinks (`<…>`), entity references, issue references, mentions and the extended
 * autolinks (`www.`, `http://`, e-mail addresses). Everything else is shown as it is written.
 */
const ACTIVE = /\\(?=[!-/:-@[-`{-~])|[`*[~$_<&#@]|\b(?:https?|ftp|mailto|xmpp):(?=\S)|\bwww\./gi;
const ALPHANUMERIC = /[\p{L}\p{N}]/u;

function escapeActive(text: string): string {
  const tildes = text.split("~").length > 2;
  const dollars = text.split("$").length > 2;
  return text.replace(ACTIVE, (match, offset: number) => {
    const before = text[offset - 1] ?? "";
    const after = text[offset + match.length] ?? "";
    switch (match) {
      case "\\":
      case "`":
      case "*":
      case "[":
        return `\\${match}`;
      // Strikethrough and math need a pair: a lone ~ or $ stays as it is.
      case "~":
        return tildes ? "\\~" : match;
      case "$":
        return dollars ? "\\$" : match;
      // Inside a word (snake_case) an underscore cannot open or close emphasis.
      case "_":
        return ALPHANUMERIC.test(before) && ALPHANUMERIC.test(after) ? match : "\\_";
      // Raw HTML and autolinks start with < and a letter, /, ! or ?: written as an entity, which
      // also keeps the raw text free of tags for readers that are not Markdown renderers.
      case "<":
        return /[A-Za-z/!?]/.test(after) ? "&lt;" : match;
      // An entity reference (&amp; &#38;) is the only thing & starts.
      case "&":
        return /^#?[A-Za-z0-9]+;/.test(text.slice(offset + 1)) ? "\\&" : match;
      // A heading at the start, a closing sequence at the end, an issue reference before a digit.
      case "#":
        return offset === 0 || /[0-9]/.test(after) || (offset === text.length - 1 && before === " ") ? "\\#" : match;
      // A mention, or an e-mail autolink: a WORD JOINER (invisible) after @ stops both.
      case "@":
        return `@${WORD_JOINER}`;
      default:
        // `www.` and `scheme:` begin GitHub's extended autolinks, which ignore backslashes.
        return match.toLowerCase() === "www." ? `${match[0]}${WORD_JOINER}${match.slice(1)}` : `${match}${WORD_JOINER}`;
    }
  });
}

/** A line starting with these is a blockquote, a list item or an ordered list item, not text. */
function escapeLineStart(text: string): string {
  if (/^[>]/.test(text)) return `\\${text}`;
  if (/^[-+](?:\s|$)/.test(text)) return `\\${text}`;
  return text.replace(/^(\d{1,9})([.)])(?=\s|$)/, "$1\\$2");
}

/** Agent text made inert for Markdown (see the module comment), escaping only what GFM would act on. */
export function escapeMarkdown(text: string): string {
  const folded = text
    .replace(BIDI_CONTROLS, codePoint)
    .replace(/\s*[\r\n\u2028\u2029]+\s*/g, " ")
    .trim();
  return escapeLineStart(escapeActive(folded));
}

const esc = escapeMarkdown;

/**
 * A path as a code span, shown as it is: the fence is one backtick longer than the longest
 * run inside, padded with a space when the path starts or ends with a backtick or a space.
 * Control characters show as their Unicode pictures (␊), bidi controls as code points.
 * In a table cell `|` is escaped (GFM splits cells before it parses code spans).
 */
export function codeSpan(path: string, inTable = false): string {
  return codeText(displayPath(path), inTable);
}

/** Any text (a command line) as a code span, by codeSpan's rules, without reading it as a path. */
export function codeText(shown: string, inTable = false): string {
  let text = shown
    .replace(BIDI_CONTROLS, codePoint)
    .replace(CONTROL_CHARACTERS, (c) => String.fromCharCode(c === "\u007f" ? 0x2421 : 0x2400 + c.charCodeAt(0)));
  if (inTable) text = text.replace(/\|/g, "\\|");
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = /^[` ]|[` ]$/.test(text) ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

export function formatSeconds(seconds: number | null): string {
  if (seconds === null) return "";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

const STATUS: Record<string, string> = {
  active: "🔄 in progress",
  in_progress: "🔄 in progress",
  success: "✅ success",
  partial_success: "🟡 partial success",
  failed: "❌ failed",
};
const status = (value: string) => STATUS[value] ?? esc(value);

/** "+120 −4" (and ", 2 binary"): a task's or a workflow's line totals; with who wrote the added lines when known ("(agent 100 · others 20)"). */
export function formatLineTotals(totals: LineTotals, authors?: LineAuthors): string {
  const who = authors ? formatLineAuthors(authors) : "";
  return `+${totals.added} −${totals.removed}${totals.binary > 0 ? `, ${totals.binary} binary` : ""}${who ? ` (${who})` : ""}`;
}

/**
 * Usage totals, once some task reported usage. The cost only when one adds up to more than zero:
 * the head is written before the tasks, and a sum of zero cannot tell a free task from a task
 * whose model has no price, so it states nothing then.
 */
function usageTotals(t: SummaryView["totals"]): string[] {
  const tokens = (t.input_tokens ?? 0) + (t.output_tokens ?? 0);
  const cost = t.cost_usd ?? 0;
  return [...(tokens > 0 ? [`**Tokens:** ${tokens}`] : []), ...(cost > 0 ? [`**Cost:** ${formatUsd(cost)}`] : [])];
}

/** A task's reported usage: "1200 in · 300 out tokens · model · $0.01". */
function formatUsage(m: NonNullable<SummaryTask["metrics"]>): string {
  const parts: string[] = [];
  if (m.input_tokens !== null || m.output_tokens !== null) parts.push(`${m.input_tokens ?? 0} in · ${m.output_tokens ?? 0} out tokens`);
  if (m.model !== null) parts.push(m.model);
  if (m.cost_usd !== null) parts.push(formatUsd(m.cost_usd));
  return parts.join(" · ");
}

/** "14:02 UTC": the time of day a check ran (the summary is read anywhere, so in UTC). */
const utcTime = (iso: string) => `${iso.slice(11, 16)} UTC`;

function markdownSegment(segment: EvidenceSegment): string {
  // Escaped without trimming: the words around a command or a time keep their spaces.
  if (typeof segment === "string")
    return segment.replace(/^(\s*)([\s\S]*?)(\s*)$/, (_, before, words, after) => `${before}${esc(words)}${after}`);
  if ("code" in segment) return codeText(segment.code);
  if ("time" in segment) return utcTime(segment.time);
  // A failing exit in bold with a shape: Markdown has no colour, and colour alone would not do.
  if (segment.exit === null) return exitWords(null);
  return segment.exit === 0 ? `✓ ${exitWords(0)}` : `**✕ ${exitWords(segment.exit)}**`;
}

/**
 * A task's checks, one line each: what the agent claimed next to what the hooks observed after its
 * last edit (@waymark/protocol/check-evidence); nothing for a task with neither.
 */
function markdownChecks(task: SummaryTask): string[] {
  return checkLines(task).map((line) => `- ${checkLabel(line)}: ${checkWording(line).map(markdownSegment).join("")}`);
}

type FileRow = { status: string; path: string; shown: string };

/** One row per file: a rename once (its two paths), never also as a deletion and an addition. */
function fileRows(files: NonNullable<SummaryTask["files_changed"]>, only: (path: string) => boolean): FileRow[] {
  const renamedFrom = new Set(files.renamed.map((r) => r.from));
  const renamedTo = new Set(files.renamed.map((r) => r.to));
  const rows: FileRow[] = [];
  for (const path of files.added) if (!renamedTo.has(path) && only(path)) rows.push({ status: "A", path, shown: codeSpan(path, true) });
  for (const path of files.modified) if (only(path)) rows.push({ status: "M", path, shown: codeSpan(path, true) });
  for (const path of files.deleted) if (!renamedFrom.has(path) && only(path)) rows.push({ status: "D", path, shown: codeSpan(path, true) });
  for (const { from, to } of files.renamed) {
    if (only(from) || only(to)) rows.push({ status: "R", path: to, shown: `${codeSpan(from, true)} → ${codeSpan(to, true)}` });
  }
  return rows;
}

function fileTable(task: SummaryTask, ownOnly: Set<string>): string[] {
  const f = task.files_changed;
  if (!f) return [];
  const rows = fileRows(f, (path) => !ownOnly.has(path));
  if (rows.length === 0) return [];
  const lines = new Map((f.lines ?? []).map((line) => [line.path, line]));
  const uncommitted = new Set(f.uncommitted);
  const outside = new Set(task.verification?.unexpected_files ?? []);
  const out = ["| | File | + | − | Notes |", "|---|---|--:|--:|---|"];
  for (const row of rows) {
    const counts = lines.get(row.path);
    const [added, removed] =
      counts === undefined ? ["", ""] : "binary" in counts ? ["binary", ""] : [String(counts.added), String(counts.removed)];
    const authors = counts === undefined ? null : authorsOf(counts);
    const notes = [
      uncommitted.has(row.path) ? "uncommitted" : "committed",
      authors ? formatLineAuthors(authors) : "",
      outside.has(row.path) ? "**⚠ outside declared areas**" : "",
    ]
      .filter(Boolean)
      .join(", ");
    out.push(`| ${row.status} | ${row.shown} | ${added} | ${removed} | ${notes} |`);
  }
  return out;
}

function commitLines(task: SummaryTask): string[] {
  const f = task.files_changed;
  if (!f || (f.commits === undefined && f.branch === undefined)) return [];
  const commits = f.commits ?? [];
  const branch = f.branch === undefined ? "" : `Branch ${f.branch === null ? "(detached HEAD)" : codeSpan(f.branch)} · `;
  if (commits.length === 0) return [`${branch}no commits during this task`];
  const out = [`${branch}${counted(commits.length + (f.commits_omitted ?? 0), "commit")} during this task (not known to be pushed):`, ""];
  for (const c of commits)
    out.push(`- \`${c.sha}\` ${esc(c.subject)}${c.task && c.task !== task.id ? ` (Waymark-Task: ${esc(c.task)})` : ""}`);
  if (f.commits_omitted) out.push(`- … and ${f.commits_omitted} older`);
  return out;
}

/** "**Needs review:** 3 open · 1 approved": the open review items (./review-counts.ts), or an old head's reviews needed. */
function reviewTotal(review: ReviewCounts | undefined, reviewsNeeded: number): string {
  if (!review) return `**Reviews needed:** ${reviewsNeeded}`;
  const { open, approved } = review.review;
  return `**Needs review:** ${open} open${approved > 0 ? ` · ${approved} approved` : ""}`;
}

/** Under the review section's heading: what its items are, in the counts every rendering shows. */
function reviewBreakdown(review: ReviewCounts | undefined): string[] {
  if (!review) return [];
  const parts = [
    review.failed_tasks > 0 ? counted(review.failed_tasks, "failed task") : "",
    review.outside_areas.tasks > 0
      ? `${counted(review.outside_areas.files, "file")} outside declared areas (${counted(review.outside_areas.tasks, "task")})`
      : "",
    review.review.changes_requested > 0 ? `${review.review.changes_requested} with changes requested` : "",
  ].filter(Boolean);
  return parts.length > 0 ? ["", `${counted(review.review.open, "item")} open: ${parts.join(", ")}.`] : [];
}

const CHECK_WORDS = { test: "Tests", build: "Build", lint: "Lint", typecheck: "Type-check" } as const;

/**
 * "**Checks** after each task's last edit: Tests 2 passed, 1 failed (claimed: 3 passed)": per kind
 * what was observed next to what was claimed, over the completed tasks that show the kind.
 */
function checksLine(review: ReviewCounts): string {
  const kinds = (Object.keys(CHECK_WORDS) as (keyof typeof CHECK_WORDS)[]).flatMap((kind) => {
    const { observed, claimed } = review.checks[kind];
    const seen = [
      observed.passed > 0 ? `${observed.passed} passed` : "",
      observed.failed > 0 ? `${observed.failed} failed` : "",
      observed.exit_unknown > 0 ? `${observed.exit_unknown} exit not observed` : "",
      observed.not_run > 0 ? `${observed.not_run} not run` : "",
      observed.not_observed > 0 ? `${observed.not_observed} not observed` : "",
    ].filter(Boolean);
    if (seen.length === 0) return [];
    const said = [
      claimed.passed > 0 ? `${claimed.passed} passed` : "",
      claimed.failed > 0 ? `${claimed.failed} failed` : "",
      claimed.not_run > 0 ? `${claimed.not_run} not run` : "",
      claimed.ran > 0 ? `${claimed.ran} ran` : "",
    ].filter(Boolean);
    return [`${CHECK_WORDS[kind]} ${seen.join(", ")}${said.length > 0 ? ` (claimed: ${said.join(", ")})` : ""}`];
  });
  return kinds.length > 0 ? `**Checks** observed after each task's last edit, per task: ${kinds.join(" · ")}` : "";
}

/** After an open item whose latest verdict asks for changes. */
const stateNote = (state: string) => (state === "changes_requested" ? " — **changes requested**" : "");

/** What the summary shows before the tasks: the head of the paged reads (./views/reads.ts WorkflowHead), or the whole view's figures. */
export type SummaryHead = Pick<SummaryView, "workflow" | "totals" | "feedback"> &
  Pick<WorkflowHead, "line_totals"> & {
    chain?: Pick<ChainHead, "head"> | null;
    /** What needs a reviewer over the whole workflow (./review-counts.ts): the head's, or counted from the whole view. */
    review?: ReviewCounts;
  };

/** One task in timeline order, as the paged reads give it (./views/reads.ts TaskEntry) or summaryTimeline makes it. */
export type SummaryEntry = Pick<TaskEntry, "depth" | "subtasks"> & {
  task: SummaryTask;
  decisions: readonly SummaryDecision[];
  issues: readonly SummaryIssue[];
  paths_in_subtasks: readonly string[];
};

/**
 * The summary written part by part, so a workflow of any size can be streamed: call `start`,
 * then `reviewTask` for every task and `reviewIssue` for every issue (the whole view's orders),
 * `tasks`, `task` for every entry of the timeline, `provenanceStart`, `provenance` for every
 * task (the whole view's order), and `end`. Each call returns the next piece of the text; the
 * pieces joined are the whole summary (three or more line breaks are folded into two across
 * pieces as within them).
 */
export class SummaryWriter {
  private written = false;
  private trailingBreaks = 0;
  private reviewOpen = false;
  private provenanceOpen = false;
  private readonly numbers: number[] = [];
  private readonly verdicts: Verdicts;

  constructor(private readonly head: SummaryHead) {
    this.verdicts = new Verdicts(head.feedback ?? []);
  }

  start(): string {
    const w = this.head.workflow;
    const t = this.head.totals;
    const lineTotals = this.head.line_totals;
    const out: string[] = [`## ${esc(w.name)}`, ""];
    out.push(
      [
        `**Status:** ${status(w.status)}`,
        `**Duration:** ${formatSeconds(t.duration_seconds) || "0s"}`,
        `**Tasks:** ${t.tasks}${t.open_tasks > 0 ? ` (${t.open_tasks} open)` : ""}`,
        `**Files changed:** ${t.files_changed}${lineTotals ? ` (${formatLineTotals(lineTotals)})` : ""}`,
        reviewTotal(this.head.review, t.reviews_needed),
        ...usageTotals(t),
      ].join(" · "),
    );
    const checks = this.head.review ? checksLine(this.head.review) : "";
    if (checks) out.push("", checks);
    if (w.description) out.push("", esc(w.description));
    if (w.outcome) {
      out.push("", "### Outcome", "", esc(w.outcome.summary));
      if (w.outcome.achievements.length > 0) out.push("", "Achievements:", ...w.outcome.achievements.map((a) => `- ${esc(a)}`));
      if (w.outcome.limitations.length > 0) out.push("", "Limitations:", ...w.outcome.limitations.map((l) => `- ${esc(l)}`));
    }
    return this.emit(out);
  }

  /**
   * A task that is an open review item (./review-counts.ts: it failed, asked for manual review or
   * changed files outside its areas, and no person approved it since), in the review section,
   * with each reason; nothing for the others.
   */
  reviewTask(task: SummaryTask): string {
    const facts = task.status === "in_progress" ? null : taskReviewFacts(task);
    if (!facts || !isReviewItem(task.status, facts)) return "";
    const state = this.verdicts.stateOf(task.id, task.completed_at ?? "");
    if (state === "approved") return "";
    const reasons: string[] = [];
    if (facts.failed) reasons.push("failed (as the agent reported it)");
    if (facts.asked) reasons.push(`asked for review: ${esc(task.outcome?.manual_review_reason || "manual review requested")}`);
    if (facts.outside > 0) {
      const listed = task.verification?.unexpected_files ?? [];
      const more = facts.outside - listed.length;
      reasons.push(
        `changed ${counted(facts.outside, "file")} outside its declared areas: ${listed.map((path) => codeSpan(path)).join(", ")}${more > 0 ? ` and ${more} more` : ""}`,
      );
    }
    return this.reviewLine(`- Task **${esc(task.name)}**: ${reasons.join("; ")}${stateNote(state)}`);
  }

  /** An open issue that requires human review, with the name of its task (nothing for the others). */
  reviewIssue(issue: SummaryIssue, taskName: string): string {
    if (!issue.requires_human_review) return "";
    const state = this.verdicts.stateOf(issue.id);
    if (state === "approved") return "";
    return this.reviewLine(
      `- ${enumLabel(issue.type)} in **${esc(taskName)}**: ${esc(issue.description)} (resolution: ${esc(issue.resolution)})${stateNote(state)}`,
    );
  }

  tasks(): string {
    return this.emit(["", "### Tasks"]);
  }

  task(entry: SummaryEntry): string {
    this.numbers.length = Math.min(this.numbers.length, entry.depth + 1);
    while (this.numbers.length < entry.depth + 1) this.numbers.push(0);
    this.numbers[entry.depth] = (this.numbers[entry.depth] ?? 0) + 1;
    const number = this.numbers.join(".");
    const task = entry.task;
    const took = task.duration_seconds !== null ? `, ${formatSeconds(task.duration_seconds)}` : "";
    const out = ["", `${"#".repeat(Math.min(6, 4 + entry.depth))} ${number} ${esc(task.name)} — ${status(task.status)}${took}`, ""];
    if (task.outcome) out.push(esc(task.outcome.summary), "");
    const f = task.files_changed;
    const hasSubtasks = entry.subtasks > 0;
    const table = fileTable(task, new Set(entry.paths_in_subtasks));
    if (f?.line_totals)
      out.push(`Lines: ${formatLineTotals(f.line_totals, f.line_authors)}${hasSubtasks ? " (including its subtasks)" : ""}`, "");
    if (table.length > 0) out.push(hasSubtasks ? "Its own files (not in a subtask):" : "Files:", "", ...table, "");
    else if (f && !hasSubtasks) out.push("Files: none", "");
    if (f?.more) out.push(`… and ${f.more} more files, listed in the JSON export.`, "");
    if (f?.truncated) out.push(`… and ${f.truncated.omitted} more files, counted per directory in the JSON export.`, "");
    const commits = commitLines(task);
    if (commits.length > 0) out.push(...commits, "");
    const checks = markdownChecks(task);
    if (checks.length > 0) out.push("Checks:", ...checks, "");
    if (task.metrics) out.push(`Usage: ${esc(formatUsage(task.metrics))}`, "");
    if (entry.decisions.length > 0) {
      out.push("Decisions:");
      for (const d of entry.decisions)
        out.push(
          `- **${esc(d.question)}** → ${esc(d.chosen)}: ${esc(d.reasoning)}${d.trade_offs ? ` (trade-offs: ${esc(d.trade_offs)})` : ""}`,
        );
      out.push("");
    }
    const issues = entry.issues.filter((i) => !i.requires_human_review);
    if (issues.length > 0)
      out.push("Issues:", ...issues.map((i) => `- ${enumLabel(i.type)}: ${esc(i.description)} (resolution: ${esc(i.resolution)})`), "");
    return this.emit(out);
  }

  /** The Provenance section opens with the workflow's repository, when one was reported. */
  provenanceStart(): string {
    const repository = repositoryText(this.head.workflow.repository);
    if (!repository) return "";
    this.provenanceOpen = true;
    return this.emit(["", "### Provenance", "", `Repository: ${esc(repository)}`, ""]);
  }

  provenance(task: SummaryTask): string {
    const lines = markdownTaskProvenance(task, esc);
    if (lines.length === 0) return "";
    const open = this.provenanceOpen ? [] : ["", "### Provenance", ""];
    this.provenanceOpen = true;
    return this.emit([...open, ...lines]);
  }

  end(): string {
    const chain = this.head.chain;
    return this.emit(["", `<sub>Recorded by Waymark${chain ? ` · hash chain head ${codeSpan(chain.head)}` : ""}</sub>`, ""]);
  }

  private reviewLine(line: string): string {
    const open = this.reviewOpen ? [] : ["", "### ⚠ Needs human review", ...reviewBreakdown(this.head.review), ""];
    this.reviewOpen = true;
    return this.emit([...open, line]);
  }

  /** Lines joined by line breaks across pieces, runs of three or more breaks folded into two. */
  private emit(lines: string[]): string {
    let text = (this.written ? "\n" : "") + lines.join("\n");
    this.written = true;
    text = text.replace(/\n{3,}/g, "\n\n");
    const leading = /^\n*/.exec(text)?.[0].length ?? 0;
    text = text.slice(Math.max(0, Math.min(leading, this.trailingBreaks + leading - 2)));
    const trailing = /\n*$/.exec(text)?.[0].length ?? 0;
    this.trailingBreaks = trailing === text.length ? this.trailingBreaks + trailing : trailing;
    return text;
  }
}

/** The timeline of a whole view: top-level tasks (and tasks whose parent is not in the view) in its order, each followed depth-first by its subtasks. */
export function summaryTimeline(view: SummaryView): SummaryEntry[] {
  const ids = new Set(view.tasks.map((task) => task.id));
  const children = new Map<string, SummaryTask[]>();
  const roots: SummaryTask[] = [];
  for (const task of view.tasks) {
    const parent = task.parent_task_id !== null && ids.has(task.parent_task_id) ? task.parent_task_id : null;
    if (parent === null) roots.push(task);
    else children.set(parent, [...(children.get(parent) ?? []), task]);
  }
  const entries: SummaryEntry[] = [];
  const visit = (task: SummaryTask, depth: number) => {
    const subtasks = children.get(task.id) ?? [];
    const below = descendantPaths(task, children);
    const f = task.files_changed;
    const own = f ? new Set([...f.added, ...f.modified, ...f.deleted]) : new Set<string>();
    entries.push({
      task,
      depth,
      decisions: view.decisions.filter((d) => d.task_id === task.id),
      issues: view.issues.filter((i) => i.task_id === task.id),
      subtasks: subtasks.length,
      paths_in_subtasks: [...own].filter((path) => below.has(path)),
    });
    for (const child of subtasks) visit(child, depth + 1);
  };
  for (const root of roots) visit(root, 0);
  return entries;
}

/** Every path a task's subtasks (at any depth) changed. */
function descendantPaths(task: SummaryTask, children: Map<string, SummaryTask[]>): Set<string> {
  const paths = new Set<string>();
  const stack = [...(children.get(task.id) ?? [])];
  for (let child = stack.pop(); child; child = stack.pop()) {
    const f = child.files_changed;
    if (f) for (const list of [f.added, f.modified, f.deleted]) for (const path of list) paths.add(path);
    stack.push(...(children.get(child.id) ?? []));
  }
  return paths;
}

/** The workflow as Markdown for a pull request description (the whole view at once; a stream feeds SummaryWriter). */
export function renderSummary(view: SummaryView): string {
  const entries = summaryTimeline(view);
  const roots = entries.filter((entry) => entry.depth === 0).map((entry) => entry.task.files_changed?.line_totals);
  const measured = roots.some((totals) => totals !== undefined);
  const feedback = view.feedback ?? [];
  const writer = new SummaryWriter({
    workflow: view.workflow,
    totals: view.totals,
    chain: view.chain ?? null,
    line_totals: measured ? sumTotals(roots) : null,
    feedback,
    review: reviewCounts(view, feedback),
  });
  const names = new Map(view.tasks.map((task) => [task.id, task.name]));
  return [
    writer.start(),
    ...view.tasks.map((task) => writer.reviewTask(task)),
    ...view.issues.map((issue) => writer.reviewIssue(issue, names.get(issue.task_id) ?? issue.task_id)),
    writer.tasks(),
    ...entries.map((entry) => writer.task(entry)),
    writer.provenanceStart(),
    ...view.tasks.map((task) => writer.provenance(task)),
    writer.end(),
  ].join("");
}

/** Which key signs a deployment's exports, and the endpoint whose well-known URL publishes it. */
export interface SigningNote {
  kid: string;
  origin: string;
}

/** The closing line of a summary: the key and the command that checks the signed JSON export (the head is in the line above). */
export function statementLine(note: SigningNote): string {
  return `\n<sub>The JSON export of this record carries a statement signed with key ${codeSpan(note.kid)}: check it with ${codeSpan(
    `waymark verify export.json --endpoint ${note.origin}`,
  )} (public keys: ${codeSpan(`${note.origin}${SIGNING_KEYS_PATH}`)}).</sub>\n`;
}

/**
 * A summary with a link to the workflow's page under its heading (its first line): `waymark summary`
 * adds the share link. The renderer itself writes none: a PR description is often public, and a
 * share link lets anyone read the workflow.
 */
export function withPageLink(markdown: string, link: string): string {
  const line = `[Workflow page](<${link.replace(/[<>\s]/g, encodeURIComponent)}>)`;
  const heading = markdown.indexOf("\n");
  return heading < 0 ? `${markdown}\n\n${line}\n` : `${markdown.slice(0, heading)}\n\n${line}${markdown.slice(heading)}`;
}
