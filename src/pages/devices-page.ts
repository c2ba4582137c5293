/**
 * @module pages/devices-page
 * The admin's devices page (/dashboard/devices), next to the tokens page: the machines whose
 * Waymark helper signs what it computes (name, fingerprint, approved, last used, state; revoke),
 * and approving a new one with the pairing code `waymark device pair` printed on it. Entering a
 * code shows the device's name and fingerprint first; nothing is approved until the owner
 * compares them with what the device printed and confirms. The pairing requests waiting are
 * listed with the token that asked; the owner can clear them all (after confirming), so no token
 * can keep the queue full. Everything interpolated is escaped by hono/html.
 */
import { html } from "hono/html";
import type { DeviceInfo, PairingRequest, PendingDevice } from "../account/devices";
import { credentialLabel } from "../domain/credentials";
import { layout } from "./dashboard";
import { renderTime, srOnly } from "./format";

type Html = ReturnType<typeof html>;

export interface DevicesPage {
  account: string;
  devices: DeviceInfo[];
  /** A code the owner entered, and the device it stands for: waiting for confirmation. */
  pending?: { code: string; device: PendingDevice };
  /** Why the last form was refused (shown as an alert). */
  problem?: string;
  /** The pairing requests waiting for approval, oldest first. */
  requests: PairingRequest[];
  /** The owner asked to clear them: shown for confirmation. */
  confirmClear?: boolean;
  /** How many requests were just cleared. */
  cleared?: number;
}

function requestRow(r: PairingRequest): Html {
  return html`<tr class="pairing-request"><td><strong>${r.name}</strong></td><td data-label="fingerprint"><code class="fingerprint">${r.fingerprint}</code></td>
<td data-label="requested">${renderTime(r.requested_at)}</td><td class="requested-by" data-label="asked with">${credentialLabel(r.credential)}</td><td data-label="expires">${renderTime(r.expires_at)}</td></tr>`;
}

/** The requests waiting, with the token that asked each; clearing them all asks for confirmation first. */
function requestsBlock(page: DevicesPage): Html | string {
  const cleared =
    page.cleared === undefined
      ? ""
      : html`<p class="notice" role="status" id="pairings-cleared">Cleared ${page.cleared} pairing request${page.cleared === 1 ? "" : "s"}: their codes no longer work.</p>`;
  if (page.requests.length === 0) return cleared;
  const action = page.confirmClear
    ? html`<form method="post" action="/dashboard/devices/pairings/clear" id="confirm-clear-pairings" class="notice" role="alert"><input type="hidden" name="confirmed" value="yes">
<p>Clear these ${page.requests.length} pairing request${page.requests.length === 1 ? "" : "s"}? Their codes stop working; a device of yours among them asks again with <code>waymark device pair</code>.</p>
<p><button type="submit">Clear them</button> <a href="/dashboard/devices">Cancel</a></p></form>`
    : html`<form method="post" action="/dashboard/devices/pairings/clear" id="clear-pairings"><p><button type="submit">Clear pending requests…</button></p></form>`;
  return html`${cleared}<h2 id="pairing-requests-title">Waiting for approval</h2>
<table id="pairing-requests" aria-labelledby="pairing-requests-title"><thead><tr><th scope="col">Name</th><th scope="col">Fingerprint</th><th scope="col">Requested</th><th scope="col">Asked with</th><th scope="col">Expires</th></tr></thead><tbody>
${page.requests.map(requestRow)}</tbody></table>${action}`;
}

function deviceRow(d: DeviceInfo): Html {
  return html`<tr id="device-${d.id}" class="device"><td><strong class="device-name">${d.name}</strong></td>
<td data-label="fingerprint"><code class="fingerprint">${d.fingerprint}</code></td><td data-label="approved">${renderTime(d.created_at)}</td>
<td class="last-used" data-label="last used">${d.last_used_at ? renderTime(d.last_used_at) : "never"}</td>
<td data-label="state"><span class="tag${d.revoked_at ? " warn" : ""}">${d.revoked_at ? html`revoked ${renderTime(d.revoked_at)}` : "approved"}</span>${
    d.revoked_at
      ? ""
      : html`<form method="post" action="/dashboard/devices/${d.id}/revoke" class="actions"><button>Revoke${srOnly(` device ${d.name}`)}</button></form>`
  }</td></tr>`;
}

function pendingBlock(pending: NonNullable<DevicesPage["pending"]>): Html {
  const d = pending.device;
  return html`<div class="notice" id="pending-device" role="status"><h2>Approve this device?</h2>
<p>It asked to be paired as <strong>${d.name}</strong> ${renderTime(d.requested_at)}. Its key's fingerprint:</p>
<p class="linkbox"><code id="pending-fingerprint">${d.fingerprint}</code></p>
<p>Approve it only if this is the fingerprint <code>waymark device pair</code> printed on your machine. Its helper's figures will then read “computed and signed” on pages and exports.</p>
<form method="post" action="/dashboard/devices/approve" id="approve-device"><input type="hidden" name="code" value="${pending.code}">
<p><label>Name<br><input name="name" required maxlength="100" size="30" value="${d.name}"></label></p>
<p><button type="submit">Approve device</button> <a href="/dashboard/devices">Cancel</a></p></form></div>`;
}

export function renderDevicesPage(nonce: string, page: DevicesPage): Html {
  return layout(
    nonce,
    "Devices",
    html`<nav class="topbar" aria-label="Account"><span class="brand">Waymark</span> <a href="/dashboard">Workflows</a> <a href="/dashboard/tokens">Tokens</a> <span class="muted">account ${page.account}</span>
<form method="post" action="/logout"><button>Sign out</button></form></nav>
<h1 id="main-content" tabindex="-1">Devices</h1>
<p>A device is a machine whose Waymark helper signs the file changes and usage it computes, with a key that never leaves that machine. Figures signed by an approved device read “computed and signed”; everything else reads “claimed by the client”.</p>
${page.problem ? html`<p class="alert" role="alert" id="device-problem">${page.problem}</p>` : ""}
${
  page.pending
    ? pendingBlock(page.pending)
    : html`<form method="post" action="/dashboard/devices/pair" id="pair-device">
<p><label>Pairing code<br><input name="code" required maxlength="20" size="12" autocomplete="off" spellcheck="false" placeholder="ABCD-EFGH"></label></p>
<p class="muted">Run <code>waymark device pair</code> on the machine (or <code>npx -y --package=&lt;this endpoint&gt;/helper/latest waymark device pair</code>); it prints a code that works once, for ten minutes.</p>
<p><button type="submit">Look up device</button></p></form>`
}
${requestsBlock(page)}
${
  page.devices.length === 0
    ? html`<p class="muted">No device is approved yet: every figure a helper sends reads “claimed by the client”.</p>`
    : html`<table id="devices"><thead><tr><th scope="col">Name</th><th scope="col">Fingerprint</th><th scope="col">Approved</th><th scope="col">Last used</th><th scope="col">State</th></tr></thead><tbody>
${page.devices.map(deviceRow)}</tbody></table>`
}`,
  );
}
