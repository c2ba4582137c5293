/**
 * @module http/bearer-tokens
 * Accounts and their credentials. Two kinds of bearer token:
 *   bootstrap: WAYMARK_TOKENS (a secret) lists "account:token" pairs separated by commas or
 *     newlines; WAYMARK_DEV_TOKEN (set only by `npm start`) maps to "dev". They hold every scope;
 *     with neither configured, and no managed token, every request is refused (fails closed).
 *   managed: `wmk_<account>_<id>_<secret>`, created from the dashboard or /api/tokens with
 *     chosen scopes (src/account/tokens.ts), for an account that has a bootstrap token (removing
 *     an account from WAYMARK_TOKENS disables its managed tokens too). The account is read from the token, so checking one
 *     is one call to that account's object. A verified token is cached in the isolate for
 *     VERIFIED_TTL_MS: revocation takes effect at once in the isolate that revoked it and within
 *     that many seconds everywhere else, and a busy token costs one object call per isolate per
 *     interval instead of one per request. Its last use is recorded at most once a minute, after
 *     the reply (waitUntil).
 * Failed attempts (never successful ones) are rate-limited per client: per IPv4 address,
 * per IPv6 /64.
 */
import { waitUntil } from "cloudflare:workers";
import { parseManagedToken, TOUCH_INTERVAL_MS } from "../account/tokens";
import { sha256Hex } from "../crypto";
import { SCOPES, type Scope } from "../domain/access-scopes";
import { clientKey } from "../domain/network";
import { accountStub } from "../stubs";

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

function isConfiguredAccount(table: TokenTable, account: string): boolean {
  for (const owner of table.values()) if (owner === account) return true;
  return false;
}

/** Who a credential acts for and what it may do. */
export interface Principal {
  account: string;
  scopes: readonly Scope[];
  /** The managed token's id; null for bootstrap tokens and OAuth grants. */
  tokenId: string | null;
}

/** How long a verified managed token is trusted without asking its account object again. */
export const VERIFIED_TTL_MS = 10_000;
const VERIFIED_CACHE_ENTRIES = 1000;

const verified = new Map<string, { principal: Principal; until: number }>(); // sha-256(token) → grant
const lastTouched = new Map<string, number>(); // token id → ms

/** Who a bearer token (bootstrap or managed) acts for, or null. Lookup is by hash, so timing reveals nothing about tokens. */
export async function authenticateToken(env: Env, token: string, now = Date.now()): Promise<Principal | null> {
  const hash = await sha256Hex(token);
  const table = await tokenTable(env);
  const account = table.get(hash);
  if (account) return { account, scopes: SCOPES, tokenId: null };
  const ref = parseManagedToken(token);
  // Accounts exist through their bootstrap tokens, so a managed token of any other name is refused
  // before an object is addressed: a made-up token never creates storage for a made-up account.
  if (!ref || !isConfiguredAccount(table, ref.account)) return null;
  let entry = verified.get(hash);
  if (!entry || entry.until <= now) {
    verified.delete(hash);
    const grant = await accountStub(env, ref.account).verifyToken(ref.id, hash);
    if (!grant) return null;
    if (verified.size >= VERIFIED_CACHE_ENTRIES) verified.clear();
    entry = {
      principal: { account: ref.account, scopes: grant.scopes, tokenId: ref.id },
      until: Math.min(now + VERIFIED_TTL_MS, grant.expiresAt ?? Infinity),
    };
    verified.set(hash, entry);
  }
  recordUse(env, ref.account, ref.id, now);
  return entry.principal;
}

/** last_used_at, at most once a minute per token and isolate, after the reply. */
function recordUse(env: Env, account: string, id: string, now: number): void {
  if (now - (lastTouched.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
  if (lastTouched.size >= VERIFIED_CACHE_ENTRIES) lastTouched.clear();
  lastTouched.set(id, now);
  waitUntil(
    accountStub(env, account)
      .touchToken(id)
      .catch((error: unknown) => console.error("recording a token's use failed", error)),
  );
}

/** Drops a revoked token from this isolate's cache at once (other isolates drop it within VERIFIED_TTL_MS). */
export function forgetVerifiedToken(id: string): void {
  for (const [hash, entry] of verified) if (entry.principal.tokenId === id) verified.delete(hash);
}

/** The scopes of managed token `id` while it is active, else null: a dashboard session opened with it goes on with them. */
export async function managedTokenScopes(env: Env, account: string, id: string, now = Date.now()): Promise<readonly Scope[] | null> {
  for (const entry of verified.values()) {
    if (entry.principal.tokenId === id && entry.principal.account === account && entry.until > now) return entry.principal.scopes;
  }
  return accountStub(env, account).activeTokenScopes(id);
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

export type Authentication = ({ ok: true } & Principal) | { ok: false; status: 401 | 429; message: string };

/** The principal of the request's bearer token; a failure costs an attempt, and too many failures answer 429. */
export async function authenticateBearer(env: Env, request: Request): Promise<Authentication> {
  const token = bearerToken(request);
  const principal = token ? await authenticateToken(env, token) : null;
  if (principal) return { ok: true, ...principal };
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

/** Where /mcp's protected-resource metadata (RFC 9728) lives: OAuth clients start from this challenge. */
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp";

export function mcpUnauthorizedHeaders(requestUrl: string): Record<string, string> {
  const metadata = `${new URL(requestUrl).origin}${RESOURCE_METADATA_PATH}`;
  return { "WWW-Authenticate": `Bearer realm="waymark", error="invalid_token", resource_metadata="${metadata}"` };
}

export function bearerToken(request: Request): string | null {
  const header = request.headers.get("Authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}
