/**
 * @module domain/share-status
 * The state of a workflow's share link as the owner sees it, and the rule that decides it.
 * Pure: the workflow object stores links, the account index shows their state on the dashboard.
 */

import type { ShareStatus } from "@waymark/protocol/views/reads";

/** What the owner sees of a link (@waymark/protocol/views/reads). */
export type { ShareInfo, ShareStatus } from "@waymark/protocol/views/reads";

export function shareStatus(row: { revoked_at: number | null; expires_at: number | null } | null, now: number): ShareStatus {
  if (!row) return "none";
  if (row.revoked_at !== null) return "revoked";
  if (row.expires_at !== null && row.expires_at <= now) return "expired";
  return "active";
}

/** Longest expiry accepted: a year. Longer-lived sharing is "no expiry". */
export const MAX_SHARE_SECONDS = 365 * 24 * 3600;

/** Why an expiry (seconds from now, null for none) is refused, or null. */
export function expiryProblem(seconds: number | null): string | null {
  if (seconds === null || (Number.isInteger(seconds) && seconds > 0 && seconds <= MAX_SHARE_SECONDS)) return null;
  return `expires_in_seconds: must be a whole number of seconds from 1 to ${MAX_SHARE_SECONDS}, or null for no expiry`;
}
