/**
 * @module account/sessions
 * Dashboard sessions of one account, kept server-side in its AccountObject so that
 * signing out really ends a session: a replayed cookie names a session that no longer
 * exists. Stored with the object's key-value API (no schema migration), at most
 * MAX_SESSIONS per account (the oldest go first), expired ones dropped as they are met.
 */
import { randomBase32 } from "../crypto";

const PREFIX = "session:";
const SESSION_ID = /^[a-z2-7]{26}$/;
export const MAX_SESSIONS = 20;

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

export class DashboardSessions {
  constructor(private readonly storage: DurableObjectStorage) {}

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

  async end(id: string): Promise<void> {
    if (isSessionId(id)) await this.storage.delete(`${PREFIX}${id}`);
  }
}
