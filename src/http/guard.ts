/**
 * @module http/guard
 * The first middleware of every request: refuses to serve a misconfigured deployment,
 * requests for a Host this deployment does not answer (DNS rebinding), and browser
 * requests from an origin it does not trust. Form posts are checked further by hono/csrf
 * in the routes that take them.
 */
import type { Context, MiddlewareHandler } from "hono";
import { shareSecretProblem } from "../domain/share-token";
import { signingKeysProblem } from "../signing";
import { apiErrorResponse, jsonRpcError } from "./api-errors";
import { hostAllowed, hostnamesProblem, originAllowed } from "./origins";
import type { AppEnv } from "./types";

/** Why this deployment cannot serve, or null; the answer names the variable to fix. */
export function deploymentProblem(env: Env): string | null {
  return shareSecretProblem(env) ?? signingKeysProblem(env) ?? hostnamesProblem(env);
}

/** MCP clients read JSON-RPC errors; everything else gets the REST `{code, message}`. */
function refuse(c: Context<AppEnv>, code: "FORBIDDEN" | "MISCONFIGURED", message: string): Response {
  if (c.req.path !== "/mcp") return apiErrorResponse(code, message);
  return code === "FORBIDDEN" ? jsonRpcError(403, -32000, `${code}: ${message}`) : jsonRpcError(500, -32603, `${code}: ${message}`);
}

export const requestGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  const problem = deploymentProblem(c.env);
  if (problem) return refuse(c, "MISCONFIGURED", problem);
  if (!hostAllowed(c.env, c.req.header("Host") ?? new URL(c.req.url).host)) {
    return refuse(c, "FORBIDDEN", "Host: not a host name this server answers to");
  }
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== "null" && !originAllowed(c.env, origin)) {
    return refuse(c, "FORBIDDEN", `Origin: ${origin} may not call this server`);
  }
  // Browsers send Origin: null from pages with Referrer-Policy: no-referrer; then Sec-Fetch-Site tells.
  const site = c.req.header("Sec-Fetch-Site");
  if (origin === "null" && site !== undefined && site !== "same-origin") {
    return refuse(c, "FORBIDDEN", "Origin: a cross-site request may not call this server");
  }
  await next();
};
