/**
 * @module account/tokens
 * Managed API tokens of one account, kept in its AccountObject's SQLite. A token reads
 * `wmk_<account>_<id>_<secret>`: recognisable in logs and secret scanners, and the Worker
 * routes its check to the right account object from the token alone (no global table, no
 * scan): one object call verifies it. Only the SHA-256 of the whole token is stored; the
 * token itself is returned once, at creation. Revoked tokens stay listed (revoked_at set)
 * for 30 days so the dashboard can show what was cut off and when.
 */
import { constantTimeEqual, randomBase32, sha256Hex } from "../crypto";
import { normalizeScopes, type Scope } from "../domain/access-scopes";
import { isTokenId, TOKEN_ID_LENGTH, TOKEN_SECRET_LENGTH, TOUCH_INTERVAL_MS } from "../domain/managed-token";
import { fail, notFound, ok, type Result } from "../errors";
import { isoTime } from "../iso-time";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

/** How long a revoked or expired token stays on the list before it is deleted. */
const KEEP_ENDED_MS = 30 * 24 * 3600 * 1000;

export interface TokenInfo {
  id: string;
  name: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedToken extends TokenInfo {
  /** The secret, shown once. */
  token: string;
}

export interface NewToken {
  name: string;
  scopes: Scope[];
  /** ms since the epoch, or null for no expiry. */
  expiresAt: number | null;
}

/** What a successful verification tells the Worker. */
export interface VerifiedToken {
  scopes: Scope[];
  /** ms since the epoch, or null. */
  expiresAt: number | null;
}

/** An active token as what is derived from it sees it (the hash lets the Worker cache it like a verification). */
export interface ActiveToken extends VerifiedToken {
  hash: string;
}

type Row = Record<string, SqlStorageValue>;
const text = (value: SqlStorageValue | undefined) => (value === null || value === undefined ? null : String(value));

function infoFromRow(row: Row): TokenInfo {
  return {
    id: String(row.id),
    name: String(row.name),
    scopes: normalizeScopes(String(row.scopes).split(" ") as Scope[]),
    created_at: String(row.created_at),
    expires_at: text(row.expires_at),
    last_used_at: text(row.last_used_at),
    revoked_at: text(row.revoked_at),
  };
}

export class ApiTokens {
  constructor(private readonly sql: Sql) {}

  /** A new token of `account` (the object's own account: it is part of the token). */
  async create(account: string, input: NewToken, now = Date.now()): Promise<Result<CreatedToken>> {
    // Revoked and expired tokens stay listed for a while, then go: the table stays bounded.
    const forgotten = isoTime(now - KEEP_ENDED_MS);
    this.sql`DELETE FROM api_tokens WHERE revoked_at < ${forgotten} OR expires_at < ${forgotten}`;
    const live =
      this.sql<{ n: number }>`SELECT count(*) AS n FROM api_tokens
      WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${isoTime(now)})`[0]?.n ?? 0;
    if (live >= LIMITS.API_TOKENS) {
      return fail("QUOTA_EXCEEDED", `tokens: at most ${LIMITS.API_TOKENS} active per account (this account has ${live}); revoke one first`);
    }
    const id = randomBase32(TOKEN_ID_LENGTH);
    const token = `wmk_${account}_${id}_${randomBase32(TOKEN_SECRET_LENGTH)}`;
    const scopes = normalizeScopes(input.scopes);
    const expires = input.expiresAt === null ? null : isoTime(input.expiresAt);
    this.sql`INSERT INTO api_tokens (id, name, scopes, token_hash, created_at, expires_at)
      VALUES (${id}, ${input.name}, ${scopes.join(" ")}, ${await sha256Hex(token)}, ${isoTime(now)}, ${expires})`;
    return ok({ id, name: input.name, scopes, created_at: isoTime(now), expires_at: expires, last_used_at: null, revoked_at: null, token });
  }

  /** Active tokens first (newest first), then revoked ones. */
  list(): TokenInfo[] {
    return this.sql<Row>`SELECT * FROM api_tokens ORDER BY revoked_at IS NOT NULL, created_at DESC`.map(infoFromRow);
  }

  revoke(id: string, now = Date.now()): Result<TokenInfo> {
    if (!isTokenId(id)) return notFound("id", `token ${id.slice(0, 40)}`);
    this.sql`UPDATE api_tokens SET revoked_at = ${isoTime(now)} WHERE id = ${id} AND revoked_at IS NULL`;
    const row = this.sql<Row>`SELECT * FROM api_tokens WHERE id = ${id}`[0];
    return row ? ok(infoFromRow(row)) : notFound("id", `token ${id}`);
  }

  /** The token's grant when `hash` is its hash and it is neither revoked nor expired; read-only. */
  verify(id: string, hash: string, now = Date.now()): VerifiedToken | null {
    const row = this.sql<Row>`SELECT * FROM api_tokens WHERE id = ${id}`[0];
    if (!row || !constantTimeEqual(String(row.token_hash), hash) || row.revoked_at !== null) return null;
    const expiresAt = row.expires_at === null ? null : Date.parse(String(row.expires_at));
    if (expiresAt !== null && expiresAt <= now) return null;
    return { scopes: infoFromRow(row).scopes, expiresAt };
  }

  /** The token while it is unrevoked and unexpired, else null: sessions, grants and webhooks made with it ask. */
  active(id: string, now = Date.now()): ActiveToken | null {
    const row = this.sql<Row>`SELECT * FROM api_tokens WHERE id = ${id}`[0];
    if (!row || row.revoked_at !== null) return null;
    const expiresAt = row.expires_at === null ? null : Date.parse(String(row.expires_at));
    if (expiresAt !== null && expiresAt <= now) return null;
    return { hash: String(row.token_hash), scopes: infoFromRow(row).scopes, expiresAt };
  }

  /** Records a use; a no-op when the last one is under a minute old, so a busy token costs one write a minute. */
  touch(id: string, now = Date.now()): void {
    const cutoff = isoTime(now - TOUCH_INTERVAL_MS);
    this.sql`UPDATE api_tokens SET last_used_at = ${isoTime(now)}
      WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${cutoff})`;
  }
}
