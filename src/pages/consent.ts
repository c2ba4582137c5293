/**
 * @module pages/consent
 * The OAuth consent page: the signed-in owner sees which app asks, where its answer goes
 * (the redirect host; "a local app" for loopback redirects) and picks the scope to grant
 * (no more than the session's own token holds). Everything the client chose to call itself
 * is escaped, and bidirectional-text controls in it are shown as code points (`[U+202E]`), as
 * on every page: a client cannot make its name read as another's.
 */
import { html } from "hono/html";
import type { Scope } from "../domain/access-scopes";
import { revealBidiControls } from "./format";
import { type Html, ownerPage, SCOPE_HELP } from "./tokens-page";

export interface ConsentView {
  account: string;
  clientName: string;
  redirectHost: string;
  /** Scopes the owner may grant, in order; the last is preselected. */
  offered: Scope[];
  /** The form posts back to the authorization URL it came from. */
  action: string;
}

export async function renderConsentPage(nonce: string, view: ConsentView): Promise<string> {
  const preselected = view.offered.at(-1);
  const page = ownerPage(
    nonce,
    "Connect an app",
    html`<div class="topbar"><span class="brand">Waymark</span> <span class="muted">account ${view.account}</span></div>
<h1 id="main-content" tabindex="-1">Connect <span id="client-name">${view.clientName}</span> to Waymark?</h1>
<p>The app will act for the account <strong>${view.account}</strong> through the MCP endpoint. After approval you are sent back to <code>${view.redirectHost}</code>. You can revoke it any time on the <a href="/dashboard/tokens">tokens page</a>.</p>
<form method="post" action="${view.action}" id="consent">
<fieldset><legend>Access</legend>${view.offered.map(
      (scope) =>
        html`<p><label><input type="radio" name="scope" value="${scope}"${scope === preselected ? " checked" : ""}> <strong>${scope}</strong> <span class="muted">${SCOPE_HELP[scope]}</span></label></p>`,
    )}</fieldset>
<p><button type="submit" name="decision" value="approve" id="approve">Approve</button> <button type="submit" name="decision" value="deny" id="deny">Deny</button></p>
</form>`,
  );
  // The markup has no bidi controls of its own: only the client's text can carry them.
  return revealBidiControls(String(await page));
}

export function renderConsentError(nonce: string, message: string): Html {
  return ownerPage(
    nonce,
    "Authorization failed",
    html`<h1 id="main-content" tabindex="-1">This authorization request cannot be completed</h1><p role="alert" class="alert">${message}</p>`,
  );
}
