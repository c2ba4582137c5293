/**
 * @module http/require-account
 * The one principal middleware of the app: /mcp, the JSON API and the dashboard. A request proves
 * who it acts for once, with one of
 *   - a bearer token: bootstrap or managed (src/http/bearer-tokens.ts), or, where the route takes
 *     them, an OAuth access token for this origin's /mcp (the route passes the provider's check,
 *     src/oauth/provider.ts `oauthPrincipal`, which unwraps it: middleware imports no OAuth module);
 *   - the dashboard's session cookie, where the route takes it (src/http/session.ts).
 * Each carries the credential it came from and is checked against it now. The principal lands in
 * `c.var.principal` (its account also in `c.var.account`; a session in `c.var.session`), and the
 * route's action is checked against the access matrix (src/domain/access-scopes.ts). Failures answer in the
 * route's language: the API `{code, message}` with 401/403/429, the dashboard a redirect to the
 * sign-in page (or 403 when the session's credential lacks the scope), /mcp a JSON-RPC error.
 */
import type { Context, MiddlewareHandler } from "hono";
import { type Action, missingScopeMessage, type Scope, scopeMissing } from "../domain/access-scopes";
import { apiError, RETRY_HEADERS } from "./api-errors";
import { authenticateToken, bearerToken, failedAuthentication, type Principal, UNAUTHORIZED_HEADERS } from "./bearer-tokens";
import { currentSession } from "./session";
import type { AppEnv, Session } from "./types";

/** Why a request was not let through, for a route that answers in its own format. */
export interface Refusal {
  status: 401 | 403 | 429;
  message: string;
  /** The scope the credential lacks (403). */
  missing?: Scope;
}

export interface PrincipalOptions {
  /** Accept the dashboard's session cookie when the request has no Authorization header. */
  session: boolean;
  /** Accept a bootstrap or managed bearer token. */
  bearer: boolean;
  /** Accept OAuth access tokens: who one acts for, or null (src/oauth/provider.ts `oauthPrincipal`). */
  oauth?: (request: Request, env: Env, token: string) => Promise<Principal | null>;
  /** What the route does: the credential must hold every scope the access matrix lists for it. */
  action?: Action;
  /**
   * What a refused caller gets: a JSON error, the sign-in page, or the route's own answer (a
   * session-only route's own answer is also what a caller without a session gets, status 401).
   */
  otherwise: "json" | "login" | ((c: Context<AppEnv>, refusal: Refusal) => Response | Promise<Response>);
}

type Proof = { ok: true; principal: Principal; session: Session | null } | { ok: false; refusal: Refusal } | { ok: false; signIn: true };

/** The bearer token's principal: bootstrap or managed first (a hash lookup), then an OAuth access token where accepted. */
async function bearerPrincipal(c: Context<AppEnv>, token: string, options: PrincipalOptions): Promise<Principal | null> {
  const principal = await authenticateToken(c.env, token);
  return principal || !options.oauth ? principal : options.oauth(c.req.raw, c.env, token);
}

async function prove(c: Context<AppEnv>, options: PrincipalOptions): Promise<Proof> {
  const hasBearer = c.req.header("Authorization") !== undefined;
  if (options.session && !hasBearer) {
    const session = await currentSession(c);
    if (session) return { ok: true, principal: session, session };
  }
  if (!options.bearer || (options.otherwise === "login" && !hasBearer)) return { ok: false, signIn: true };
  const token = bearerToken(c.req.raw);
  const principal = token ? await bearerPrincipal(c, token, options) : null;
  if (principal) return { ok: true, principal, session: null };
  return { ok: false, refusal: await failedAuthentication(c.env, c.req.raw, token !== null) };
}

function refuse(c: Context<AppEnv>, options: PrincipalOptions, refusal: Refusal): Response | Promise<Response> {
  if (typeof options.otherwise === "function") return options.otherwise(c, refusal);
  if (refusal.status === 403 && options.otherwise === "login") {
    return c.text(`Forbidden: the token this session was opened with lacks the ${refusal.missing} scope.`, 403);
  }
  if (refusal.status === 403) return apiError(c, "FORBIDDEN", refusal.message);
  const code = refusal.status === 429 ? "RATE_LIMITED" : "UNAUTHORIZED";
  return apiError(c, code, refusal.message.replace(/^UNAUTHORIZED: /, ""), refusal.status === 429 ? RETRY_HEADERS : UNAUTHORIZED_HEADERS);
}

/** The principal middleware: every route that needs an account (and /mcp) puts this first. */
export function requireAccount(options: PrincipalOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const proof = await prove(c, options);
    if (!proof.ok && "signIn" in proof && typeof options.otherwise !== "function") return c.redirect("/login", 303);
    if (!proof.ok) return refuse(c, options, "signIn" in proof ? { status: 401, message: "UNAUTHORIZED: sign in" } : proof.refusal);
    const missing = options.action ? scopeMissing(proof.principal.scopes, options.action) : null;
    if (missing) return refuse(c, options, { status: 403, message: missingScopeMessage(missing), missing });
    c.set("principal", proof.principal);
    c.set("account", proof.principal.account);
    c.set("session", proof.session);
    return next();
  };
}
