/**
 * @module http/session
 * Browser sessions of the dashboard. The cookie (hono/cookie, signed with a key derived
 * from the share secret) names the account, a session id kept server-side in the
 * account's object (src/account/sessions.ts) and the credential it was opened with: the
 * fingerprint of the account's bootstrap tokens (all scopes) or the managed token's id (the
 * session has that token's scopes, read when the session is checked). A session ends at its expiry, at sign-out
 * (the id is deleted, so a replayed cookie is refused), when the account's bootstrap tokens
 * change, and when the managed token it was opened with is revoked or expires.
 * HttpOnly, SameSite=Strict; over https the name carries the `__Host-` prefix (Secure,
 * Path=/, no Domain: a sibling subdomain cannot plant one), over http://localhost it is
 * a plain cookie, which browsers would otherwise drop.
 */
import type { Context } from "hono";
import { deleteCookie, generateSignedCookie, getSignedCookie } from "hono/cookie";
import { hex, hmacSha256 } from "../crypto";
import { SCOPES } from "../domain/access-scopes";
import { shareSecret } from "../domain/share-token";
import { accountStub } from "../stubs";
import { credentialsFingerprint, managedTokenScopes, type Principal } from "./bearer-tokens";
import type { AppEnv, Session } from "./types";

export const SESSION_COOKIE = "waymark_session";
export const SESSION_SECONDS = 12 * 3600;
const VALUE = /^([a-z0-9][a-z0-9_-]{0,63})\.([a-z2-7]{26})\.([0-9a-f]{32}|[a-z2-7]{12})$/;
const FINGERPRINT = /^[0-9a-f]{32}$/;

type Ctx = Context<AppEnv>;

async function cookieKey(env: Env): Promise<string> {
  return hex(await hmacSha256(await shareSecret(env), "dashboard-session-cookie"));
}

const overHttps = (url: string) => new URL(url).protocol === "https:";
const prefixFor = (url: string) => (overHttps(url) ? "host" : undefined);

/** Opens a session for the principal a token proved (an account name: a bootstrap token's) and returns its Set-Cookie header value. */
export async function sessionCookie(env: Env, requestUrl: string, proved: Principal | string, now = Date.now()): Promise<string> {
  const principal: Principal = typeof proved === "string" ? { account: proved, scopes: SCOPES, tokenId: null } : proved;
  const { account } = principal;
  const credential = principal.tokenId ?? (await credentialsFingerprint(env, account));
  if (credential === null) throw new Error(`account ${account} has no token`);
  const id = await accountStub(env, account).startSession(now + SESSION_SECONDS * 1000);
  return generateSignedCookie(SESSION_COOKIE, `${account}.${id}.${credential}`, await cookieKey(env), {
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
  const [account, id, credential] = [match[1], match[2], match[3]];
  const scopes = FINGERPRINT.test(credential)
    ? (await credentialsFingerprint(c.env, account)) === credential
      ? SCOPES
      : null
    : await managedTokenScopes(c.env, account, credential);
  if (scopes === null) return null;
  return (await accountStub(c.env, account).sessionActive(id)) ? { account, id, scopes } : null;
}

/** Sign-out: the session ends server-side and the browser forgets the cookie. */
export async function endSession(c: Ctx, session: Session | null): Promise<void> {
  if (session) await accountStub(c.env, session.account).endSession(session.id);
  deleteCookie(c, SESSION_COOKIE, { prefix: prefixFor(c.req.url), path: "/", httpOnly: true, sameSite: "Strict" });
}
