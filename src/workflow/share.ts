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
import { MAX_SHARE_SECONDS, type ShareInfo, type ShareStatus, shareStatus } from "../domain/share-status";
import type { Sql } from "../storage/sql";

export { MAX_SHARE_SECONDS, type ShareInfo, type ShareStatus, shareStatus };

const SHARE_TOKEN = /^sh_([a-z2-7]{20})_([a-z2-7]{32})$/;
const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";

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
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
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

export const SHARE_MIGRATION_STATEMENTS = [
  // At most one row: the current link of this workflow. Only the salt and the token's hash are kept.
  `CREATE TABLE share_link (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    token_hash TEXT NOT NULL,
    salt TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER
  )`,
];

type ShareRow = { token_hash: string; salt: string; created_at: number; expires_at: number | null; revoked_at: number | null };

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The share link of one workflow, kept in that workflow's SQLite. */
export class ShareLinks {
  constructor(
    private readonly sql: Sql,
    private readonly env: Env,
    private readonly workflowId: () => string,
  ) {}

  private row(): ShareRow | null {
    return this.sql<ShareRow>`SELECT token_hash, salt, created_at, expires_at, revoked_at FROM share_link WHERE id = 1`[0] ?? null;
  }

  /** The owner's view of the link; the token is re-derived only while the link is active. */
  async info(now = Date.now()): Promise<ShareInfo> {
    const row = this.row();
    const status = shareStatus(row, now);
    let token: string | null = null;
    if (row && status === "active") {
      const derived = await deriveShareToken(await shareSecret(this.env), this.workflowId(), row.salt);
      token = (await sha256Hex(derived)) === row.token_hash ? derived : null;
    }
    return {
      status,
      token,
      created_at: isoOrNull(row?.created_at ?? null),
      expires_at: isoOrNull(row?.expires_at ?? null),
      revoked_at: isoOrNull(row?.revoked_at ?? null),
    };
  }

  /** A new token (the old one stops working at once), optionally expiring. */
  async rotate(expiresInSeconds: number | null, now = Date.now()): Promise<void> {
    const { salt, hash } = await this.newToken();
    // No await between here and the write: a concurrent request cannot interleave.
    const expires = expiresInSeconds === null ? null : now + expiresInSeconds * 1000;
    this.sql`INSERT INTO share_link (id, token_hash, salt, created_at, expires_at, revoked_at)
      VALUES (1, ${hash}, ${salt}, ${now}, ${expires}, NULL)
      ON CONFLICT (id) DO UPDATE SET token_hash = excluded.token_hash, salt = excluded.salt,
        created_at = excluded.created_at, expires_at = excluded.expires_at, revoked_at = NULL`;
  }

  /** Creates the first link; an existing link (even revoked) is left as the owner set it. */
  async ensure(now = Date.now()): Promise<void> {
    if (this.row()) return;
    const { salt, hash } = await this.newToken();
    this.sql`INSERT INTO share_link (id, token_hash, salt, created_at) VALUES (1, ${hash}, ${salt}, ${now}) ON CONFLICT (id) DO NOTHING`;
  }

  private async newToken(): Promise<{ salt: string; hash: string }> {
    const salt = crypto.randomUUID();
    const token = await deriveShareToken(await shareSecret(this.env), this.workflowId(), salt);
    return { salt, hash: await sha256Hex(token) };
  }

  revoke(now = Date.now()): void {
    this.sql`UPDATE share_link SET revoked_at = ${now} WHERE id = 1 AND revoked_at IS NULL`;
  }

  /** Changes the expiry of the current link (null: never). */
  setExpiry(expiresInSeconds: number | null, now = Date.now()): void {
    const expires = expiresInSeconds === null ? null : now + expiresInSeconds * 1000;
    this.sql`UPDATE share_link SET expires_at = ${expires} WHERE id = 1`;
  }

  expiresAt(): number | null {
    return this.row()?.expires_at ?? null;
  }

  /**
   * Whether `token` opens this workflow now: compares SHA-256 hashes, never the token itself.
   * The row is read after the only await, so a caller can act on the answer before any other
   * request (a revoke) runs.
   */
  async check(token: string, now = Date.now()): Promise<ShareStatus | "not_found"> {
    const hash = await sha256Hex(token);
    const row = this.row();
    if (!row || workflowOfShareToken(token) !== this.workflowId() || hash !== row.token_hash) return "not_found";
    return shareStatus(row, now);
  }
}
