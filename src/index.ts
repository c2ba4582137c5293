/**
 * @module index
 * The Worker: one guard for every request (deployment configuration, Host allowlist,
 * browser origins), then the MCP endpoint, OAuth (metadata, registration, token, consent),
 * the account API (tokens, devices, webhooks, search), the helper tarball, shared pages and the dashboard. Bodies are
 * capped before parsing: /mcp by its own bound (MAX_BODY_BYTES), everything else by
 * API_BODY_BYTES.
 *
 * /mcp takes three kinds of bearer token: bootstrap and managed tokens are checked here
 * (src/http/bearer-tokens.ts); an OAuth access token (`<account>:<grant>:<secret>`) goes to the OAuth
 * provider, which validates it against its grant and hands the grant's account and scopes on.
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { apiErrorResponse } from "./http/api-errors";
import { authenticateToken, bearerToken } from "./http/bearer-tokens";
import { requestGuard } from "./http/guard";
import type { AppEnv } from "./http/types";
import { limitBody } from "./http/validate";
import { LIMITS } from "./limits";
import { handleMcp } from "./mcp/endpoint";
import { serverCardRoutes } from "./mcp/server-card";
import { looksLikeOAuthToken, oauthProvider } from "./oauth/provider";
import { accountRoutes } from "./routes/account-api";
import { deviceRoutes } from "./routes/devices";
import { helperDownload } from "./routes/helper-download";
import { oauthRoutes } from "./routes/oauth";
import { pluginMarketplace } from "./routes/plugin-marketplace";
import { pageRoutes } from "./routes/shared-pages";
import { signingKeyRoutes } from "./routes/signing-keys";
import { tokenRoutes } from "./routes/token-admin";

export { AccountObject } from "./account/account-object";
export { WorkflowObject } from "./workflow/workflow-object";

const app = new Hono<AppEnv>();

app.use("*", requestGuard);
const otherBodies = limitBody(LIMITS.API_BODY_BYTES);
app.use("*", (c, next) => (c.req.path === "/mcp" ? next() : otherBodies(c, next)));

app.all("/mcp", async (c) => {
  const token = bearerToken(c.req.raw);
  if (token && looksLikeOAuthToken(token) && !(await authenticateToken(c.env, token))) {
    return oauthProvider(c.req.raw).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext);
  }
  return handleMcp(c.req.raw, c.env);
});
app.get("/health", (c) => c.json({ ok: true }));
app.route("/", serverCardRoutes);
app.route("/", helperDownload);
app.route("/", pluginMarketplace);
app.route("/", signingKeyRoutes);
app.route("/", oauthRoutes);
app.route("/", tokenRoutes);
app.route("/", deviceRoutes);
app.route("/", accountRoutes);
app.route("/", pageRoutes);

/** Malformed bodies (hono's parsers throw 400) answer like every other input problem. */
app.onError((error) => {
  if (error instanceof HTTPException && error.status === 400) {
    return apiErrorResponse("INPUT_VALIDATION_ERROR", `body: ${error.message || "is malformed"}`);
  }
  if (error instanceof HTTPException) return error.getResponse();
  console.error(error);
  return apiErrorResponse("INTERNAL", "the request failed; it can be retried");
});

export default app;
