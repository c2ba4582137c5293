/**
 * @module http/auth
 * The one authentication middleware of the JSON API and the dashboard. A bearer token
 * (scripts, agents) or, where the route allows it, the dashboard's session cookie; the
 * account lands in `c.var.account`. The API answers `{code, message}` with 401/429, the
 * dashboard redirects to the sign-in page.
 */
import type { MiddlewareHandler } from "hono";
import { authenticateBearer, UNAUTHORIZED_HEADERS } from "../auth";
import { currentSession } from "../pages/session";
import { apiError, RETRY_HEADERS } from "./errors";
import type { AppEnv } from "./types";

export interface AccountRequirement {
  /** Accept the dashboard's session cookie when the request has no Authorization header. */
  session: boolean;
  /** Accept a bearer token. */
  bearer: boolean;
  /** What a caller without credentials gets: a JSON error or a redirect to /login. */
  otherwise: "json" | "login";
}

export function requireAccount(requirement: AccountRequirement): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const hasBearer = c.req.header("Authorization") !== undefined;
    if (requirement.session && !hasBearer) {
      const session = await currentSession(c);
      if (session) {
        c.set("account", session.account);
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
    c.set("account", auth.account);
    c.set("session", null);
    return next();
  };
}
