/**
 * @module oauth/provider
 * OAuth 2.1 for remote MCP clients that cannot send a configured header (Claude.ai and
 * ChatGPT connectors, Claude Desktop's remote servers), with @cloudflare/workers-oauth-provider:
 * protected-resource metadata (RFC 9728) for /mcp, authorization-server metadata (RFC 8414),
 * dynamic client registration (RFC 7591) and Client ID Metadata Documents, authorization code with PKCE, refresh tokens and
 * token revocation. Grants and tokens live in the OAUTH_KV namespace; a grant's user is the
 * Waymark account and its props carry the scopes the owner approved on the consent page and
 * the credential the owner was signed in with.
 *
 * A grant lasts no longer than that credential: its access and refresh tokens never outlive the
 * credential's expiry, a refresh is refused (and the grant revoked) once the credential is
 * revoked, expired or removed from configuration, and every /mcp request checks it again
 * (`oauthPrincipal`, with the provider's own `unwrapToken`: /mcp is the app's route, never the
 * provider's).
 *
 * The library wants the resource's canonical URL at construction, so one provider is built
 * per origin this deployment answers (the guard has already checked the Host).
 */
import { waitUntil } from "cloudflare:workers";
import {
  GrantType,
  getOAuthApi,
  OAuthError,
  type OAuthHelpers,
  OAuthProvider,
  type OAuthProviderOptions,
  type TokenExchangeCallbackOptions,
  type TokenExchangeCallbackResult,
} from "@cloudflare/workers-oauth-provider";
import { commonScopes, isScope, normalizeScopes, type Scope } from "../domain/access-scopes";
import { type CredentialRef, parseCredentialRef } from "../domain/credentials";
import { credentialAuthority, type Principal } from "../http/bearer-tokens";

export const AUTHORIZE_ENDPOINT = "/oauth/authorize";
export const TOKEN_ENDPOINT = "/oauth/token";
export const REGISTER_ENDPOINT = "/oauth/register";
/** What an OAuth client may be granted: MCP needs no admin. */
export const OAUTH_SCOPES: readonly Scope[] = ["read", "write"];
const ACCESS_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
/** The shortest lifetime the library (Cloudflare KV) can give a token. */
const SHORTEST_TOKEN_SECONDS = 60;
/** Registrations are anonymous: one unused for this long expires (a client re-registers when told it is unknown). */
const CLIENT_REGISTRATION_SECONDS = 180 * 24 * 3600;

/** What a grant carries to /mcp. */
export interface GrantProps {
  account: string;
  scopes: Scope[];
  /** The credential the owner was signed in with when approving (src/domain/credentials.ts). */
  credential: CredentialRef;
}

/** A grant's props, or null for anything else (a grant approved before grants carried their credential included). */
export function grantProps(props: unknown): GrantProps | null {
  if (typeof props !== "object" || props === null) return null;
  const { account, scopes, credential } = props as { account?: unknown; scopes?: unknown; credential?: unknown };
  if (typeof account !== "string" || !Array.isArray(scopes) || !scopes.every(isScope) || !parseCredentialRef(credential)) return null;
  return { account, scopes: normalizeScopes(scopes), credential: credential as CredentialRef };
}

const credentialEnded = (description: string) => new OAuthError("invalid_grant", { description });

/**
 * At the code exchange and every refresh: the credential behind the grant must still hold, and
 * the tokens issued last no longer than it does. `invalid_grant` makes the library revoke the grant.
 */
async function tokensWithinCredential(options: TokenExchangeCallbackOptions<Env>): Promise<TokenExchangeCallbackResult> {
  const grant = grantProps(options.props);
  const authority = grant ? await credentialAuthority(options.env, grant.account, grant.credential) : null;
  if (!grant || !authority) {
    throw credentialEnded("the credential this app was approved with was revoked, expired or removed; approve the app again");
  }
  const remaining = authority.expiresAt === null ? Infinity : Math.floor((authority.expiresAt - Date.now()) / 1000);
  if (remaining < SHORTEST_TOKEN_SECONDS) throw credentialEnded("the credential this app was approved with expires within a minute");
  return {
    accessTokenTTL: Math.min(ACCESS_TOKEN_SECONDS, remaining),
    // The grant's own lifetime is set at the code exchange only (the library ignores it on refresh).
    ...(options.grantType === GrantType.AUTHORIZATION_CODE ? { refreshTokenTTL: Math.min(REFRESH_TOKEN_SECONDS, remaining) } : {}),
  };
}

function options(origin: string): OAuthProviderOptions<Env> {
  return {
    apiRoute: "/mcp",
    // Never reached: the app routes /mcp itself and validates access tokens with oauthPrincipal.
    apiHandler: { fetch: () => new Response("Not found", { status: 404 }) },
    // Every other route is served by the Worker's own router before the provider is asked.
    defaultHandler: { fetch: () => new Response("Not found", { status: 404 }) },
    authorizeEndpoint: AUTHORIZE_ENDPOINT,
    tokenEndpoint: TOKEN_ENDPOINT,
    clientRegistrationEndpoint: REGISTER_ENDPOINT,
    scopesSupported: [...OAUTH_SCOPES],
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    refreshTokenTTL: REFRESH_TOKEN_SECONDS,
    clientRegistrationTTL: CLIENT_REGISTRATION_SECONDS,
    tokenExchangeCallback: tokensWithinCredential,
    // Client ID Metadata Documents beside dynamic registration; the routes fetch each one first, within bounds (./client-metadata).
    clientIdMetadataDocumentEnabled: true,
    resourceMetadata: { resource: `${origin}/mcp`, authorization_servers: [origin], resource_name: "Waymark" },
  };
}

interface ForOrigin {
  provider: OAuthProvider<Env>;
  options: OAuthProviderOptions<Env>;
  /** The library's helpers, built once per origin and bindings. */
  helpers: { env: Env; api: OAuthHelpers } | null;
}

const providers = new Map<string, ForOrigin>();

function forOrigin(origin: string): ForOrigin {
  let entry = providers.get(origin);
  if (!entry) {
    const built = options(origin);
    entry = { provider: new OAuthProvider<Env>(built), options: built, helpers: null };
    // A deployment answers a handful of host names; the bound is only a backstop.
    if (providers.size > 16) providers.clear();
    providers.set(origin, entry);
  }
  return entry;
}

/** The provider serving `request`'s origin: metadata, registration and the token endpoint. */
export function oauthProvider(request: Request): OAuthProvider<Env> {
  return forOrigin(new URL(request.url).origin).provider;
}

/** The library's helpers (parse and complete authorization requests, list and revoke grants, unwrap tokens) for `request`'s origin. */
export function oauthApi(request: Request, env: Env): OAuthHelpers {
  const entry = forOrigin(new URL(request.url).origin);
  if (entry.helpers?.env !== env) entry.helpers = { env, api: getOAuthApi(entry.options, env) };
  return entry.helpers.api;
}

/**
 * What a grant records in the clear (the library's grant metadata, listed without decrypting):
 * the client's name, and the managed token it was approved with, so revoking that token revokes
 * its grants at once. A bootstrap token's reference is a hash of the token: it stays in the
 * encrypted props only, and such grants end when next used.
 */
export function grantMetadata(clientName: string | null, credential: CredentialRef): Record<string, string | null> {
  return { client_name: clientName, managed_token: parseCredentialRef(credential)?.kind === "managed" ? credential : null };
}

/** Revokes the account's grants approved with managed token `credential` (it was just revoked). */
export async function revokeGrantsOf(request: Request, env: Env, account: string, credential: CredentialRef): Promise<void> {
  const api = oauthApi(request, env);
  let cursor: string | undefined;
  do {
    const page = await api.listUserGrants(account, { limit: 1000, cursor });
    const approvedWith = page.items.filter((grant) => (grant.metadata as { managed_token?: unknown } | null)?.managed_token === credential);
    await Promise.all(approvedWith.map((grant) => api.revokeGrant(grant.id, account)));
    cursor = page.cursor;
  } while (cursor);
}

/** OAuth access tokens read `<user>:<grant>:<secret>`; bootstrap and managed tokens never do. */
export function looksLikeOAuthToken(token: string): boolean {
  return /^[^:\s]+:[^:\s]+:[^:\s]+$/.test(token);
}

/** Whether a token's audience (RFC 8707) is `resource`; tokens issued before audiences were recorded are this deployment's /mcp. */
function audienceIs(audience: string | string[] | undefined, resource: string): boolean {
  if (audience === undefined) return true;
  return Array.isArray(audience) ? audience.includes(resource) : audience === resource;
}

/**
 * Who an OAuth access token acts for on /mcp, or null: the provider unwraps it (its record, expiry
 * and props), its audience must be this origin's /mcp, and the credential the grant was approved
 * with must still hold; the token can do what both the grant and that credential allow. A grant
 * whose credential ended is revoked, so it leaves the owner's list of connected apps too.
 */
export async function oauthPrincipal(request: Request, env: Env, token: string, now = Date.now()): Promise<Principal | null> {
  if (!looksLikeOAuthToken(token)) return null;
  const origin = new URL(request.url).origin;
  const api = oauthApi(request, env);
  const summary = await api.unwrapToken<unknown>(token);
  if (!summary || !audienceIs(summary.audience, `${origin}/mcp`)) return null;
  const grant = grantProps(summary.grant.props);
  const authority = grant && grant.account === summary.userId ? await credentialAuthority(env, grant.account, grant.credential, now) : null;
  if (!grant || !authority) {
    waitUntil(
      api.revokeGrant(summary.grantId, summary.userId).catch((error: unknown) => console.error("revoking an orphaned grant failed", error)),
    );
    return null;
  }
  return {
    account: grant.account,
    scopes: commonScopes(grant.scopes, authority.scopes),
    credential: grant.credential,
    expiresAt: Math.min(authority.expiresAt ?? Infinity, summary.expiresAt * 1000),
    client: summary.grant.clientId,
  };
}
