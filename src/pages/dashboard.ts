/**
 * @module pages/dashboard
 * The owner's pages: sign-in and the dashboard — the account's totals and settings, its
 * workflows (searched by text or file path, filtered by status and needs-review, newest first,
 * paged) with their totals, share links and the forms that manage them. Escaped like page.ts.
 */
import { html, raw } from "hono/html";
import type { AccountSettings, AccountTotals, DashboardMatch, DashboardPage, DashboardRow } from "../account/account-object";
import type { ShareInfo } from "../domain/share-status";
import { LIMITS } from "../limits";
import { STATUS_WORD } from "./files";
import { formatCount, formatUsd, renderTime, srOnly, statusBadge } from "./format";
import { OWNER_SCRIPT } from "./scripts";
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

/**
 * The owner pages' shell (dashboard, insights, tokens, consent): a nonce'd stylesheet (the pages'
 * own, plus `style` for one page) and one script, which shows times in the viewer's zone.
 */
export function layout(nonce: string, title: string, body: Html, style = ""): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${title} — Waymark</title><style nonce="${nonce}">${raw(PAGE_STYLE)}${raw(style)}</style></head>
<body><main><a class="skip" href="#main-content">Skip to content</a>${body}</main><script nonce="${nonce}">${raw(OWNER_SCRIPT)}</script></body></html>`;
}

export function renderLoginPage(nonce: string, error: string | null): Html {
  return layout(
    nonce,
    "Sign in",
    html`<h1 id="main-content" tabindex="-1">Waymark dashboard</h1>
<p>Paste your API token (the bearer token your agents use). It is sent once, in this form's body, and never stored in the browser: you get a signed session cookie instead.</p>
<p id="token-source" class="muted">Where a token comes from: on your own machine, the development token <code>npm start</code> prints (kept in <code>.wrangler/dev-token</code>); on a deployment, a token its operator set (<code>WAYMARK_TOKENS</code>), or one an admin of your account made for you on the <strong>Tokens</strong> page (<code>/dashboard/tokens</code>, after signing in).</p>
${error ? html`<p class="alert" role="alert">${error}</p>` : ""}
<form method="post" action="/login"><p><label>API token<br><input type="password" name="token" autocomplete="current-password" required size="40" aria-describedby="token-source"></label></p>
<p><button type="submit">Sign in</button></p></form>`,
  );
}

const expirySelect = () =>
  html`<select name="expires_in_seconds">${EXPIRY_CHOICES.map((c) => html`<option value="${c.seconds}">${c.label}</option>`)}</select>`;

/** "active, expires …", "no link yet", "revoked", "expired". */
export function shareState(s: Pick<ShareInfo, "status" | "expires_at">): Html | string {
  if (s.status === "active") return s.expires_at ? html`active, expires ${renderTime(s.expires_at)}` : "active";
  return s.status === "none" ? "no link yet" : s.status;
}

/**
 * The forms that manage one workflow's link, posted to `action` (the dashboard's or the owner
 * view's route). Each control says what it acts on: `subject` (a workflow's name, where a page
 * lists several) is added for assistive technology.
 */
export function shareForms(action: string, status: ShareInfo["status"], subject: string | null, showLink: Html | string = ""): Html {
  const of = subject === null ? "" : srOnly(` of ${subject}`);
  return html`<div class="actions">
      <form method="post" action="${action}"><input type="hidden" name="action" value="rotate"><label>${status === "active" ? "New link expires" : "Link expires"}${of} ${expirySelect()}</label><button>${
        status === "active" ? "Rotate link" : "Create link"
      }${of}</button></form>
      ${
        status === "active"
          ? html`<form method="post" action="${action}"><input type="hidden" name="action" value="set_expiry"><label>Current link expires${of} ${expirySelect()}</label><button>Set expiry${of}</button></form>
      <form method="post" action="${action}"><input type="hidden" name="action" value="revoke"><button>Revoke link${of}</button></form>
      ${showLink}`
          : ""
      }
    </div>`;
}

function shareCell(row: DashboardRow): Html {
  const s = row.share;
  return html`<span class="tag${s.status === "active" ? "" : " warn"}">${shareState(s)}</span>
    <details class="share-manage"><summary>Manage link${srOnly(` of ${row.name}`)}</summary>${shareForms(
      `/dashboard/workflows/${row.id}/share`,
      s.status,
      row.name,
      html`<a href="/dashboard?shown=${row.id}#${row.id}">Show link${srOnly(` of ${row.name}`)}</a>`,
    )}</details>`;
}

export interface ShownLink {
  workflowId: string;
  info: ShareInfo;
  url: string | null;
}

/** The filters as the dashboard's form and links carry them. */
export interface DashboardFilters {
  q: string;
  path: string;
  status: string;
  review: boolean;
  page: number;
}

const STATUS_CHOICES = [
  { value: "", label: "any status" },
  { value: "active", label: "in progress" },
  { value: "success", label: "success" },
  { value: "partial_success", label: "partial success" },
  { value: "failed", label: "failed" },
];

/** The dashboard URL for these filters (empty ones left out). */
export function dashboardHref(filters: DashboardFilters, page: number): string {
  const params = new URLSearchParams();
  if (filters.q) params.set("q", filters.q);
  if (filters.path) params.set("path", filters.path);
  if (filters.status) params.set("status", filters.status);
  if (filters.review) params.set("review", "1");
  if (page > 0) params.set("page", String(page));
  const query = params.toString();
  return query ? `/dashboard?${query}` : "/dashboard";
}

const tokens = (r: { input_tokens: number; output_tokens: number }) => formatCount(r.input_tokens + r.output_tokens);

function renderAccountTotals(t: AccountTotals): Html {
  const cell = (value: string | number, label: string) =>
    html`<div><b>${typeof value === "number" ? formatCount(value) : value}</b><span>${label}</span></div>`;
  return html`<div class="totals" id="account-totals">${cell(t.workflows, "workflows")}${cell(t.open_workflows, "in progress")}${cell(t.tasks, "tasks")}${cell(
    t.files_changed,
    "files changed",
  )}${cell(t.reviews_needed, "reviews needed")}${cell(tokens(t), "tokens")}${cell(formatUsd(t.cost_usd), "cost (USD)")}</div>`;
}

function renderSettings(settings: AccountSettings): Html {
  return html`<details class="settings" id="settings"><summary>Account settings</summary>
<form method="post" action="/dashboard/settings">
<p><label><input type="checkbox" name="share_new_workflows" value="on"${settings.share_new_workflows ? html` checked` : ""}> Give new workflows a share link</label></p>
<p class="muted">On by default. When off, start_workflow returns no share_url and nothing is readable outside this dashboard until you create a link from the workflow's page.</p>
<p><button type="submit">Save settings</button></p></form></details>`;
}

function renderFilters(f: DashboardFilters): Html {
  return html`<form class="filters" method="get" action="/dashboard" role="search" aria-label="Workflows">
<label>Text<input type="search" name="q" value="${f.q}" placeholder="words from names, goals, decisions…"></label>
<label>File path<input type="search" name="path" value="${f.path}" placeholder="src/billing/ or src/billing/tax.ts"></label>
<label>Status<select name="status">${STATUS_CHOICES.map((c) => html`<option value="${c.value}"${c.value === f.status ? html` selected` : ""}>${c.label}</option>`)}</select></label>
<label class="check"><input type="checkbox" name="review" value="1"${f.review ? html` checked` : ""}> needs review</label>
<button type="submit">Search</button>${f.q || f.path || f.status || f.review ? html` <a href="/dashboard">Clear</a>` : ""}
</form>`;
}

function renderMatch(match: DashboardMatch | undefined): Html | string {
  if (!match) return "";
  return html`<div class="match">${match.text ? html`<span class="muted">matched:</span> ${match.text}` : ""}${(match.paths ?? []).map(
    (p) =>
      html`<div><span class="fs fs-${p.status}" aria-hidden="true">${p.status}</span>${srOnly((STATUS_WORD as Record<string, string>)[p.status] ?? p.status)} <code>${p.path}</code> <span class="muted">by ${p.task_name}</span></div>`,
  )}</div>`;
}

/**
 * Where a workflow ran: its repository (the remote, or the local repository's fingerprint without
 * one) and the branch it started on, so workflows of one name from different repositories differ.
 */
function repositoryCell(repository: DashboardRow["repository"]): Html {
  if (!repository) return html`<span class="muted">not reported</span>`;
  const name = repository.remote ?? `local repository ${repository.fingerprint.slice(0, 12)}`;
  return html`<span class="repo">${name}</span><br><span class="muted">${repository.branch ? html`branch <code>${repository.branch}</code>` : "detached HEAD"}</span>`;
}

/** A workflow's row; each cell names itself (data-label) for the phone layout, where the header row is not shown. */
function renderRow(r: DashboardPage["rows"][number]): Html {
  return html`<tr id="${r.id}"><td><a class="wf-link" href="/w/${r.id}"><strong>${r.name}</strong></a><br><code class="muted">${r.id}</code>${renderMatch(r.match)}</td>
<td data-label="repository">${repositoryCell(r.repository)}</td>
<td data-label="status">${statusBadge(r.status)}</td><td data-label="last activity">${renderTime(r.updated_at)}</td>
<td class="num" data-label="tasks">${formatCount(r.tasks)}${r.open_tasks > 0 ? ` (${formatCount(r.open_tasks)} open)` : ""}</td>
<td class="num" data-label="files">${formatCount(r.files_changed ?? 0)}</td>
<td class="num" data-label="tokens">${tokens(r)}</td>
<td class="num" data-label="cost">${formatUsd(r.cost_usd)}</td>
<td class="num" data-label="reviews">${r.reviews_needed > 0 ? html`<span class="alert">${formatCount(r.reviews_needed)}</span>` : "0"}</td>
<td data-label="share link">${shareCell(r)}</td></tr>`;
}

function renderPager(f: DashboardFilters, page: DashboardPage): Html | string {
  if (page.pages <= 1) return "";
  return html`<nav class="pager" aria-label="Pages of workflows">${page.page > 0 ? html`<a rel="prev" href="${dashboardHref(f, page.page - 1)}">← Newer</a>` : ""}
<span class="muted">page ${page.page + 1} of ${page.pages}</span>${page.page + 1 < page.pages ? html`<a rel="next" href="${dashboardHref(f, page.page + 1)}">Older →</a>` : ""}</nav>`;
}

export interface DashboardData {
  account: string;
  page: DashboardPage;
  totals: AccountTotals;
  settings: AccountSettings;
  filters: DashboardFilters;
  shown: ShownLink | null;
}

/** The account's pages, the current one marked for assistive technology. */
export function accountNav(account: string, current: "workflows" | "insights"): Html {
  const link = (href: string, page: typeof current, text: string) =>
    html`<a href="${href}"${current === page ? html` aria-current="page"` : ""}>${text}</a>`;
  return html`<nav class="topbar" aria-label="Account"><span class="brand">Waymark</span> <span class="muted">account ${account}</span> ${link("/dashboard", "workflows", "Workflows")} ${link("/dashboard/insights", "insights", "Insights")} <a href="/dashboard/tokens">Tokens</a> <a href="/dashboard/devices">Devices</a>
<form method="post" action="/logout"><button>Sign out</button></form></nav>`;
}

export function renderDashboard(nonce: string, d: DashboardData): Html {
  const { shown, filters, page } = d;
  const filtered = Boolean(filters.q || filters.path || filters.status || filters.review);
  return layout(
    nonce,
    "Dashboard",
    html`${accountNav(d.account, "workflows")}
<h1 id="main-content" tabindex="-1">Workflows</h1>
${renderAccountTotals(d.totals)}
${renderSettings(d.settings)}
${
  shown
    ? html`<div class="notice" id="shown-link" role="status"><h2>Share link</h2>${
        shown.url
          ? html`<p>Current link of <code>${shown.workflowId}</code>${shown.info.expires_at ? html` (expires ${renderTime(shown.info.expires_at)})` : ""}:</p>
          <p class="linkbox"><a href="${shown.url}" rel="noreferrer" target="_blank">${shown.url}</a></p>`
          : html`<p>No active link for <code>${shown.workflowId}</code> (${shown.info.status}). Create a new one.</p>`
      }</div>`
    : ""
}
${renderFilters(filters)}
<p class="muted" id="result-count">${page.total} workflow${page.total === 1 ? "" : "s"}${filtered ? " match" : ""}, newest activity first</p>
${page.paths_searched_all === false ? html`<p class="muted" id="paths-searched">The path was searched in the account's newest task completions only (${LIMITS.PATH_SETS_SCANNED} or ${LIMITS.PATH_SETS_SCANNED_BYTES / 1024 / 1024} MiB of their paths); older ones were not searched.</p>` : ""}
${
  page.rows.length === 0
    ? html`<p class="muted">${filtered ? "Nothing matches these filters." : "No workflows yet. Agents create them with start_workflow."}</p>`
    : html`<table class="workflows"><thead><tr><th scope="col">Workflow</th><th scope="col">Repository</th><th scope="col">Status</th><th scope="col">Last activity</th><th scope="col">Tasks</th><th scope="col">Files</th><th scope="col">Tokens</th><th scope="col">Cost (USD)</th><th scope="col">Reviews</th><th scope="col">Share link</th></tr></thead><tbody>
${page.rows.map(renderRow)}
</tbody></table>`
}
${renderPager(filters, page)}`,
  );
}
