/**
 * @module pages/markdown
 * The workflow as a pull-request-ready Markdown summary. Agent text is untrusted here
 * too: every character Markdown or inline HTML could act on is backslash-escaped or
 * turned into an entity, and line breaks are folded, so an agent cannot add headings,
 * links, images, HTML or break out of a list item. GitHub's autolinks (e-mail addresses,
 * `www.`, `scheme:`) ignore backslashes, so a WORD JOINER (U+2060, invisible) is put
 * where they would start; bidi controls are shown as code points.
 */
import type { FeedbackView, TaskView, WorkflowView } from "../workflow/view";
import { formatDuration, formatTime, formatUsage, revealBidiControls, STATUS_LABEL } from "./format";
import { VERDICT_LABEL } from "./page";
import { markdownTaskProvenance, markdownWorkflowRepository } from "./provenance";

const MARKDOWN_SPECIAL = /[\\`*_{}[\]()#+\-.!|~:^=$"'@]/g;
const WORD_JOINER = "\u2060";

export function escapeMarkdown(text: string): string {
  return revealBidiControls(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(MARKDOWN_SPECIAL, (c) => `\\${c}`)
    .replace(/\\@/g, `${WORD_JOINER}\\@${WORD_JOINER}`)
    .replace(/\\:/g, `\\:${WORD_JOINER}`)
    .replace(/(w)(w)(w)\\\./gi, `$1${WORD_JOINER}$2$3\\.`)
    .replace(/\s*[\r\n\u2028\u2029]+\s*/g, " ")
    .trim();
}

const esc = escapeMarkdown;

function bullets(items: readonly string[] | undefined, indent = ""): string[] {
  return (items ?? []).map((item) => `${indent}- ${esc(item)}`);
}

function fileLines(t: TaskView): string[] {
  const f = t.files_changed;
  if (!f) return [];
  const unexpected = new Set(t.verification?.unexpected_files ?? []);
  const uncommitted = new Set(f.uncommitted);
  const note = (path: string) =>
    [uncommitted.has(path) ? " (uncommitted)" : "", unexpected.has(path) ? " **⚠ outside declared areas**" : ""].join("");
  return [
    ...f.added.map((p) => `  - A ${esc(p)}${note(p)}`),
    ...f.modified.map((p) => `  - M ${esc(p)}${note(p)}`),
    ...f.deleted.map((p) => `  - D ${esc(p)}${note(p)}`),
    ...f.renamed.map((r) => `  - R ${esc(r.from)} → ${esc(r.to)}${note(r.to)}`),
  ];
}

/** No link back to the page: a PR description is often public, and the link carries the share token. */
export function renderMarkdown(view: WorkflowView & { feedback?: FeedbackView[] }): string {
  const w = view.workflow;
  const t = view.totals;
  const out: string[] = [];
  out.push(`## ${esc(w.name)}`, "");
  out.push(
    `**Status:** ${STATUS_LABEL[w.status] ?? w.status} · **Duration:** ${formatDuration(t.duration_seconds) || "0s"} · **Tasks:** ${t.tasks} (${t.open_tasks} open) · **Files changed:** ${t.files_changed} · **Reviews needed:** ${t.reviews_needed}${
      t.input_tokens + t.output_tokens > 0 || t.cost_usd > 0
        ? ` · **Tokens:** ${t.input_tokens + t.output_tokens} · **Cost:** $${t.cost_usd.toFixed(4)}`
        : ""
    }`,
  );
  out.push("", `Started ${formatTime(w.created_at)}${w.completed_at ? `, completed ${formatTime(w.completed_at)}` : ""}.`);
  out.push(...markdownWorkflowRepository(w));
  if (w.description) out.push("", esc(w.description));
  if (w.outcome) {
    out.push("", "### Outcome", "", esc(w.outcome.summary));
    if (w.outcome.achievements.length > 0) out.push("", "Achievements:", ...bullets(w.outcome.achievements));
    if (w.outcome.limitations.length > 0) out.push("", "Limitations:", ...bullets(w.outcome.limitations));
  }

  const review = [
    ...view.tasks
      .filter((task) => task.outcome?.manual_review_needed)
      .map((task) => `- Task ${esc(task.name)}: ${esc(task.outcome?.manual_review_reason || "manual review requested")}`),
    ...view.issues
      .filter((i) => i.requires_human_review)
      .map((i) => `- ${esc(i.type)}: ${esc(i.description)} (resolution: ${esc(i.resolution)})`),
  ];
  if (review.length > 0) out.push("", "### ⚠ Needs human review", "", ...review);
  const feedback = view.feedback ?? [];
  if (feedback.length > 0) {
    const about = new Map<string, string>([
      ...view.tasks.map((task): [string, string] => [task.id, `task ${task.name}`]),
      ...view.decisions.map((d): [string, string] => [d.id, `decision ${d.question}`]),
      ...view.issues.map((i): [string, string] => [i.id, `issue ${i.type}`]),
    ]);
    out.push(
      "",
      "### Reviewer feedback",
      "",
      ...feedback.map((f) => `- **${VERDICT_LABEL[f.verdict]}** on ${esc(about.get(f.target_id) ?? "the workflow")}: ${esc(f.body)}`),
    );
  }

  out.push("", "### Tasks", "");
  for (const task of view.tasks) {
    const took = task.duration_seconds !== null ? `, ${formatDuration(task.duration_seconds)}` : "";
    const parent = task.parent_task_id ? " (subtask)" : "";
    out.push(`- **${esc(task.name)}**${parent} — ${STATUS_LABEL[task.status] ?? task.status}${took}`);
    if (task.outcome) out.push(`  - ${esc(task.outcome.summary)}`);
    const files = fileLines(task);
    if (files.length > 0) out.push("  - Files:", ...files.map((line) => `  ${line}`));
    for (const o of task.verification?.overlapping ?? []) out.push(`  - Overlap: ${esc(o.path)} also changed by ${esc(o.task_id)}`);
    if (task.metadata?.tests_status) out.push(`  - Tests: ${task.metadata.tests_status.replace("_", " ")}`);
    if (task.metrics) out.push(`  - Usage: ${esc(formatUsage(task.metrics))}`);
    out.push(...markdownTaskProvenance(task));
  }

  if (view.decisions.length > 0) {
    out.push("", "### Decisions", "");
    for (const d of view.decisions) {
      out.push(`- **${esc(d.question)}** → ${esc(d.chosen)}`, `  - ${esc(d.reasoning)}`);
      if (d.trade_offs) out.push(`  - Trade-offs: ${esc(d.trade_offs)}`);
    }
  }
  const otherIssues = view.issues.filter((i) => !i.requires_human_review);
  if (otherIssues.length > 0) {
    out.push(
      "",
      "### Other issues",
      "",
      ...otherIssues.map((i) => `- ${esc(i.type)}: ${esc(i.description)} (resolution: ${esc(i.resolution)})`),
    );
  }
  out.push("", "<sub>Recorded by Waymark</sub>", "");
  return out.join("\n");
}
