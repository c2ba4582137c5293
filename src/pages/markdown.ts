/**
 * @module pages/markdown
 * The workflow's Markdown export: the same pull-request summary `waymark summary` prints
 * (@waymark/protocol/summary renders both, escaping agent text and showing paths verbatim in
 * code spans). No link back to the page: a PR description is often public, and the link
 * carries the share token.
 */
import { escapeMarkdown, renderSummary } from "@waymark/protocol/summary";
import type { WorkflowView } from "../workflow/view";

export { escapeMarkdown };

export function renderMarkdown(view: WorkflowView): string {
  return renderSummary(view);
}
