/**
 * @module oauth/return-path
 * Where sign-in sends the owner back to: the OAuth consent page that sent them to /login.
 * Kept in a short-lived cookie rather than a `next=` parameter, so /login cannot be turned
 * into an open redirect: only a path of this deployment's authorization endpoint is honoured.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../http/types";

const RETURN_COOKIE = "waymark_return";
const RETURN_SECONDS = 600;
const MAX_RETURN_PATH = 4096;
export const AUTHORIZE_PATH = "/oauth/authorize";

/** Only this deployment's authorization endpoint, with its query: nothing else is a place to return to. */
export function isReturnPath(value: string): boolean {
  return value.length <= MAX_RETURN_PATH && value.startsWith(`${AUTHORIZE_PATH}?`) && !/[\s\\]/.test(value);
}

export function rememberReturnPath(c: Context<AppEnv>, path: string): void {
  if (!isReturnPath(path)) return;
  setCookie(c, RETURN_COOKIE, path, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: new URL(c.req.url).protocol === "https:",
    maxAge: RETURN_SECONDS,
  });
}

/** The remembered path (and forget it), or null. */
export function takeReturnPath(c: Context<AppEnv>): string | null {
  const value = getCookie(c, RETURN_COOKIE);
  if (value === undefined) return null;
  deleteCookie(c, RETURN_COOKIE, { path: "/" });
  return isReturnPath(value) ? value : null;
}
