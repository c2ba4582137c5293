/**
 * @module pages/session
 * Browser sessions of the dashboard. The cookie (hono/cookie, signed with a key derived
 * from the share secret) names the account, a session id kept server-side in the
 * account's object (src/account/sessions.ts) and the fingerprint of the account's tokens
 * at sign-in. A session ends at its expiry, at sign-out (the id is deleted, so a replayed
 * cookie is refused), and when the account's tokens change or are removed.
 * HttpOnly, SameSite=Strict; over https the name carries the `__Host-` prefix (Secure,
 * Path=/, no Domain: a sibling subdomain cannot plant one), over http://localhost it is
 * a plain cookie, which browsers would otherwise drop.
 */
import type { Context } from "hono";
import { deleteCookie, generateSignedCookie, getSignedCookie } from "hono/cookie";
import { credentialsFingerprint } from "../auth";
import { hex, hmacSha256 } from "../crypto";
import type { AppEnv } from "../http/types";
import { shareSecret } from "../workflow/share";

export const SESSION_COOKIE = "waymark_session";
export const SESSION_SECONDS = 12 * 3600;
const VALUE = /^([a-z0-9][a-z0-9_-]{0,63})\.([a-z2-7]{26})\.([0-9a-f]{32})$/;

type Ctx = Context<AppEnv>;

export interface Session {
  account: string;
  id: string;
}

const accountObject = (env: Env, account: string) => env.ACCOUNT.get(env.ACCOUNT.idFromName(account));

async function cookieKey(env: Env): Promise<string> {
  return hex(await hmacSha256(await shareSecret(env), "dashboard-session-cookie"));
}

const overHttps = (url: string) => new URL(url).protocol === "https:";
const prefixFor = (url: string) => (overHttps(url) ? "host" : undefined);

/** Opens a session for `account` and returns its Set-Cookie header value. */
export async function sessionCookie(env: Env, requestUrl: string, account: string, now = Date.now()): Promise<string> {
  const fingerprint = await credentialsFingerprint(env, account);
  if (fingerprint === null) throw new Error(`account ${account} has no token`);
  const id = await accountObject(env, account).startSession(now + SESSION_SECONDS * 1000);
  return generateSignedCookie(SESSION_COOKIE, `${account}.${id}.${fingerprint}`, await cookieKey(env), {
    prefix: prefixFor(requestUrl),
    path: "/",
    httpOnly: true,
    sameSite: "Strict",
    maxAge: SESSION_SECONDS,
  });
}

/** The request's live session, or null (no cookie, bad signature, tokens changed, signed out or expired). */
export async function currentSession(c: Ctx): Promise<Session | null> {
  const value = await getSignedCookie(c, await cookieKey(c.env), SESSION_COOKIE, prefixFor(c.req.url));
  const match = typeof value === "string" ? VALUE.exec(value) : null;
  if (!match?.[1] || !match[2] || !match[3]) return null;
  const [account, id, fingerprint] = [match[1], match[2], match[3]];
  if ((await credentialsFingerprint(c.env, account)) !== fingerprint) return null;
  return (await accountObject(c.env, account).sessionActive(id)) ? { account, id } : null;
}

/** Sign-out: the session ends server-side and the browser forgets the cookie. */
export async function endSession(c: Ctx, session: Session | null): Promise<void> {
  if (session) await accountObject(c.env, session.account).endSession(session.id);
  deleteCookie(c, SESSION_COOKIE, { prefix: prefixFor(c.req.url), path: "/", httpOnly: true, sameSite: "Strict" });
}
