/**
 * @module pages/owner-view
 * The owner's page of one workflow (/w/<id>): the shared page's renderer (page.ts, live
 * updates included) with an owner panel above it — the share link and the forms that create,
 * rotate, expire and revoke it, and the feedback form whose comments and verdicts reach the
 * agent in its next tool result. Works whatever the state of the share link: access is the
 * dashboard session. Forms are plain HTML (no script), escaped like page.ts.
 */
import { html } from "hono/html";
import type { FeedbackTarget, FeedbackView, WorkflowView } from "../domain/view";
import type { ShareInfo } from "../workflow/share";
import { shareForms, shareState } from "./dashboard";
import { renderWorkflowPage, VERDICT_LABEL } from "./page";

type Html = ReturnType<typeof html>;

export type OwnerView = WorkflowView & { feedback: FeedbackView[]; share: ShareInfo };

export interface OwnerPageOptions {
  nonce: string;
  /** The share link's URL while it is active. */
  shareUrl: string | null;
  /** The id the feedback form is preselected on (`?on=<id>` from a review link). */
  on: string | null;
}

/** Every thing feedback can be about, as "<kind>:<id>" values of the form's select. */
function targets(view: WorkflowView): { value: string; label: string; id: string }[] {
  const clip = (text: string) => (text.length > 70 ? `${text.slice(0, 69)}…` : text);
  const item = (kind: FeedbackTarget, id: string, label: string) => ({ value: `${kind}:${id}`, label, id });
  return [
    item("workflow", view.workflow.id, "The whole workflow"),
    ...view.tasks.map((t) => item("task", t.id, `Task: ${clip(t.name)}`)),
    ...view.decisions.map((d) => item("decision", d.id, `Decision: ${clip(d.question)}`)),
    ...view.issues.map((i) => item("issue", i.id, `Issue (${i.type}): ${clip(i.description)}`)),
  ];
}

function renderSharePanel(base: string, share: ShareInfo, url: string | null): Html {
  return html`<section id="share" class="panel"><h2>Share link <span class="tag${share.status === "active" ? "" : " warn"}" id="share-state">${shareState(share)}</span></h2>
${
  url
    ? html`<p class="linkbox">Anyone with this link can read this workflow: <a id="share-url" href="${url}" rel="noreferrer" target="_blank">${url}</a></p>`
    : html`<p class="muted">${share.status === "none" ? "This workflow has no share link: only you can see it." : "Nobody can open this workflow by link now."} Create a link to share it read-only.</p>`
}
${shareForms(`${base}/share`, share.status)}</section>`;
}

function renderFeedbackForm(base: string, view: WorkflowView, on: string | null): Html {
  const choices = targets(view);
  const selected = choices.find((c) => c.id === on)?.value ?? choices[0]?.value;
  return html`<section id="feedback" class="panel"><h2>Feedback to the agent</h2>
<p class="muted">The agent receives it in the result of its next tool call on this workflow.</p>
<form method="post" action="${base}/feedback">
<p><label>About<br><select name="target">${choices.map((c) => html`<option value="${c.value}"${c.value === selected ? html` selected` : ""}>${c.label}</option>`)}</select></label></p>
<p class="verdicts">${(["comment", "approved", "changes_requested"] as const).map(
    (v) =>
      html`<label><input type="radio" name="verdict" value="${v}"${v === "comment" ? html` checked` : ""}> ${VERDICT_LABEL[v]}</label>`,
  )}</p>
<p><label>Message<br><textarea name="body" rows="3" maxlength="2000" required></textarea></label></p>
<p><button type="submit">Send feedback</button></p></form></section>`;
}

export function renderOwnerPage(view: OwnerView, options: OwnerPageOptions): Html {
  const base = `/w/${view.workflow.id}`;
  const panel = html`<nav class="owner-nav topbar"><a href="/dashboard">← All workflows</a><form method="post" action="/logout"><button>Sign out</button></form></nav>
<div class="owner-panel">${renderSharePanel(base, view.share, options.shareUrl)}${renderFeedbackForm(base, view, options.on)}</div>`;
  return renderWorkflowPage(view, { nonce: options.nonce, base, panel, blocks: { reviewBase: base } });
}
