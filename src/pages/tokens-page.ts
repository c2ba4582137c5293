/**
 * @module pages/tokens-page
 * The admin's credentials page (/dashboard/tokens): managed API tokens (create with a name,
 * scopes and optional expiry; the secret shown once; last use; revoke) and the OAuth grants
 * of remote MCP clients (revoke). Also the small page frame the consent page shares.
 * Everything interpolated is escaped by hono/html; bidirectional-text controls in names (an
 * OAuth client names itself) are shown as code points (`[U+202E]`), as on every page.
 */
import { html } from "hono/html";
import type { CreatedToken, TokenInfo } from "../account/tokens";
import { SCOPES, type Scope } from "../domain/access-scopes";
import { layout } from "./dashboard";
import { renderTime, revealBidiControls, srOnly } from "./format";

export type Html = ReturnType<typeof html>;

/** Expiry choices of the create form (seconds; "" = never). The API takes any value in its range. */
export const TOKEN_EXPIRY_CHOICES: { label: string; seconds: string }[] = [
  { label: "never", seconds: "" },
  { label: "1 day", seconds: "86400" },
  { label: "30 days", seconds: "2592000" },
  { label: "90 days", seconds: "7776000" },
  { label: "1 year", seconds: "31536000" },
];

export const SCOPE_HELP: Record<Scope, string> = {
  read: "get_workflow, MCP resources, exports, search, the dashboard",
  write: "the agent tools that record work (implies read), share links",
  admin: "tokens, OAuth grants, webhooks, account settings",
};

/** An owner page: the dashboard's shell (its stylesheet, and its one script that shows times in the viewer's zone). */
export const ownerPage = layout;

/** An OAuth grant as the page lists it. */
export interface GrantRow {
  id: string;
  client: string;
  scopes: string[];
  created_at: string;
}

export interface TokensPage {
  account: string;
  tokens: TokenInfo[];
  grants: GrantRow[];
  /** The token just created: its secret is on this page and nowhere else, ever. */
  created: CreatedToken | null;
}

function tokenState(t: TokenInfo, now: number): Html | string {
  if (t.revoked_at) return html`revoked ${renderTime(t.revoked_at)}`;
  if (t.expires_at && Date.parse(t.expires_at) <= now) return html`expired ${renderTime(t.expires_at)}`;
  return t.expires_at ? html`active, expires ${renderTime(t.expires_at)}` : "active";
}

function tokenRow(t: TokenInfo, now: number): Html {
  const live = !t.revoked_at && !(t.expires_at && Date.parse(t.expires_at) <= now);
  return html`<tr id="token-${t.id}" class="token"><td><strong class="token-name">${t.name}</strong><br><code class="muted">${t.id}</code></td>
<td data-label="scopes">${t.scopes.join(", ")}</td><td data-label="created">${renderTime(t.created_at)}</td><td class="last-used" data-label="last used">${
    t.last_used_at ? renderTime(t.last_used_at) : "never"
  }</td>
<td data-label="state"><span class="tag${live ? "" : " warn"}">${tokenState(t, now)}</span>${
    live
      ? html`<form method="post" action="/dashboard/tokens/${t.id}/revoke" class="actions"><button>Revoke${srOnly(` token ${t.name}`)}</button></form>`
      : ""
  }</td></tr>`;
}

function grantRow(g: GrantRow): Html {
  return html`<tr id="grant-${g.id}" class="grant"><td><strong>${g.client}</strong></td><td data-label="scopes">${g.scopes.join(", ")}</td><td data-label="approved">${renderTime(g.created_at)}</td>
<td><form method="post" action="/dashboard/grants/${g.id}/revoke" class="actions"><button>Revoke${srOnly(` app ${g.client}`)}</button></form></td></tr>`;
}

export async function renderTokensPage(nonce: string, page: TokensPage, now = Date.now()): Promise<string> {
  const created = page.created;
  const rendered = ownerPage(
    nonce,
    "Tokens",
    html`<nav class="topbar" aria-label="Account"><span class="brand">Waymark</span> <a href="/dashboard">Workflows</a> <a href="/dashboard/devices">Devices</a> <span class="muted">account ${page.account}</span>
<form method="post" action="/logout"><button>Sign out</button></form></nav>
<h1 id="main-content" tabindex="-1">API tokens</h1>
${
  created
    ? html`<div class="success" id="new-token" role="status"><h2>Token “${created.name}” created</h2>
<p>Copy it now: it is shown this once and stored only as a hash.</p>
<p class="linkbox"><code id="new-token-secret">${created.token}</code></p>
<p><button type="button" data-copy="new-token-secret" hidden>Copy token</button> <span id="new-token-secret-copied" aria-live="polite"></span></p></div>`
    : ""
}
<form method="post" action="/dashboard/tokens" id="create-token">
<p><label>Name<br><input name="name" required maxlength="100" size="30" placeholder="CI reporting"></label></p>
<fieldset><legend>Scopes</legend>${SCOPES.map(
      (scope) =>
        html`<p><label><input type="checkbox" name="scopes" value="${scope}"${scope === "write" ? " checked" : ""}> <strong>${scope}</strong> <span class="muted">${SCOPE_HELP[scope]}</span></label></p>`,
    )}</fieldset>
<p><label>Expires <select name="expires_in_seconds">${TOKEN_EXPIRY_CHOICES.map((c) => html`<option value="${c.seconds}">${c.label}</option>`)}</select></label></p>
<p><button type="submit">Create token</button></p></form>
${
  page.tokens.length === 0
    ? html`<p class="muted">No managed tokens yet.</p>`
    : html`<table id="tokens"><thead><tr><th scope="col">Name</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th></tr></thead><tbody>
${page.tokens.map((t) => tokenRow(t, now))}</tbody></table>`
}
<h2>Connected apps (OAuth)</h2>
${
  page.grants.length === 0
    ? html`<p class="muted">No app is connected. Remote MCP clients (Claude.ai, ChatGPT, Claude Desktop) connect with the URL of /mcp alone and ask you here for consent.</p>`
    : html`<table id="grants"><thead><tr><th scope="col">App</th><th scope="col">Scopes</th><th scope="col">Approved</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead><tbody>${page.grants.map(grantRow)}</tbody></table>`
}`,
  );
  // The markup has no bidi controls of its own: only names can carry them.
  return revealBidiControls(String(await rendered));
}
