/**
 * @module auth
 * Accounts and their credentials: bearer tokens. WAYMARK_TOKENS (a secret) lists "account:token" pairs separated by
 * commas or newlines; WAYMARK_DEV_TOKEN (set only by `npm start`) maps to "dev".
 * With neither configured every request is refused: the endpoint fails closed.
 * Failed attempts (never successful ones) are rate-limited per client: per IPv4 address,
 * per IPv6 /64.
 */
import { sha256Hex } from "./crypto";
import { clientKey } from "./domain/network";

export const DEV_ACCOUNT = "dev";
const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Shorter tokens are ignored: a bearer token must not be guessable over HTTP. */
export const MIN_TOKEN_LENGTH = 16;

type TokenTable = Map<string, string>; // sha-256(token) hex → account

let cached: { source: string; table: Promise<TokenTable> } | null = null;

async function buildTable(tokens: string, devToken: string): Promise<TokenTable> {
  const table: TokenTable = new Map();
  for (const entry of tokens.split(/[,\n]/)) {
    const trimmed = entry.trim();
    if (!trimmed) continue;
    const colon = trimmed.indexOf(":");
    const account = trimmed.slice(0, colon).trim();
    const token = trimmed.slice(colon + 1).trim();
    // A malformed entry is skipped rather than granting anything.
    if (colon <= 0 || !ACCOUNT_NAME.test(account) || token.length < MIN_TOKEN_LENGTH) continue;
    table.set(await sha256Hex(token), account);
  }
  if (devToken.length >= MIN_TOKEN_LENGTH) table.set(await sha256Hex(devToken), DEV_ACCOUNT);
  return table;
}

function tokenTable(env: Env): Promise<TokenTable> {
  const tokens = env.WAYMARK_TOKENS ?? "";
  const devToken = env.WAYMARK_DEV_TOKEN ?? "";
  const source = `${tokens}\u0000${devToken}`;
  if (!cached || cached.source !== source) cached = { source, table: buildTable(tokens, devToken) };
  return cached.table;
}

/** The account a bearer token belongs to, or null. Lookup is by hash, so timing reveals nothing about tokens. */
export async function accountForToken(env: Env, token: string): Promise<string | null> {
  const table = await tokenTable(env);
  if (table.size === 0) return null;
  return table.get(await sha256Hex(token)) ?? null;
}

/**
 * A fingerprint of the account's current tokens, or null when it has none. A dashboard
 * session carries the fingerprint it was opened under, so adding, rotating or removing
 * any of the account's tokens ends its sessions.
 */
export async function credentialsFingerprint(env: Env, account: string): Promise<string | null> {
  const hashes = [...(await tokenTable(env)).entries()].filter(([, owner]) => owner === account).map(([hash]) => hash);
  if (hashes.length === 0) return null;
  return (await sha256Hex(`credentials\n${account}\n${hashes.sort().join("\n")}`)).slice(0, 32);
}

/**
 * Charges one failed authentication attempt to the client (AUTH_LIMITER in wrangler.toml)
 * and says whether it is still within its budget. Successful attempts are never charged.
 * Cloudflare's edge and `wrangler dev` always set CF-Connecting-IP; a request without it
 * came from inside the deployment (tests, service bindings) and is not limited, rather
 * than putting every such caller under one shared key that one of them could exhaust.
 */
export async function failedAttemptWithinBudget(env: Env, request: Request): Promise<boolean> {
  const ip = request.headers.get("CF-Connecting-IP");
  if (!env.AUTH_LIMITER || ip === null) return true;
  const key = clientKey(ip);
  if (key === null) return true;
  return (await env.AUTH_LIMITER.limit({ key })).success;
}

export type Authentication = { ok: true; account: string } | { ok: false; status: 401 | 429; message: string };

/** The account of the request's bearer token; a failure costs an attempt, and too many failures answer 429. */
export async function authenticateBearer(env: Env, request: Request): Promise<Authentication> {
  const token = bearerToken(request);
  const account = token ? await accountForToken(env, token) : null;
  if (account) return { ok: true, account };
  // Only a presented token is a guess; a request without one (an expired page polling) costs nothing.
  if (token !== null && !(await failedAttemptWithinBudget(env, request))) {
    return { ok: false, status: 429, message: "UNAUTHORIZED: too many failed authentication attempts; wait a minute" };
  }
  return {
    ok: false,
    status: 401,
    message: token ? "UNAUTHORIZED: invalid bearer token" : "UNAUTHORIZED: send Authorization: Bearer <token>",
  };
}

export const UNAUTHORIZED_HEADERS = { "WWW-Authenticate": 'Bearer realm="waymark", error="invalid_token"' };

export function bearerToken(request: Request): string | null {
  const header = request.headers.get("Authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}
