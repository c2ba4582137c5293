/**
 * Share links: read-only access to one workflow's page, exports and live feed.
 *
 *   token: sh_<the workflow id's 20-char random part>_<32 base32 chars>
 *
 * The first part routes the token to its WorkflowObject with no lookup. The secret part
 * is HMAC(share secret, workflow id + a random salt): the object stores only the salt and
 * the SHA-256 of the whole token. Verification hashes the presented token and compares
 * hashes, so timing says nothing about the token. Keeping the salt lets the owner's
 * dashboard show the current link again later (it needs the server secret to do so);
 * if the secret changes, existing links keep working but can no longer be re-displayed.
 */
const SHARE_TOKEN = /^sh_([a-z2-7]{20})_([a-z2-7]{32})$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

export type ShareStatus = "active" | "revoked" | "expired" | "none";

/** What the owner sees of a link; `token` is null when it cannot be re-derived (secret changed) or the link is not active. */
export interface ShareInfo {
  status: ShareStatus;
  token: string | null;
  created_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export type ShareAction = "rotate" | "revoke" | "set_expiry";

/** The workflow a share token points at, or null when it is not a share token at all. */
export function workflowOfShareToken(token: string): string | null {
  const match = SHARE_TOKEN.exec(token);
  return match ? `wf_${match[1]}` : null;
}

export async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function hmac(secret: string, message: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message)));
}

/** base64url HMAC-SHA-256, for signed cookies. */
export async function hmacBase64Url(secret: string, message: string): Promise<string> {
  const bytes = await hmac(secret, message);
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The key for share tokens and session cookies. WAYMARK_SHARE_SECRET when set; otherwise
 * derived from the token table (a secret already), so a deployment works without extra
 * setup — changing the tokens then also ends every browser session.
 */
export async function shareSecret(env: Env): Promise<string> {
  if (env.WAYMARK_SHARE_SECRET && env.WAYMARK_SHARE_SECRET.length >= 16) return env.WAYMARK_SHARE_SECRET;
  if (env.WAYMARK_SHARE_SECRET) return sha256Hex(`waymark-share-secret\n${env.WAYMARK_SHARE_SECRET}`);
  return sha256Hex(`waymark-share-secret\n${env.WAYMARK_TOKENS ?? ""}\n${env.WAYMARK_DEV_TOKEN ?? ""}`);
}

/** The token for a workflow and salt under `secret`: deterministic, so the owner can be shown it again. */
export async function deriveShareToken(secret: string, workflowId: string, salt: string): Promise<string> {
  const bytes = await hmac(secret, `share-token\n${workflowId}\n${salt}`);
  let secretPart = "";
  for (let i = 0; i < 32; i++) secretPart += ALPHABET[(bytes[i] ?? 0) & 31];
  return `sh_${workflowId.slice(3)}_${secretPart}`;
}

export function shareStatus(row: { revoked_at: number | null; expires_at: number | null } | null, now: number): ShareStatus {
  if (!row) return "none";
  if (row.revoked_at !== null) return "revoked";
  if (row.expires_at !== null && row.expires_at <= now) return "expired";
  return "active";
}
