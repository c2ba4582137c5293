/**
 * @module pages/confirm
 * The step before something that cannot be undone (revoking a share link, a token, an app's
 * access or a device): the page says what will happen and asks, and only its own form (which adds
 * `confirmed=yes`) does it. A plain page, so the confirmation works with or without script and by
 * keyboard like any form; the first form posts here without `confirmed`.
 */
import { html } from "hono/html";
import { layout } from "./dashboard";

export interface Confirmation {
  /** The page's title and heading: the question. */
  question: string;
  /** What happens, in a sentence or two. */
  consequence: string;
  /** Where the confirming form posts, and the fields it sends besides `confirmed`. */
  action: string;
  fields?: Record<string, string>;
  /** The confirming button's words, e.g. "Revoke the link". */
  confirm: string;
  /** Where Cancel goes back to. */
  back: string;
}

export function renderConfirmPage(nonce: string, c: Confirmation) {
  return layout(
    nonce,
    c.question,
    html`<h1 id="main-content" tabindex="-1">${c.question}</h1>
<p>${c.consequence}</p>
<form method="post" action="${c.action}" id="confirm-form">${Object.entries(c.fields ?? {}).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
    )}<input type="hidden" name="confirmed" value="yes">
<p><button type="submit">${c.confirm}</button> <a href="${c.back}">Cancel</a></p></form>`,
  );
}
