/**
 * @module http/require-account
 * The one authentication middleware of the JSON API and the dashboard. A bearer token
 * (scripts, agents) or, where the route allows it, the dashboard's session cookie; the
 * account lands in `c.var.account` and what it may do in `c.var.scopes`. Every route names
 * the scope it needs (src/domain/access-scopes.ts). The API answers `{code, message}` with 401/403/429,
 * the dashboard redirects to the sign-in page (or answers 403 when the session's token lacks
 * the scope).
 */
import type { MiddlewareHandler } from "hono";
import { allows, missingScopeMessage, type Scope } from "../domain/access-scopes";
import { apiError, RETRY_HEADERS } from "./api-errors";
import { authenticateBearer, UNAUTHORIZED_HEADERS } from "./bearer-tokens";
import { currentSession } from "./session";
import type { AppEnv } from "./types";

export interface AccountRequirement {
  /** Accept the dashboard's session cookie when the request has no Authorization header. */
  session: boolean;
  /** Accept a bearer token. */
  bearer: boolean;
  /** What a caller without credentials gets: a JSON error or a redirect to /login. */
  otherwise: "json" | "login";
  /** The scope the route needs. */
  scope: Scope;
}

export function requireAccount(requirement: AccountRequirement): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const hasBearer = c.req.header("Authorization") !== undefined;
    const refuseScope = () =>
      requirement.otherwise === "login"
        ? c.text(`Forbidden: the token this session was opened with lacks the ${requirement.scope} scope.`, 403)
        : apiError(c, "FORBIDDEN", missingScopeMessage(requirement.scope));
    if (requirement.session && !hasBearer) {
      const session = await currentSession(c);
      if (session) {
        if (!allows(session.scopes, requirement.scope)) return refuseScope();
        c.set("account", session.account);
        c.set("scopes", session.scopes);
        c.set("session", session);
        return next();
      }
    }
    if (!requirement.bearer || (requirement.otherwise === "login" && !hasBearer)) return c.redirect("/login", 303);
    const auth = await authenticateBearer(c.env, c.req.raw);
    if (!auth.ok) {
      const code = auth.status === 429 ? "RATE_LIMITED" : "UNAUTHORIZED";
      return apiError(c, code, auth.message.replace(/^UNAUTHORIZED: /, ""), auth.status === 429 ? RETRY_HEADERS : UNAUTHORIZED_HEADERS);
    }
    if (!allows(auth.scopes, requirement.scope)) return refuseScope();
    c.set("account", auth.account);
    c.set("scopes", auth.scopes);
    c.set("session", null);
    return next();
  };
}
