/**
 * @module workflow/share
 * The share link of one workflow, kept in its WorkflowObject's SQLite (columns of the workflow
 * row since v31, all NULL while there is no link: a table of its own was rows written by every
 * new workflow's schema): only the link's salt
 * (so the owner can be shown the token again) and the SHA-256 of its token (domain/share-token
 * derives and verifies tokens). The object decides revoke, rotate and expiry; a token is checked
 * against the stored hash, never compared itself.
 */
import { sha256Hex } from "../crypto";
import { type ShareInfo, type ShareStatus, shareStatus } from "../domain/share-status";
import { deriveShareToken, shareSecret, workflowOfShareToken } from "../domain/share-token";
import { isoTime, isoTimeOrNull } from "../iso-time";
import type { Sql } from "../storage/sql";

export type ShareAction = "rotate" | "revoke" | "set_expiry";

/** What the workflow row keeps of a link: the token's hash and its salt. */
export interface ShareHash {
  salt: string;
  hash: string;
}

export interface NewShareToken extends ShareHash {
  token: string;
}

type ShareRow = { token_hash: string; salt: string; created_at: number; expires_at: number | null; revoked_at: number | null };

/** The share link of one workflow, kept in that workflow's SQLite. */
export class ShareLinks {
  constructor(
    private readonly sql: Sql,
    private readonly env: Env,
    private readonly workflowId: () => string,
  ) {}

  private row(): ShareRow | null {
    return (
      this.sql<ShareRow>`SELECT share_token_hash AS token_hash, share_salt AS salt, share_created_at AS created_at,
        share_expires_at AS expires_at, share_revoked_at AS revoked_at FROM workflow WHERE share_token_hash IS NOT NULL`[0] ?? null
    );
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
      created_at: isoTimeOrNull(row?.created_at ?? null),
      expires_at: isoTimeOrNull(row?.expires_at ?? null),
      revoked_at: isoTimeOrNull(row?.revoked_at ?? null),
    };
  }

  /** A new token (the old one stops working at once), optionally expiring. */
  async rotate(expiresInSeconds: number | null, now = Date.now()): Promise<void> {
    const { salt, hash } = await this.newToken();
    // No await between here and the write: a concurrent request cannot interleave.
    const expires = expiresInSeconds === null ? null : now + expiresInSeconds * 1000;
    this.sql`UPDATE workflow SET share_token_hash = ${hash}, share_salt = ${salt}, share_created_at = ${now},
      share_expires_at = ${expires}, share_revoked_at = NULL`;
  }

  /**
   * A first link's token, derived before its workflow exists (the signing is asynchronous), so
   * that the workflow's row is written with it (records.insertWorkflow), in the transaction that
   * creates the workflow.
   */
  async newToken(workflowId = this.workflowId()): Promise<NewShareToken> {
    const salt = crypto.randomUUID();
    const token = await deriveShareToken(await shareSecret(this.env), workflowId, salt);
    return { salt, hash: await sha256Hex(token), token };
  }

  /** The owner's view of a first link written with its workflow's row, without deriving the token again. */
  created(link: NewShareToken, now: number): ShareInfo {
    return { status: "active", token: link.token, created_at: isoTime(now), expires_at: null, revoked_at: null };
  }

  revoke(now = Date.now()): void {
    this.sql`UPDATE workflow SET share_revoked_at = ${now} WHERE share_token_hash IS NOT NULL AND share_revoked_at IS NULL`;
  }

  /** Changes the expiry of the current link (null: never). */
  setExpiry(expiresInSeconds: number | null, now = Date.now()): void {
    const expires = expiresInSeconds === null ? null : now + expiresInSeconds * 1000;
    this.sql`UPDATE workflow SET share_expires_at = ${expires} WHERE share_token_hash IS NOT NULL`;
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
