/**
 * Share links: read-only access to one workflow's page, exports and live feed.
 *
 *   token: sh_<the workflow id's 20-char random part>_<8-char generation>_<26-char MAC>
 *
 * The first part routes the token to its WorkflowObject with no lookup. The generation
 * is derived from the link's random salt (a new one at every rotation) and the MAC is
 * HMAC(share secret, workflow id + generation): the Worker rejects a forged or mangled
 * token before any object is touched (`verifiedShareWorkflow`), and the object, which
 * stores only the salt and the SHA-256 of the whole token, still decides revoke, rotate
 * and expiry. Keeping the salt lets the owner's dashboard show the current link again
 * later; if the secret changes, existing links stop verifying and must be rotated.
 */
import { base32, constantTimeEqual, hmacSha256, sha256, sha256Hex } from "../crypto";
import { MAX_SHARE_SECONDS, type ShareInfo, type ShareStatus, shareStatus } from "../domain/share-status";
import type { Sql } from "../storage/sql";

export { MAX_SHARE_SECONDS, type ShareInfo, type ShareStatus, shareStatus };

const SHARE_TOKEN = /^sh_([a-z2-7]{20})_([a-z2-7]{8})_([a-z2-7]{26})$/;

/** The secret must carry at least this many bytes of entropy in production. */
export const MIN_SHARE_SECRET_BYTES = 32;

export type ShareAction = "rotate" | "revoke" | "set_expiry";

/** The workflow a share token points at, or null when it does not have a share token's shape (nothing is verified). */
export function workflowOfShareToken(token: string): string | null {
  const match = SHARE_TOKEN.exec(token);
  return match ? `wf_${match[1]}` : null;
}

/**
 * The key for share tokens and session cookies: WAYMARK_SHARE_SECRET, at least 32 bytes.
 * In development (`npm start` sets WAYMARK_DEV_TOKEN) one is derived from the dev token
 * when none is set. Anything else throws: the Worker answers every request with the
 * reason rather than signing links with a guessable key.
 */
export async function shareSecret(env: Env): Promise<string> {
  const problem = shareSecretProblem(env);
  if (problem) throw new Error(problem);
  return env.WAYMARK_SHARE_SECRET || sha256Hex(`waymark-share-secret\n${env.WAYMARK_DEV_TOKEN}`);
}

/** Why the configured share secret cannot be used, or null. */
export function shareSecretProblem(env: Pick<Env, "WAYMARK_SHARE_SECRET" | "WAYMARK_DEV_TOKEN">): string | null {
  const secret = env.WAYMARK_SHARE_SECRET ?? "";
  if (secret === "" && env.WAYMARK_DEV_TOKEN) return null;
  if (secret === "")
    return `WAYMARK_SHARE_SECRET is not set: set it to ${MIN_SHARE_SECRET_BYTES}+ random bytes (wrangler secret put WAYMARK_SHARE_SECRET)`;
  const bytes = new TextEncoder().encode(secret).length;
  if (bytes < MIN_SHARE_SECRET_BYTES) {
    return `WAYMARK_SHARE_SECRET is ${bytes} bytes: it must be at least ${MIN_SHARE_SECRET_BYTES} (e.g. openssl rand -base64 48)`;
  }
  return null;
}

async function shareMac(secret: string, workflowId: string, generation: string): Promise<string> {
  return base32(await hmacSha256(secret, `share-token\n${workflowId}\n${generation}`), 26);
}

/** The token for a workflow and salt under `secret`: deterministic, so the owner can be shown it again. */
export async function deriveShareToken(secret: string, workflowId: string, salt: string): Promise<string> {
  const generation = base32(await sha256(`share-generation\n${salt}`), 8);
  return `sh_${workflowId.slice(3)}_${generation}_${await shareMac(secret, workflowId, generation)}`;
}

/**
 * The workflow of a token this deployment minted, or null for anything else (wrong shape,
 * forged or mangled MAC, another secret). Needs no storage: the Worker calls it before it
 * touches any object. Whether the link is still active is the object's answer.
 */
export async function verifiedShareWorkflow(secret: string, token: string): Promise<string | null> {
  const match = SHARE_TOKEN.exec(token);
  if (!match?.[1] || !match[2] || !match[3]) return null;
  const workflowId = `wf_${match[1]}`;
  return constantTimeEqual(match[3], await shareMac(secret, workflowId, match[2])) ? workflowId : null;
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

export interface NewShareToken {
  salt: string;
  hash: string;
  token: string;
}

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

  /**
   * A first link's token, derived before its workflow exists (the signing is asynchronous), so
   * that `create` can write it inside the transaction that creates the workflow.
   */
  async newToken(workflowId = this.workflowId()): Promise<NewShareToken> {
    const salt = crypto.randomUUID();
    const token = await deriveShareToken(await shareSecret(this.env), workflowId, salt);
    return { salt, hash: await sha256Hex(token), token };
  }

  /** Writes a first link (none exists yet) and returns the owner's view of it, without deriving the token again. */
  create(link: NewShareToken, now = Date.now()): ShareInfo {
    this
      .sql`INSERT INTO share_link (id, token_hash, salt, created_at) VALUES (1, ${link.hash}, ${link.salt}, ${now}) ON CONFLICT (id) DO NOTHING`;
    return { status: "active", token: link.token, created_at: isoOrNull(now), expires_at: null, revoked_at: null };
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
