/**
 * @module routes/oauth
 * The OAuth routes, mounted by src/index.ts after the guard and the body cap:
 *   GET  /.well-known/oauth-protected-resource[/mcp]   RFC 9728 metadata of /mcp    (the library)
 *   GET  /.well-known/oauth-authorization-server       RFC 8414 metadata            (the library)
 *   POST /oauth/register                               dynamic client registration  (the library; or a
 *                                                      client_id that is its metadata document's URL: ../oauth/client-metadata)
 *   POST /oauth/token                                  code + PKCE, refresh, revoke (the library; a metadata
 *                                                      document's client fetched first: ../oauth/client-metadata)
 *   GET  /oauth/authorize                              the consent page (ours); not signed in → /login and back
 *   POST /oauth/authorize                              approve or deny (ours): hono/csrf, the session, a scope the session holds
 */
import { AuthorizationError, type AuthRequest, authorizationErrorRedirect } from "@cloudflare/workers-oauth-provider";
import { type Context, Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import { allows, effectiveScopes, may, type Scope } from "../domain/access-scopes";
import { failedAttemptWithinBudget } from "../http/bearer-tokens";
import { formCsrf } from "../http/csrf";
import { noStore, pageHeaders } from "../http/security-headers";
import { currentSession } from "../http/session";
import type { AppEnv } from "../http/types";
import { formBody } from "../http/validate";
import { clientLabel, prepareClientMetadata, redirectHostOf } from "../oauth/client-metadata";
import {
  AUTHORIZE_ENDPOINT,
  type GrantProps,
  grantMetadata,
  OAUTH_SCOPES,
  oauthApi,
  oauthProvider,
  REGISTER_ENDPOINT,
  TOKEN_ENDPOINT,
} from "../oauth/provider";
import { rememberReturnPath } from "../oauth/return-path";
import { renderConsentError, renderConsentPage } from "../pages/consent";
import { ownerPage } from "../pages/tokens-page";

type Ctx = Context<AppEnv>;

export const oauthRoutes = new Hono<AppEnv>();

const toProvider = (c: Ctx) => oauthProvider(c.req.raw).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext);

/**
 * Dynamic registration is anonymous and stores a client: each one is charged to the client's
 * address like a failed sign-in (AUTH_LIMITER), so one address cannot fill the namespace.
 */
oauthRoutes.post(REGISTER_ENDPOINT, async (c, next) => {
  if (await failedAttemptWithinBudget(c.env, c.req.raw)) return next();
  return c.json({ error: "slow_down", error_description: "too many registrations from this address; wait a minute" }, 429, {
    "Retry-After": "60",
  });
});

/**
 * The client ids a token request names, as the provider reads them: HTTP Basic's user, else the
 * body's client_id, else the issuer of a client assertion (private_key_jwt). Each may be a
 * metadata document's URL, which the provider would fetch.
 */
async function tokenRequestClients(request: Request): Promise<string[]> {
  const ids: string[] = [];
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.get("Authorization") ?? "")?.[1];
  if (basic) {
    try {
      ids.push(decodeURIComponent(atob(basic).split(":")[0] ?? ""));
    } catch {
      // Not Basic credentials at all: the provider refuses them.
    }
  }
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers.get("Content-Type") ?? "")) return ids;
  const form = new URLSearchParams(await request.clone().text());
  ids.push(form.get("client_id") ?? "");
  const assertion = form.get("client_assertion")?.split(".")[1];
  if (assertion) {
    try {
      const claims: unknown = JSON.parse(atob(assertion.replace(/-/g, "+").replace(/_/g, "/")));
      if (typeof claims === "object" && claims !== null && "iss" in claims && typeof claims.iss === "string") ids.push(claims.iss);
    } catch {
      // Not a JWT: the provider refuses it.
    }
  }
  return ids;
}

/**
 * The token endpoint authenticates a client, so the provider resolves it: a metadata document's
 * client is fetched first, within bounds, and one refused is answered here as the provider
 * answers a client it cannot resolve.
 */
oauthRoutes.post(TOKEN_ENDPOINT, async (c, next) => {
  for (const clientId of await tokenRequestClients(c.req.raw)) {
    const refused = await prepareClientMetadata(clientId, c.env);
    if (refused)
      return c.json({ error: "invalid_client", error_description: `client_id: its metadata document was refused (${refused})` }, 401);
  }
  return next();
});

for (const path of [
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/*",
  "/.well-known/oauth-authorization-server",
  "/.well-known/oauth-authorization-server/*",
  REGISTER_ENDPOINT,
  TOKEN_ENDPOINT,
]) {
  oauthRoutes.on(["GET", "POST", "OPTIONS"], path, toProvider);
}

oauthRoutes.use(AUTHORIZE_ENDPOINT, noStore, pageHeaders);

const nonceOf = (c: Ctx) => c.get("secureHeadersNonce") ?? "";
const pathWithQuery = (c: Ctx) => {
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
};

type Parsed = { ok: true; request: AuthRequest } | { ok: false; response: Response | Promise<Response> };

/**
 * The validated authorization request, or the answer to an invalid one (back to the client only
 * when that is safe: the library checked the redirect URI first). Every client must use S256 PKCE,
 * a confidential one too, as the MCP authorization spec requires; the library would let a client
 * with a secret skip it.
 */
async function parseRequest(c: Ctx): Promise<Parsed> {
  // A client_id that is a metadata document's URL: fetched within bounds before the provider resolves it.
  const refused = await prepareClientMetadata(new URL(c.req.url).searchParams.get("client_id"), c.env);
  if (refused)
    return {
      ok: false,
      response: c.html(renderConsentError(nonceOf(c), `client_id: its metadata document was refused (${refused})`), 400),
    };
  try {
    const request = await oauthApi(c.req.raw, c.env).parseAuthRequest(c.req.raw);
    if (!request.codeChallenge || request.codeChallengeMethod !== "S256") {
      const description = "code_challenge: every client must use PKCE with code_challenge_method=S256";
      return { ok: false, response: c.redirect(authorizationErrorRedirect(request, "invalid_request", description), 302) };
    }
    return { ok: true, request };
  } catch (error) {
    if (error instanceof AuthorizationError && error.redirectTo) return { ok: false, response: c.redirect(error.redirectTo, 302) };
    const message = error instanceof AuthorizationError ? error.description : "the authorization request is malformed";
    return { ok: false, response: c.html(renderConsentError(nonceOf(c), message), 400) };
  }
}

/** Scopes the signed-in owner may hand out: what the app asks for is a hint; the session's token is the ceiling. */
const offeredScopes = (sessionScopes: readonly Scope[]) =>
  may(sessionScopes, "grant.approve") ? OAUTH_SCOPES.filter((scope) => allows(sessionScopes, scope)) : [];

oauthRoutes.get(AUTHORIZE_ENDPOINT, async (c) => {
  const session = await currentSession(c);
  if (!session) {
    rememberReturnPath(c, pathWithQuery(c));
    return c.redirect("/login", 303);
  }
  const parsed = await parseRequest(c);
  if (!parsed.ok) return parsed.response;
  const offered = offeredScopes(session.scopes);
  if (offered.length === 0)
    return c.html(renderConsentError(nonceOf(c), "The token you signed in with cannot grant read or write access."), 403);
  const client = await oauthApi(c.req.raw, c.env).lookupClient(parsed.request.clientId);
  return c.html(
    await renderConsentPage(nonceOf(c), {
      account: session.account,
      clientName: clientLabel(client?.clientName, parsed.request.clientId),
      redirectHost: redirectHostOf(parsed.request.redirectUri),
      offered,
      action: pathWithQuery(c),
    }),
  );
});

const consentForm = z.object({
  decision: z.enum(["approve", "deny"], { error: 'must be "approve" or "deny"' }),
  scope: z.enum(["read", "write"], { error: 'must be "read" or "write"' }).optional(),
});

/** Leaves our origin with a meta refresh: the consent page's CSP (form-action 'self') would block a redirect to the app. */
function continueTo(c: Ctx, location: string, message: string) {
  return c.html(
    ownerPage(
      nonceOf(c),
      "Returning to the app",
      html`<meta http-equiv="refresh" content="0;url=${location}"><h1>${message}</h1><p><a id="continue" href="${location}">Continue to the app</a></p>`,
    ),
  );
}

oauthRoutes.post(AUTHORIZE_ENDPOINT, formCsrf, formBody(consentForm), async (c) => {
  const session = await currentSession(c);
  if (!session) return c.redirect("/login", 303);
  const parsed = await parseRequest(c);
  if (!parsed.ok) return parsed.response;
  const form = c.req.valid("form");
  if (form.decision === "deny") {
    return continueTo(c, authorizationErrorRedirect(parsed.request, "access_denied", "the owner declined"), "Access denied");
  }
  const scope = form.scope ?? "read";
  if (!offeredScopes(session.scopes).includes(scope))
    return c.text(`scope: the token this session was opened with cannot grant ${scope}`, 403);
  const api = oauthApi(c.req.raw, c.env);
  const client = await api.lookupClient(parsed.request.clientId);
  // The grant carries the credential of this session: it ends when that credential does (oauth/provider).
  const props: GrantProps = { account: session.account, scopes: [scope], credential: session.credential };
  const { redirectTo } = await api.completeAuthorization({
    request: parsed.request,
    userId: session.account,
    metadata: grantMetadata(client?.clientName ?? null, session.credential),
    scope: effectiveScopes([scope]),
    props,
  });
  return continueTo(c, redirectTo, "Approved");
});
