/**
 * Bearer tokens. WAYMARK_TOKENS (a secret) lists "account:token" pairs separated by
 * commas or newlines; WAYMARK_DEV_TOKEN (set only by `npm start`) maps to "dev".
 * With neither configured every request is refused: the endpoint fails closed.
 */
export const DEV_ACCOUNT = "dev";
const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

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
    if (colon <= 0 || !ACCOUNT_NAME.test(account) || token.length < 8) continue;
    table.set(await sha256Hex(token), account);
  }
  if (devToken.length >= 8) table.set(await sha256Hex(devToken), DEV_ACCOUNT);
  return table;
}

/** The account a bearer token belongs to, or null. Lookup is by hash, so timing reveals nothing about tokens. */
export async function accountForToken(env: Env, token: string): Promise<string | null> {
  const tokens = env.WAYMARK_TOKENS ?? "";
  const devToken = env.WAYMARK_DEV_TOKEN ?? "";
  const source = `${tokens}\u0000${devToken}`;
  if (!cached || cached.source !== source) cached = { source, table: buildTable(tokens, devToken) };
  const table = await cached.table;
  if (table.size === 0) return null;
  return table.get(await sha256Hex(token)) ?? null;
}

export function bearerToken(request: Request): string | null {
  const header = request.headers.get("Authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}
