/**
 * @module domain/credentials
 * Which credential something was derived from. A dashboard session, an OAuth grant and a
 * webhook each carry the reference of the credential that created it, and end when that
 * credential is revoked, removed from configuration or expires:
 *
 *   b:<sha-256 of the token, hex>   a bootstrap token (WAYMARK_TOKENS, or the dev token of `npm start`)
 *   m:<token id>                    a managed token (src/account/tokens.ts; its format: ./managed-token.ts)
 *
 * The bootstrap table is read from configuration, so both the Worker and an account's object
 * (which has the same bindings) can tell whether a bootstrap credential is still configured:
 * pure parsing, here so that the Worker's middleware imports none of the account object's code.
 */
import { sha256Hex } from "../crypto";
import { type Authority, SCOPES } from "./access-scopes";
import type { FeedbackAuthor } from "./view";

export const DEV_ACCOUNT = "dev";
const ACCOUNT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Shorter tokens are ignored: a bearer token must not be guessable over HTTP. */
export const MIN_TOKEN_LENGTH = 16;

/** `b:<64 hex>` or `m:<managed token id>`. */
export type CredentialRef = string;

const BOOTSTRAP_REF = /^b:([0-9a-f]{64})$/;
const MANAGED_REF = /^m:([a-z2-7]{12})$/;

export const bootstrapRef = (tokenHash: string): CredentialRef => `b:${tokenHash}`;
export const managedRef = (tokenId: string): CredentialRef => `m:${tokenId}`;

export type ParsedCredential = { kind: "bootstrap"; hash: string } | { kind: "managed"; id: string };

export function parseCredentialRef(ref: unknown): ParsedCredential | null {
  if (typeof ref !== "string") return null;
  const bootstrap = BOOTSTRAP_REF.exec(ref);
  if (bootstrap?.[1]) return { kind: "bootstrap", hash: bootstrap[1] };
  const managed = MANAGED_REF.exec(ref);
  return managed?.[1] ? { kind: "managed", id: managed[1] } : null;
}

/**
 * Who acted, as a record names them: a managed token by its id, a bootstrap token by its kind only
 * (its digest, shown on shared pages, would let anyone test guesses of a weak one), how it was
 * presented (`via`), and an OAuth client by its id.
 */
export function authorOf(principal: { credential: CredentialRef; client?: string }, via: FeedbackAuthor["via"]): FeedbackAuthor {
  const parsed = parseCredentialRef(principal.credential);
  const who =
    parsed?.kind === "managed"
      ? { kind: "managed_token" as const, credential: parsed.id }
      : { kind: "bootstrap_token" as const, credential: null };
  return { ...who, via, ...(via === "oauth" && principal.client !== undefined ? { client: principal.client } : {}) };
}

/** A credential as a page names it: a managed token by its id, a bootstrap token by its kind only (as `authorOf`). */
export function credentialLabel(ref: CredentialRef | null): string {
  if (ref === null) return "not recorded";
  const parsed = parseCredentialRef(ref);
  return parsed?.kind === "managed" ? `token ${parsed.id}` : "a bootstrap token";
}

/** sha-256(token) hex → account, for every configured bootstrap token. */
export type BootstrapTable = Map<string, string>;

let cached: { source: string; table: Promise<BootstrapTable> } | null = null;

async function buildTable(tokens: string, devToken: string): Promise<BootstrapTable> {
  const table: BootstrapTable = new Map();
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

/** The configured bootstrap tokens, parsed once per configuration and isolate. */
export function bootstrapTable(env: Pick<Env, "WAYMARK_TOKENS" | "WAYMARK_DEV_TOKEN">): Promise<BootstrapTable> {
  const tokens = env.WAYMARK_TOKENS ?? "";
  const devToken = env.WAYMARK_DEV_TOKEN ?? "";
  const source = `${tokens}\u0000${devToken}`;
  if (!cached || cached.source !== source) cached = { source, table: buildTable(tokens, devToken) };
  return cached.table;
}

/** Whether `account` has a bootstrap token: accounts exist through them (and their managed tokens with them). */
export function isConfiguredAccount(table: BootstrapTable, account: string): boolean {
  for (const owner of table.values()) if (owner === account) return true;
  return false;
}

/**
 * What `credential` holds for `account` under the configured `table`, or null once it is revoked,
 * expired or no longer configured. `managed` looks a managed token up: the account's object reads
 * its own table, the Worker asks that object (through its cache).
 */
export function authorityIn<Managed>(
  table: BootstrapTable,
  account: string,
  credential: unknown,
  managed: (id: string) => Managed,
): Authority | Managed | null {
  const parsed = parseCredentialRef(credential);
  if (!parsed) return null;
  if (parsed.kind === "bootstrap") return table.get(parsed.hash) === account ? { scopes: SCOPES, expiresAt: null } : null;
  return isConfiguredAccount(table, account) ? managed(parsed.id) : null;
}
