/**
 * The first middleware of every request: refuses to serve a misconfigured deployment,
 * requests for a Host this deployment does not answer (DNS rebinding), and browser
 * requests from an origin it does not trust. Form posts are checked further by hono/csrf
 * in the routes that take them.
 */
import type { MiddlewareHandler } from "hono";
import { shareSecretProblem } from "../workflow/share";
import { apiErrorResponse } from "./errors";
import { hostAllowed, hostnamesProblem, originAllowed } from "./origins";
import type { AppEnv } from "./types";

/** Why this deployment cannot serve, or null; the answer names the variable to fix. */
export function deploymentProblem(env: Env): string | null {
  return shareSecretProblem(env) ?? hostnamesProblem(env);
}

export const requestGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  const problem = deploymentProblem(c.env);
  if (problem) return apiErrorResponse("MISCONFIGURED", problem);
  if (!hostAllowed(c.env, c.req.header("Host") ?? new URL(c.req.url).host)) {
    return apiErrorResponse("FORBIDDEN", "Host: not a host name this server answers to");
  }
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== "null" && !originAllowed(c.env, origin)) {
    return apiErrorResponse("FORBIDDEN", `Origin: ${origin} may not call this server`);
  }
  // Browsers send Origin: null from pages with Referrer-Policy: no-referrer; then Sec-Fetch-Site tells.
  const site = c.req.header("Sec-Fetch-Site");
  if (origin === "null" && site !== undefined && site !== "same-origin") {
    return apiErrorResponse("FORBIDDEN", "Origin: a cross-site request may not call this server");
  }
  await next();
};
