/**
 * @module pages/markdown
 * The workflow's Markdown export, which `waymark summary` prints (@waymark/protocol/pr-summary
 * renders it, escaping agent text and showing paths verbatim in code spans), followed by the
 * reviewers' feedback the owner view holds. No link back to the page (the summary adds the
 * current share link): a PR description is often public, and the link carries the share token.
 *
 * Streamed from the paged reads, one bounded page at a time, in the renderer's order: the
 * open review items (the whole view's order, read only when there are any), the timeline, the
 * provenance of each task, the feedback. The text is the whole-view renderer's, byte for byte,
 * followed by one line saying how to check it: the JSON export carries the statement this
 * deployment signs (the Markdown itself is not signed), with the key's id and where its public
 * keys are.
 */

import { escapeMarkdown, type SigningNote, SummaryWriter, statementLine } from "@waymark/protocol/pr-summary";
import type { FeedbackView, IssueView, Reader, TaskView, WorkflowHead } from "../domain/view";
import { currentKeyId } from "../signing";
import type { WorkflowObject } from "../workflow/workflow-object";
import { feedbackAuthorText, VERDICT_LABEL } from "./page";
import { recordPages, recordRows, taskEntries } from "./paged-reads";

export { escapeMarkdown };

/** The feedback section: each item says what it is about (a task, decision or issue, by its label). */
function feedbackSection(feedback: readonly FeedbackView[], about: ReadonlyMap<string, string>): string {
  const lines = feedback.map(
    (f) =>
      `- **${VERDICT_LABEL[f.verdict]}** on ${escapeMarkdown(about.get(f.target_id) ?? "the workflow")} (${escapeMarkdown(feedbackAuthorText(f))}): ${escapeMarkdown(f.body)}`,
  );
  return `\n\n### Reviewer feedback\n\n${lines.join("\n")}\n`;
}

export async function signingNote(env: Env, origin: string): Promise<SigningNote> {
  return { kid: await currentKeyId(env), origin };
}

export async function* markdownExport(
  stub: DurableObjectStub<WorkflowObject>,
  reader: Reader,
  head: WorkflowHead,
  signing: SigningNote,
): AsyncGenerator<string> {
  const writer = new SummaryWriter(head);
  yield writer.start();
  // The review items still open (the head's counts): read only when there are any.
  const open = head.review.review.open > 0;
  if (open) for await (const task of recordRows<TaskView>(stub, reader, "tasks")) yield writer.reviewTask(task);
  if (open && head.review_items.issues > 0) {
    for await (const page of recordPages(stub, reader, "issues")) {
      for (const issue of page.rows as IssueView[]) yield writer.reviewIssue(issue, page.task_names?.[issue.task_id] ?? issue.task_id);
    }
  }
  yield writer.tasks();
  const feedback = head.feedback ?? [];
  // Labels only for what the feedback is about: at most LIMITS.FEEDBACK_PER_WORKFLOW of them.
  const wanted = new Set(feedback.map((f) => f.target_id));
  const about = new Map<string, string>();
  for await (const entry of taskEntries(stub, reader)) {
    if (wanted.has(entry.task.id)) about.set(entry.task.id, `task ${entry.task.name}`);
    for (const d of entry.decisions) if (wanted.has(d.id)) about.set(d.id, `decision ${d.question}`);
    for (const i of entry.issues) if (wanted.has(i.id)) about.set(i.id, `issue ${i.type}`);
    yield writer.task(entry);
  }
  yield writer.provenanceStart();
  for await (const task of recordRows<TaskView>(stub, reader, "tasks")) yield writer.provenance(task);
  const end = writer.end();
  yield feedback.length === 0 ? end : `${end.trimEnd()}${feedbackSection(feedback, about)}`;
  yield statementLine(signing);
}
