/**
 * @module http/session
 * Browser sessions of the dashboard. The cookie (hono/cookie, signed with a key derived from the
 * share secret) names the account and a session id kept server-side in the account's object
 * (src/account/sessions.ts), with the credential it was opened with. A session has that
 * credential's scopes and ends no later than it: at its own expiry (12 hours, or the credential's
 * expiry if sooner), at sign-out (the id is deleted, so a replayed cookie is refused), and when
 * the credential is revoked, expires or is removed from configuration; the live pages it opened
 * close then too.
 * HttpOnly, SameSite=Strict; over https the name carries the `__Host-` prefix (Secure,
 * Path=/, no Domain: a sibling subdomain cannot plant one), over http://localhost it is
 * a plain cookie, which browsers would otherwise drop.
 */
import type { Context } from "hono";
import { deleteCookie, generateSignedCookie, getSignedCookie } from "hono/cookie";
import { hex, hmacSha256 } from "../crypto";
import { shareSecret } from "../domain/share-token";
import { accountStub } from "../stubs";
import type { Principal } from "./bearer-tokens";
import type { AppEnv, Session } from "./types";

export const SESSION_COOKIE = "waymark_session";
export const SESSION_SECONDS = 12 * 3600;
const VALUE = /^([a-z0-9][a-z0-9_-]{0,63})\.([a-z2-7]{26})$/;

type Ctx = Context<AppEnv>;

async function cookieKey(env: Env): Promise<string> {
  return hex(await hmacSha256(await shareSecret(env), "dashboard-session-cookie"));
}

const overHttps = (url: string) => new URL(url).protocol === "https:";
const prefixFor = (url: string) => (overHttps(url) ? "host" : undefined);

/**
 * Opens a session for the principal a token proved and returns its Set-Cookie header value, or
 * null when the credential stopped holding in the meantime.
 */
export async function sessionCookie(env: Env, requestUrl: string, principal: Principal, now = Date.now()): Promise<string | null> {
  const { account } = principal;
  const started = await accountStub(env, account).startSession(account, principal.credential, SESSION_SECONDS * 1000);
  if (!started) return null;
  return generateSignedCookie(SESSION_COOKIE, `${account}.${started.id}`, await cookieKey(env), {
    prefix: prefixFor(requestUrl),
    path: "/",
    httpOnly: true,
    sameSite: "Strict",
    maxAge: Math.min(SESSION_SECONDS, Math.max(1, Math.floor((started.expiresAt - now) / 1000))),
  });
}

/** The request's live session, or null (no cookie, bad signature, signed out, expired, or its credential ended). */
export async function currentSession(c: Ctx): Promise<Session | null> {
  const value = await getSignedCookie(c, await cookieKey(c.env), SESSION_COOKIE, prefixFor(c.req.url));
  const match = typeof value === "string" ? VALUE.exec(value) : null;
  if (!match?.[1] || !match[2]) return null;
  const [account, id] = [match[1], match[2]];
  const authority = await accountStub(c.env, account).sessionAuthority(account, id);
  return authority ? { account, id, ...authority } : null;
}

/** Sign-out: the session ends server-side and the browser forgets the cookie. */
export async function endSession(c: Ctx, session: Session | null): Promise<void> {
  if (session) await accountStub(c.env, session.account).endSession(session.id);
  deleteCookie(c, SESSION_COOKIE, { prefix: prefixFor(c.req.url), path: "/", httpOnly: true, sameSite: "Strict" });
}
