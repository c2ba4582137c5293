/**
 * @module account/sessions
 * Dashboard sessions of one account, kept server-side in its AccountObject so that
 * signing out really ends a session: a replayed cookie names a session that no longer
 * exists, and the live owner pages it opened are closed. Sessions are stored with the
 * object's key-value API (no schema migration), at most MAX_SESSIONS per account (the oldest
 * go first), expired ones dropped as they are met; the pages each session follows live in
 * the `session_follows` table, at most LIMITS.OWNER_FOLLOWS per session.
 */
import { randomBase32 } from "../crypto";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

const PREFIX = "session:";
const SESSION_ID = /^[a-z2-7]{26}$/;
export const MAX_SESSIONS = 20;

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

/** Closes the live owner sockets a session opened on one workflow (a call to that workflow's object). */
export type CloseOwnerSockets = (workflowId: string, session: string) => Promise<void>;

export class DashboardSessions {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    private readonly closeSockets: CloseOwnerSockets,
  ) {}

  /** A new session id valid until `expiresAt` (ms). */
  async start(expiresAt: number, now = Date.now()): Promise<string> {
    const existing = await this.storage.list<number>({ prefix: PREFIX });
    const live = [...existing].filter(([, expiry]) => expiry > now).sort((a, b) => a[1] - b[1]);
    const dropped = [...existing].filter(([, expiry]) => expiry <= now).map(([key]) => key);
    dropped.push(...live.slice(0, Math.max(0, live.length - (MAX_SESSIONS - 1))).map(([key]) => key));
    if (dropped.length > 0) await this.storage.delete(dropped);
    const id = randomBase32(26);
    await this.storage.put(`${PREFIX}${id}`, expiresAt);
    return id;
  }

  async active(id: string, now = Date.now()): Promise<boolean> {
    if (!isSessionId(id)) return false;
    const expiry = await this.storage.get<number>(`${PREFIX}${id}`);
    if (expiry === undefined) return false;
    if (expiry > now) return true;
    await this.storage.delete(`${PREFIX}${id}`);
    return false;
  }

  /** Ends the session, then closes the live owner pages it opened (a failure is logged: the session is over either way). */
  async end(id: string): Promise<void> {
    if (isSessionId(id)) await this.storage.delete(`${PREFIX}${id}`);
    const followed = this.sql<{ workflow_id: string }>`DELETE FROM session_follows WHERE session_id = ${id} RETURNING workflow_id`;
    await Promise.all(
      followed.map(async ({ workflow_id }) => {
        try {
          await this.closeSockets(workflow_id, id);
        } catch (error) {
          console.error("closing a signed-out live page failed", error);
        }
      }),
    );
  }

  /**
   * Whether `session` is open; if so, notes that it follows `workflowId` live. Past
   * OWNER_FOLLOWS pages per session it refuses: a socket that could not be closed at sign-out
   * must not exist.
   */
  async follow(session: string, workflowId: string): Promise<boolean> {
    if (!(await this.active(session))) return false;
    const known = this.sql`SELECT 1 FROM session_follows WHERE session_id = ${session} AND workflow_id = ${workflowId}`.length > 0;
    if (known) return true;
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM session_follows WHERE session_id = ${session}`[0]?.n ?? 0;
    if (count >= LIMITS.OWNER_FOLLOWS) return false;
    this.sql`INSERT INTO session_follows (session_id, workflow_id) VALUES (${session}, ${workflowId})`;
    return true;
  }
}
