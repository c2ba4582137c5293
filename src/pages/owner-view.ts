/**
 * @module pages/owner-view
 * The owner's page of one workflow (/w/<id>): the shared page's renderer (page.ts, live
 * updates included) with the owner's panels — the share link and the forms that
 * create, rotate, expire and revoke it, and the feedback form whose comments and verdicts reach
 * the agent in its next tool result (both after the timeline: its review and comment links lead
 * there, and the navigation links to both). Works whatever the state of
 * the share link: access is the dashboard session. Forms are plain HTML (no script), escaped
 * like page.ts.
 */
import { html } from "hono/html";
import type { ShareInfo } from "../domain/share-status";
import type { FeedbackView, WorkflowHead } from "../domain/view";
import { shareForms, shareState } from "./dashboard";
import { type RenderedBlocks, VERDICT_LABEL, workflowPage } from "./page";
import type { FeedbackChoice } from "./timeline";

type Html = ReturnType<typeof html>;

export type OwnerHead = WorkflowHead & { feedback: FeedbackView[]; share: ShareInfo };

export interface OwnerPageOptions {
  nonce: string;
  /** The share link's URL while it is active. */
  shareUrl: string | null;
  /** The id the feedback form is preselected on (`?on=<id>` from a review or comment link). */
  on: string | null;
  /** The timeline page's query (`?after=<cursor>`). */
  query: string;
  /**
   * The session was signed in with a credential that recorded tasks of this workflow (the agent's,
   * or one the owner and the agent share, like the local development token): its verdicts on
   * those tasks are recorded as comments, and the page says so before the reviewer gives one.
   */
  sharesAgentCredential?: boolean;
}

function renderSharePanel(base: string, share: ShareInfo, url: string | null): Html {
  return html`<section id="share" class="panel" aria-labelledby="share-title"><h2 id="share-title">Share link <span class="tag${share.status === "active" ? "" : " warn"}" id="share-state">${shareState(share)}</span></h2>
${
  url
    ? html`<p class="linkbox">Anyone with this link can read this workflow: <a id="share-url" href="${url}" rel="noreferrer" target="_blank">${url}</a></p>`
    : html`<p class="muted">${share.status === "none" ? "This workflow has no share link: only you can see it." : "Nobody can open this workflow by link now."} Create a link to share it read-only.</p>`
}
${shareForms(`${base}/share`, share.status, null)}</section>`;
}

/**
 * The form's choices: the whole workflow, then the tasks, decisions and issues the timeline
 * met (bounded; the one a link preselects is always there). Every item on the page also has
 * its own comment link, which brings the reviewer here with it chosen. The review app inside
 * chat clients (src/mcp/app.ts) shows this form too.
 */
/**
 * `commentOnly`: the form sends comments only (the review app: a verdict from there would be
 * recorded as a comment), and says why instead of offering verdicts.
 */
export function renderFeedbackForm(
  base: string,
  workflowId: string,
  choices: readonly FeedbackChoice[],
  on: string | null,
  options: { commentOnly?: string } = {},
): Html {
  const all = [{ value: `workflow:${workflowId}`, label: "The whole workflow", id: workflowId }, ...choices];
  const selected = all.find((c) => c.id === on)?.value ?? all[0]?.value;
  const verdicts = options.commentOnly
    ? html`<input type="hidden" name="verdict" value="comment"><p class="muted" id="feedback-verdicts">Sent as a comment: ${options.commentOnly} (<a href="${base}">${base}</a>).</p>`
    : html`<fieldset class="verdicts"><legend>Verdict</legend>${(["comment", "approved", "changes_requested"] as const).map(
        (v) =>
          html`<label><input type="radio" name="verdict" value="${v}"${v === "comment" ? html` checked` : ""}> ${VERDICT_LABEL[v]}</label>`,
      )}</fieldset>`;
  return html`<section id="feedback" class="panel" aria-labelledby="feedback-title"><h2 id="feedback-title">Feedback to the agent</h2>
<p class="muted" id="feedback-help">The agent receives it in the result of its next tool call on this workflow.</p>
<form method="post" action="${base}/feedback" aria-describedby="feedback-help">
<p><label for="feedback-target">About</label><br><select id="feedback-target" name="target">${all.map(
    (c) => html`<option value="${c.value}"${c.value === selected ? html` selected` : ""}>${c.label}</option>`,
  )}</select></p>
${verdicts}
<p><label for="feedback-body">Message</label><br><textarea id="feedback-body" name="body" rows="3" maxlength="2000" required></textarea></p>
<p><button type="submit">Send feedback</button></p></form></section>`;
}

/** Said before any review when the session holds a credential that recorded this workflow's tasks. */
const SHARED_CREDENTIAL = html`<div class="banner" id="shared-credential" role="note"><p><strong>You signed in with the token that recorded this workflow's tasks.</strong> The agent holds it too, so the server cannot tell your verdicts from the agent's: an approval or a request for changes you give here on those tasks is recorded as a comment and does not count as a review. Sign in with a token of your own, and give the agent its own token on the <a href="/dashboard/tokens">Tokens page</a>, to review here.</p></div>`;

/**
 * The review form the page script opens next to an item (a task, decision, issue or file) when its
 * Review link is followed: the same fields and verdicts as each review item's own form
 * (first-screen.ts), filled in with what the link is about. Inert until then (a <template>).
 */
function inlineReviewTemplate(base: string): Html {
  return html`<template id="rv-template"><form method="post" action="${base}/feedback" class="rv-form rv-inline"><input type="hidden" name="target" value=""><input type="hidden" name="path" value=""><label>Message to the agent <span class="muted">(needed for a comment)</span><textarea name="body" rows="2" maxlength="2000"></textarea></label><span class="rv-buttons"><button name="verdict" value="approved">Approve</button><button name="verdict" value="changes_requested">Request changes</button><button name="verdict" value="comment">Comment</button><button type="button" class="rv-cancel">Cancel</button></span><span class="rv-status" role="status"></span></form></template>`;
}

/** The owner view's page around its blocks: navigation first; the feedback form and the share link after the timeline, where its links lead. */
export function ownerPage(head: OwnerHead, blocks: RenderedBlocks, options: OwnerPageOptions): string {
  const base = `/w/${head.workflow.id}`;
  const top = html`<nav class="owner-nav topbar" aria-label="Owner"><a href="/dashboard">← All workflows</a> <a href="#feedback">Feedback form</a> <a href="#share">Share link</a><form method="post" action="/logout"><button>Sign out</button></form></nav>${
    options.sharesAgentCredential ? SHARED_CREDENTIAL : ""
  }`;
  const bottom = html`${renderFeedbackForm(base, head.workflow.id, blocks.facts.choices, options.on)}
${renderSharePanel(base, head.share, options.shareUrl)}${inlineReviewTemplate(base)}`;
  return workflowPage(head, blocks.markup, { nonce: options.nonce, base, query: options.query, panel: { top, bottom } });
}
