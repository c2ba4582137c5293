import { accountExists } from "../auth";
import { hmacBase64Url, shareSecret } from "../workflow/share";

/**
 * Browser sessions of the dashboard: a cookie "v1.<account>.<expiry ms>.<HMAC>", signed
 * with the share secret (src/workflow/share.ts). HttpOnly, SameSite=Strict, and Secure
 * except on http://localhost / 127.0.0.1 where browsers would drop a Secure cookie.
 * Nothing is stored server-side; a session ends at its expiry, at logout (cookie cleared)
 * or for everyone when the secret changes.
 */
export const SESSION_COOKIE = "waymark_session";
export const SESSION_SECONDS = 12 * 3600;

function isLocalHttp(url: URL): boolean {
  return url.protocol === "http:" && (url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]");
}

function cookieAttributes(url: URL, maxAge: number): string {
  return `Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${isLocalHttp(url) ? "" : "; Secure"}`;
}

/** Constant-time comparison of two MACs (same length base64url strings). */
function equalMacs(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export async function sessionCookie(env: Env, requestUrl: string, account: string, now = Date.now()): Promise<string> {
  const expiry = now + SESSION_SECONDS * 1000;
  const mac = await hmacBase64Url(await shareSecret(env), `session\n${account}\n${expiry}`);
  return `${SESSION_COOKIE}=v1.${account}.${expiry}.${mac}; ${cookieAttributes(new URL(requestUrl), SESSION_SECONDS)}`;
}

export function clearedSessionCookie(requestUrl: string): string {
  return `${SESSION_COOKIE}=; ${cookieAttributes(new URL(requestUrl), 0)}`;
}

/** The account of a valid, unexpired session cookie, or null. */
export async function sessionAccount(env: Env, request: Request, now = Date.now()): Promise<string | null> {
  const cookies = request.headers.get("Cookie") ?? "";
  const value = cookies
    .split(";")
    .map((c) => c.trim())
    .find((c) => c.startsWith(`${SESSION_COOKIE}=`))
    ?.slice(SESSION_COOKIE.length + 1);
  const match = value ? /^v1\.([a-z0-9][a-z0-9_-]{0,63})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!match?.[1] || !match[2] || !match[3]) return null;
  const [account, expiry, mac] = [match[1], match[2], match[3]];
  if (Number(expiry) <= now) return null;
  const expected = await hmacBase64Url(await shareSecret(env), `session\n${account}\n${expiry}`);
  if (!equalMacs(mac, expected)) return null;
  // A session ends with its account: removing an account's tokens logs it out everywhere.
  return (await accountExists(env, account)) ? account : null;
}
