/**
 * @module oauth/provider
 * OAuth 2.1 for remote MCP clients that cannot send a configured header (Claude.ai and
 * ChatGPT connectors, Claude Desktop's remote servers), with @cloudflare/workers-oauth-provider:
 * protected-resource metadata (RFC 9728) for /mcp, authorization-server metadata (RFC 8414),
 * dynamic client registration (RFC 7591) and Client ID Metadata Documents, authorization code with PKCE, refresh tokens and
 * token revocation. Grants and tokens live in the OAUTH_KV namespace; a grant's user is the
 * Waymark account and its props carry the scopes the owner approved on the consent page.
 *
 * The library wants the resource's canonical URL at construction, so one provider is built
 * per origin this deployment answers (the guard has already checked the Host).
 */
import { getOAuthApi, type OAuthHelpers, OAuthProvider, type OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";
import { isScope, normalizeScopes, type Scope } from "../domain/access-scopes";
import type { Principal } from "../http/bearer-tokens";
import { handleMcp } from "../mcp/endpoint";
import { guardClientMetadataFetch } from "./client-metadata";

export const AUTHORIZE_ENDPOINT = "/oauth/authorize";
export const TOKEN_ENDPOINT = "/oauth/token";
export const REGISTER_ENDPOINT = "/oauth/register";
/** What an OAuth client may be granted: MCP needs no admin. */
export const OAUTH_SCOPES: readonly Scope[] = ["read", "write"];
const ACCESS_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
/** Registrations are anonymous: one unused for this long expires (a client re-registers when told it is unknown). */
const CLIENT_REGISTRATION_SECONDS = 180 * 24 * 3600;

/** What a grant carries to /mcp. */
export interface GrantProps {
  account: string;
  scopes: Scope[];
}

export function grantPrincipal(props: unknown): Principal | null {
  if (typeof props !== "object" || props === null) return null;
  const { account, scopes } = props as { account?: unknown; scopes?: unknown };
  if (typeof account !== "string" || !Array.isArray(scopes) || !scopes.every(isScope)) return null;
  return { account, scopes: normalizeScopes(scopes), tokenId: null };
}

function options(origin: string): OAuthProviderOptions<Env> {
  return {
    apiRoute: "/mcp",
    apiHandler: {
      fetch: (request: Request, env: Env, ctx: ExecutionContext) => {
        const principal = grantPrincipal((ctx as ExecutionContext & { props?: unknown }).props);
        if (!principal)
          return Response.json({ error: "invalid_token", error_description: "the grant carries no account" }, { status: 401 });
        return handleMcp(request, env, principal);
      },
    },
    // Every other route is served by the Worker's own router before the provider is asked.
    defaultHandler: { fetch: () => new Response("Not found", { status: 404 }) },
    authorizeEndpoint: AUTHORIZE_ENDPOINT,
    tokenEndpoint: TOKEN_ENDPOINT,
    clientRegistrationEndpoint: REGISTER_ENDPOINT,
    scopesSupported: [...OAUTH_SCOPES],
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    refreshTokenTTL: REFRESH_TOKEN_SECONDS,
    clientRegistrationTTL: CLIENT_REGISTRATION_SECONDS,
    // Client ID Metadata Documents beside dynamic registration; their fetch is bounded (./client-metadata).
    clientIdMetadataDocumentEnabled: true,
    resourceMetadata: { resource: `${origin}/mcp`, authorization_servers: [origin], resource_name: "Waymark" },
  };
}

guardClientMetadataFetch();

const providers = new Map<string, { provider: OAuthProvider<Env>; options: OAuthProviderOptions<Env> }>();

function forOrigin(origin: string) {
  let entry = providers.get(origin);
  if (!entry) {
    const built = options(origin);
    entry = { provider: new OAuthProvider<Env>(built), options: built };
    // A deployment answers a handful of host names; the bound is only a backstop.
    if (providers.size > 16) providers.clear();
    providers.set(origin, entry);
  }
  return entry;
}

/** The provider serving `request`'s origin: metadata, registration, token endpoint, and /mcp with OAuth access tokens. */
export function oauthProvider(request: Request): OAuthProvider<Env> {
  return forOrigin(new URL(request.url).origin).provider;
}

/** The library's helpers (parse and complete authorization requests, list and revoke grants) for `request`'s origin. */
export function oauthApi(request: Request, env: Env): OAuthHelpers {
  return getOAuthApi(forOrigin(new URL(request.url).origin).options, env);
}

/** OAuth access tokens read `<user>:<grant>:<secret>`; bootstrap and managed tokens never do. */
export function looksLikeOAuthToken(token: string): boolean {
  return /^[^:\s]+:[^:\s]+:[^:\s]+$/.test(token);
}
