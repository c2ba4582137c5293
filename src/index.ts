/**
 * @module index
 * The Worker: one guard for every request (deployment configuration, Host allowlist,
 * browser origins), then the MCP endpoint, OAuth (metadata, registration, token, consent),
 * the account API (tokens, webhooks, search), the helper tarball, shared pages and the dashboard.
 * Bodies are capped before parsing: /mcp by its own bound (MAX_BODY_BYTES, in its route),
 * everything else by API_BODY_BYTES. Every route that acts for an account authenticates it with
 * the one principal middleware (src/http/auth.ts), /mcp included.
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { accountRoutes } from "./account/routes";
import { tokenRoutes } from "./account/token-routes";
import { apiErrorResponse } from "./http/errors";
import { requestGuard } from "./http/guard";
import { signingKeyRoutes } from "./http/signing-keys";
import type { AppEnv } from "./http/types";
import { limitBody } from "./http/validate";
import { LIMITS } from "./limits";
import { mcpRoutes } from "./mcp/endpoint";
import { oauthRoutes } from "./oauth/routes";
import { helperDownload } from "./pages/helper-download";
import { pageRoutes } from "./pages/routes";

export { AccountObject } from "./account/object";
export { WorkflowObject } from "./workflow/object";

const app = new Hono<AppEnv>();

app.use("*", requestGuard);
// Before the general body cap: /mcp answers with its own bound and never reaches the middleware below.
app.route("/", mcpRoutes);
app.use("*", limitBody(LIMITS.API_BODY_BYTES));
app.get("/health", (c) => c.json({ ok: true }));
app.route("/", helperDownload);
app.route("/", signingKeyRoutes);
app.route("/", oauthRoutes);
app.route("/", tokenRoutes);
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
