/**
 * @module pages/dashboard
 * The owner's pages: sign-in and the list of the account's workflows with their share
 * links and the forms that manage them. Escaped like page.ts.
 */
import { html, raw } from "hono/html";
import type { DashboardRow } from "../account/object";
import type { ShareInfo } from "../workflow/share";
import { formatTime, STATUS_LABEL } from "./format";
import { PAGE_STYLE } from "./style";

type Html = ReturnType<typeof html>;

/** Expiry choices offered by the dashboard (seconds; "" = never). The JSON API takes any value up to a year. */
export const EXPIRY_CHOICES: { label: string; seconds: string }[] = [
  { label: "never", seconds: "" },
  { label: "1 hour", seconds: "3600" },
  { label: "1 day", seconds: "86400" },
  { label: "7 days", seconds: "604800" },
  { label: "30 days", seconds: "2592000" },
];

function layout(nonce: string, title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${title} — Waymark</title><style nonce="${nonce}">${raw(PAGE_STYLE)}</style></head>
<body><main>${body}</main></body></html>`;
}

export function renderLoginPage(nonce: string, error: string | null): Html {
  return layout(
    nonce,
    "Sign in",
    html`<h1>Waymark dashboard</h1>
<p>Paste your API token (the bearer token your agents use). It is sent once, in this form's body, and never stored in the browser: you get a signed session cookie instead.</p>
${error ? html`<p class="alert" role="alert">${error}</p>` : ""}
<form method="post" action="/login"><p><label>API token<br><input type="password" name="token" autocomplete="current-password" required size="40"></label></p>
<p><button type="submit">Sign in</button></p></form>`,
  );
}

function expirySelect(): Html {
  return html`<select name="expires_in_seconds" aria-label="expiry">${EXPIRY_CHOICES.map((c) => html`<option value="${c.seconds}">${c.label}</option>`)}</select>`;
}

function shareCell(row: DashboardRow): Html {
  const s = row.share;
  const state =
    s.status === "active"
      ? s.expires_at
        ? `active, expires ${formatTime(s.expires_at)}`
        : "active"
      : s.status === "none"
        ? "no link yet"
        : s.status;
  const action = `/dashboard/workflows/${row.id}/share`;
  return html`<span class="tag${s.status === "active" ? "" : " warn"}">${state}</span>
    <div class="actions">
      <form method="post" action="${action}"><input type="hidden" name="action" value="rotate">${expirySelect()}<button>${s.status === "active" ? "Rotate" : "New link"}</button></form>
      ${
        s.status === "active"
          ? html`<form method="post" action="${action}"><input type="hidden" name="action" value="set_expiry">${expirySelect()}<button>Set expiry</button></form>
      <form method="post" action="${action}"><input type="hidden" name="action" value="revoke"><button>Revoke</button></form>
      <a href="/dashboard?shown=${row.id}#${row.id}">Show link</a>`
          : ""
      }
    </div>`;
}

export interface ShownLink {
  workflowId: string;
  info: ShareInfo;
  url: string | null;
}

export function renderDashboard(nonce: string, account: string, rows: DashboardRow[], shown: ShownLink | null): Html {
  return layout(
    nonce,
    "Dashboard",
    html`<div class="topbar"><span class="brand">Waymark</span> <span class="muted">account ${account}</span> <a href="/dashboard/tokens">Tokens</a>
<form method="post" action="/logout"><button>Sign out</button></form></div>
<h1>Workflows</h1>
${
  shown
    ? html`<div class="review" id="shown-link"><h2>Share link</h2>${
        shown.url
          ? html`<p>Current link of <code>${shown.workflowId}</code>${shown.info.expires_at ? html` (expires ${formatTime(shown.info.expires_at)})` : ""}:</p>
          <p class="linkbox"><a href="${shown.url}" rel="noreferrer" target="_blank">${shown.url}</a></p>`
          : html`<p>No active link for <code>${shown.workflowId}</code> (${shown.info.status}). Create a new one.</p>`
      }</div>`
    : ""
}
${
  rows.length === 0
    ? html`<p class="muted">No workflows yet. Agents create them with start_workflow.</p>`
    : html`<table><thead><tr><th>Workflow</th><th>Status</th><th>Last activity</th><th>Tasks</th><th>Reviews</th><th>Share link</th></tr></thead><tbody>
${rows.map(
  (r) => html`<tr id="${r.id}"><td><strong>${r.name}</strong><br><code class="muted">${r.id}</code></td>
<td><span class="badge s-${r.status}">${STATUS_LABEL[r.status] ?? r.status}</span></td><td>${formatTime(r.updated_at)}</td>
<td>${r.tasks}${r.open_tasks > 0 ? ` (${r.open_tasks} open)` : ""}</td><td>${r.reviews_needed > 0 ? html`<span class="alert">${r.reviews_needed}</span>` : "0"}</td>
<td>${shareCell(r)}</td></tr>`,
)}
</tbody></table>`
}`,
  );
}
