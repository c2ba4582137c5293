/**
 * @module http/bearer-tokens
 * Accounts and their credentials. Two kinds of bearer token:
 *   bootstrap: WAYMARK_TOKENS (a secret) lists "account:token" pairs separated by commas or
 *     newlines; WAYMARK_DEV_TOKEN (set only by `npm start`) maps to "dev". They hold every scope;
 *     with neither configured, and no managed token, every request is refused (fails closed).
 *   managed: `wmk_<account>_<id>_<secret>`, created from the dashboard or /api/tokens with
 *     chosen scopes (src/account/tokens.ts; its format src/domain/managed-token.ts), for an account that has a bootstrap token (removing
 *     an account from WAYMARK_TOKENS disables its managed tokens too). The account is read from the token, so checking one
 *     is one call to that account's object. A verified token is cached in the isolate for
 *     VERIFIED_TTL_MS: revocation takes effect at once in the isolate that revoked it and within
 *     that many seconds everywhere else, and a busy token costs one object call per isolate per
 *     interval instead of one per request. Its last use is recorded at most once a minute, after
 *     the reply (waitUntil).
 * A principal names the credential it came from (src/domain/credentials.ts), so what is derived
 * from it (sessions, OAuth grants, webhooks, live sockets) is checked against that credential
 * and ends with it.
 * Failed attempts (never successful ones) are rate-limited per client: per IPv4 address,
 * per IPv6 /64.
 */
import { waitUntil } from "cloudflare:workers";
import { sha256Hex } from "../crypto";
import { type Authority, SCOPES, type Scope } from "../domain/access-scopes";
import { authorityIn, bootstrapRef, bootstrapTable, type CredentialRef, isConfiguredAccount, managedRef } from "../domain/credentials";
import { parseManagedToken, TOUCH_INTERVAL_MS } from "../domain/managed-token";
import { clientKey } from "../domain/network";
import { accountStub } from "../stubs";
import { isDevelopment } from "./origins";

/** Who a credential acts for, what it may do, and which credential it is. */
export interface Principal extends Authority {
  account: string;
  scopes: readonly Scope[];
  /** The credential this authority comes from: a session or grant carries it, and ends with it. */
  credential: CredentialRef;
  /** When the credential stops working (ms since the epoch), or null. */
  expiresAt: number | null;
  /** An OAuth access token's client (the credential is the one its grant was approved with). */
  client?: string;
}

/** How long a verified managed token is trusted without asking its account object again. */
export const VERIFIED_TTL_MS = 10_000;
const VERIFIED_CACHE_ENTRIES = 1000;

interface Verified {
  hash: string;
  authority: Authority;
  until: number;
}

const verified = new Map<string, Verified>(); // "<account>:<token id>" → what its account object last said
const lastTouched = new Map<string, number>(); // token id → ms

function remember(key: string, entry: Verified): void {
  if (verified.size >= VERIFIED_CACHE_ENTRIES) verified.clear();
  verified.set(key, entry);
}

function cachedAuthority(key: string, now: number): Verified | null {
  const entry = verified.get(key);
  if (!entry) return null;
  if (entry.until > now) return entry;
  verified.delete(key);
  return null;
}

/**
 * SHA-256 of tokens that authenticated in this isolate: an agent sends the same token with every
 * call. Only the hash is memoized, never a verdict: what a token holds is still looked up (the
 * bootstrap table, a managed token's object through `verified`) on every request, so a revoked
 * token fails on its next request as before. Tokens that proved nothing are not kept (a hit
 * answers a token that already authenticates, so its speed tells a caller nothing new).
 */
const tokenHashes = new Map<string, string>();

async function tokenHash(token: string): Promise<string> {
  return tokenHashes.get(token) ?? (await sha256Hex(token));
}

function rememberHash(token: string, hash: string): void {
  if (tokenHashes.size >= VERIFIED_CACHE_ENTRIES) tokenHashes.clear();
  tokenHashes.set(token, hash);
}

/** Who a bearer token (bootstrap or managed) acts for, or null. Lookup is by hash, so timing reveals nothing about tokens. */
export async function authenticateToken(env: Env, token: string, now = Date.now()): Promise<Principal | null> {
  const hash = await tokenHash(token);
  const table = await bootstrapTable(env);
  const account = table.get(hash);
  if (account) {
    rememberHash(token, hash);
    return { account, scopes: SCOPES, credential: bootstrapRef(hash), expiresAt: null };
  }
  const ref = parseManagedToken(token);
  // Accounts exist through their bootstrap tokens, so a managed token of any other name is refused
  // before an object is addressed: a made-up token never creates storage for a made-up account.
  if (!ref || !isConfiguredAccount(table, ref.account)) return null;
  const key = `${ref.account}:${ref.id}`;
  let entry = cachedAuthority(key, now);
  if (!entry || entry.hash !== hash) {
    const grant = await accountStub(env, ref.account).verifyToken(ref.id, hash);
    if (!grant) return null;
    entry = { hash, authority: grant, until: Math.min(now + VERIFIED_TTL_MS, grant.expiresAt ?? Infinity) };
    remember(key, entry);
  }
  rememberHash(token, hash);
  recordUse(env, ref.account, ref.id, now);
  return { account: ref.account, ...entry.authority, credential: managedRef(ref.id) };
}

/**
 * What a credential holds now, or null once it is revoked, expired or no longer configured: a
 * session, an OAuth grant or a live page derived from it asks this before it acts.
 */
export async function credentialAuthority(env: Env, account: string, credential: unknown, now = Date.now()): Promise<Authority | null> {
  return authorityIn(await bootstrapTable(env), account, credential, async (id) => {
    const key = `${account}:${id}`;
    const cached = cachedAuthority(key, now);
    if (cached) return cached.authority;
    const active = await accountStub(env, account).activeToken(id);
    if (!active) return null;
    const authority = { scopes: active.scopes, expiresAt: active.expiresAt };
    remember(key, { hash: active.hash, authority, until: Math.min(now + VERIFIED_TTL_MS, active.expiresAt ?? Infinity) });
    return authority;
  });
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
export function forgetVerifiedToken(account: string, id: string): void {
  verified.delete(`${account}:${id}`);
}

/**
 * The client a request is counted against: an IPv4 address or an IPv6 /64, "local", or null for a
 * request from inside the deployment. On Cloudflare the edge sets CF-Connecting-IP (a client's own
 * value is replaced), so it is trusted there. `npm start` (`wrangler dev`, on loopback) sets it from
 * the socket only when a client sent none, and passes a client's own through: there a loopback
 * address is believed (any local caller could bind it for real), anything else is the client's
 * word and counts as the one client "local".
 */
export function clientOf(env: Pick<Env, "WAYMARK_DEV_TOKEN">, request: Request): string | null {
  const ip = request.headers.get("CF-Connecting-IP");
  if (ip === null) return null;
  const key = clientKey(ip);
  if (!isDevelopment(env)) return key;
  return key !== null && (key.startsWith("127.") || ip.trim() === "::1") ? key : "local";
}

/**
 * Charges one failed authentication attempt to the client (AUTH_LIMITER in wrangler.toml)
 * and says whether it is still within its budget. Successful attempts are never charged.
 * A request without a client came from inside the deployment (tests, service bindings) and is
 * not limited, rather than putting every such caller under one shared key that one of them could exhaust.
 */
export async function failedAttemptWithinBudget(env: Env, request: Request): Promise<boolean> {
  const key = clientOf(env, request);
  if (!env.AUTH_LIMITER || key === null) return true;
  return (await env.AUTH_LIMITER.limit({ key })).success;
}

/** Why a request's credential proved nothing: 401, or 429 once its client has failed too often. */
export interface FailedAuthentication {
  status: 401 | 429;
  message: string;
}

/** The answer to a request whose bearer token (if it `presented` one) proved nothing; a presented one costs an attempt. */
export async function failedAuthentication(env: Env, request: Request, presented: boolean): Promise<FailedAuthentication> {
  // Only a presented token is a guess; a request without one (an expired page polling) costs nothing.
  if (presented && !(await failedAttemptWithinBudget(env, request))) {
    return { status: 429, message: "UNAUTHORIZED: too many failed authentication attempts; wait a minute" };
  }
  return { status: 401, message: presented ? "UNAUTHORIZED: invalid bearer token" : "UNAUTHORIZED: send Authorization: Bearer <token>" };
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
