/**
 * Bearer tokens. WAYMARK_TOKENS (a secret) lists "account:token" pairs separated by
 * commas or newlines; WAYMARK_DEV_TOKEN (set only by `npm start`) maps to "dev".
 * With neither configured every request is refused: the endpoint fails closed.
 */
export const DEV_ACCOUNT = "dev";
const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Shorter tokens are ignored: a bearer token must not be guessable over HTTP. */
export const MIN_TOKEN_LENGTH = 16;

type TokenTable = Map<string, string>; // sha-256(token) hex → account

let cached: { source: string; table: Promise<TokenTable> } | null = null;

async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

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

/** Whether an account still has a token: a dashboard session ends when its account is removed. */
export async function accountExists(env: Env, account: string): Promise<boolean> {
  for (const configured of (await tokenTable(env)).values()) if (configured === account) return true;
  return false;
}

/**
 * Spends one of the caller's authentication attempts (per client IP, AUTH_LIMITER in
 * wrangler.toml: failed bearer tokens and every login). False once the budget is spent.
 */
export async function authAttemptAllowed(env: Env, request: Request): Promise<boolean> {
  if (!env.AUTH_LIMITER) return true;
  const key = request.headers.get("CF-Connecting-IP") ?? "local";
  return (await env.AUTH_LIMITER.limit({ key })).success;
}

export type Authentication = { ok: true; account: string } | { ok: false; status: 401 | 429; message: string };

/** The account of the request's bearer token; a failure costs an attempt, and too many answer 429. */
export async function authenticateBearer(env: Env, request: Request): Promise<Authentication> {
  const token = bearerToken(request);
  const account = token ? await accountForToken(env, token) : null;
  if (account) return { ok: true, account };
  if (!(await authAttemptAllowed(env, request))) {
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
