/**
 * @module account/sessions
 * Dashboard sessions of one account, kept server-side in its AccountObject so that a session
 * really ends: a replayed cookie names a session that no longer exists, and the live owner pages
 * it opened are closed. Each session carries the credential it was opened with
 * (src/domain/credentials.ts) and ends no later than that credential: at sign-out, at its expiry
 * (never after the credential's), when the credential is revoked, and when it is no longer
 * configured (the object checks it every time the session is used).
 *
 * Sessions are capped per credential (LIMITS.SESSIONS_PER_CREDENTIAL; the oldest of that
 * credential end first), so signing in many times with one token never ends a session opened
 * with another. The pages each session follows live are in `session_follows`, at most
 * LIMITS.OWNER_FOLLOWS per session.
 */
import { randomBase32 } from "../crypto";
import type { CredentialRef } from "../domain/credentials";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

const SESSION_ID = /^[a-z2-7]{26}$/;
/** Sessions were kept with the key-value API before this table; such a key is deleted at the next sign-in. */
const LEGACY_PREFIX = "session:";

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

/** A session as stored: the credential it was opened with and when it ends (ms). */
export interface StoredSession {
  credential: CredentialRef;
  expiresAt: number;
}

/** Closes the live owner sockets a session opened on one workflow (a call to that workflow's object). */
export type CloseOwnerSockets = (workflowId: string, session: string) => Promise<void>;

export class DashboardSessions {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly closeSockets: CloseOwnerSockets,
  ) {}

  /** A new session of `credential` valid until `expiresAt` (ms); the credential's oldest sessions past the cap end. */
  async start(credential: CredentialRef, expiresAt: number, now = Date.now()): Promise<string> {
    const legacy = await this.storage.list({ prefix: LEGACY_PREFIX, limit: 64 });
    if (legacy.size > 0) await this.storage.delete([...legacy.keys()]);
    const surplus = this.sql<{ id: string }>`SELECT id FROM dashboard_sessions
      WHERE credential = ${credential} AND expires_at > ${now}
      ORDER BY expires_at DESC, id LIMIT -1 OFFSET ${LIMITS.SESSIONS_PER_CREDENTIAL - 1}`;
    await this.endAll([...surplus.map((s) => s.id), ...this.expired(now)]);
    const id = randomBase32(26);
    this.sql`INSERT INTO dashboard_sessions (id, credential, expires_at) VALUES (${id}, ${credential}, ${expiresAt})`;
    return id;
  }

  /** The session while it lasts, else null. */
  get(id: string, now = Date.now()): StoredSession | null {
    if (!isSessionId(id)) return null;
    const row = this.sql<{ credential: string; expires_at: number }>`
      SELECT credential, expires_at FROM dashboard_sessions WHERE id = ${id}`[0];
    return row && row.expires_at > now ? { credential: row.credential, expiresAt: row.expires_at } : null;
  }

  /** Ends the session, then closes the live owner pages it opened (a failure is logged: the session is over either way). */
  async end(id: string): Promise<void> {
    this.sql`DELETE FROM dashboard_sessions WHERE id = ${id}`;
    const followed = this.sql<{ workflow_id: string }>`DELETE FROM session_follows WHERE session_id = ${id} RETURNING workflow_id`;
    await Promise.all(
      followed.map(async ({ workflow_id }) => {
        try {
          await this.closeSockets(workflow_id, id);
        } catch (error) {
          console.error("closing an ended session's live page failed", error);
        }
      }),
    );
  }

  /** Every session opened with `credential` (it was revoked or is no longer configured). */
  async endCredential(credential: CredentialRef): Promise<void> {
    await this.endAll(this.sql<{ id: string }>`SELECT id FROM dashboard_sessions WHERE credential = ${credential}`.map((s) => s.id));
  }

  /** Sessions past their expiry: their live pages close. */
  async endExpired(now = Date.now()): Promise<void> {
    await this.endAll(this.expired(now));
  }

  /** When the next session expires (the object's alarm closes its pages then), or null. */
  nextExpiry(): number | null {
    return this.sql<{ at: number | null }>`SELECT min(expires_at) AS at FROM dashboard_sessions`[0]?.at ?? null;
  }

  /**
   * Notes that `session` (checked open by the caller) follows `workflowId` live. Past
   * OWNER_FOLLOWS pages per session it refuses: a socket that could not be closed when the session ends must not exist.
   */
  follow(session: string, workflowId: string): boolean {
    const known = this.sql`SELECT 1 FROM session_follows WHERE session_id = ${session} AND workflow_id = ${workflowId}`.length > 0;
    if (known) return true;
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM session_follows WHERE session_id = ${session}`[0]?.n ?? 0;
    if (count >= LIMITS.OWNER_FOLLOWS) return false;
    this.sql`INSERT INTO session_follows (session_id, workflow_id) VALUES (${session}, ${workflowId})`;
    return true;
  }

  private expired(now: number): string[] {
    return this.sql<{ id: string }>`SELECT id FROM dashboard_sessions WHERE expires_at <= ${now}`.map((s) => s.id);
  }

  private async endAll(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.end(id);
  }
}
