/**
 * @module pages/markdown
 * The workflow's Markdown export: the same pull-request summary `waymark summary` prints
 * (@waymark/protocol/summary renders both, escaping agent text and showing paths verbatim in
 * code spans), followed by the reviewers' feedback the owner view holds. No link back to the
 * page: a PR description is often public, and the link carries the share token.
 */
import { escapeMarkdown, renderSummary } from "@waymark/protocol/summary";
import type { FeedbackView, WorkflowView } from "../domain/view";
import { VERDICT_LABEL } from "./page";

export { escapeMarkdown };

export function renderMarkdown(view: WorkflowView & { feedback?: FeedbackView[] }): string {
  const summary = renderSummary(view);
  const feedback = view.feedback ?? [];
  if (feedback.length === 0) return summary;
  const about = new Map<string, string>([
    ...view.tasks.map((task): [string, string] => [task.id, `task ${task.name}`]),
    ...view.decisions.map((d): [string, string] => [d.id, `decision ${d.question}`]),
    ...view.issues.map((i): [string, string] => [i.id, `issue ${i.type}`]),
  ]);
  const lines = feedback.map(
    (f) => `- **${VERDICT_LABEL[f.verdict]}** on ${escapeMarkdown(about.get(f.target_id) ?? "the workflow")}: ${escapeMarkdown(f.body)}`,
  );
  return `${summary.trimEnd()}\n\n### Reviewer feedback\n\n${lines.join("\n")}\n`;
}
