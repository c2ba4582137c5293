/**
 * @module index
 * The Worker: one guard for every request (deployment configuration, Host allowlist,
 * browser origins), then the MCP endpoint, OAuth (metadata, registration, token, consent),
 * the account API (tokens, devices, webhooks, search), the export schema, the helper tarball, the
 * workflow reads (one sub-app mounted for share links, the owner and read tokens), sign-in and the dashboard.
 * Bodies are capped before parsing: /mcp by its own bound (MAX_BODY_BYTES, in its route),
 * everything else by API_BODY_BYTES. Every route that acts for an account authenticates it with
 * the one principal middleware (src/http/require-account.ts), /mcp included.
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { apiErrorResponse } from "./http/api-errors";
import { requestGuard } from "./http/guard";
import type { AppEnv } from "./http/types";
import { limitBody } from "./http/validate";
import { LIMITS } from "./limits";
import { mcpRoutes } from "./mcp/endpoint";
import { serverCardRoutes } from "./mcp/server-card";
import { meter } from "./meter";
import { accountRoutes } from "./routes/account-api";
import { deviceRoutes } from "./routes/devices";
import { exportApiRoutes } from "./routes/export-api";
import { githubReceiverRoutes, githubWebhookRoutes } from "./routes/github-webhooks";
import { helperDownload } from "./routes/helper-download";
import { insightRoutes } from "./routes/insights";
import { oauthRoutes } from "./routes/oauth";
import { pluginMarketplace } from "./routes/plugin-marketplace";
import { pageRoutes } from "./routes/shared-pages";
import { signingKeyRoutes } from "./routes/signing-keys";
import { tokenRoutes } from "./routes/token-admin";
import { OWNER_READERS, READ_TOKEN_READERS, SHARE_LINK_READERS, workflowReads } from "./routes/workflow-reads";

export { AccountObject } from "./account/account-object";
export { WorkflowObject } from "./workflow/workflow-object";

const app = new Hono<AppEnv>();

app.use("*", requestGuard);
// Before the general body cap: /mcp answers with its own bound and never reaches the middleware below.
app.route("/", mcpRoutes);
// GitHub's deliveries are larger than the API's bodies: their route reads its own bound.
app.route("/", githubWebhookRoutes);
app.use("*", limitBody(LIMITS.API_BODY_BYTES));
app.get("/health", (c) => c.json({ ok: true }));
// What this isolate counted (src/meter.ts): only where the deployment meters itself.
app.get("/meter", (c) => (c.env.WAYMARK_METER === "1" ? c.json(meter.read()) : c.notFound()));
app.route("/", serverCardRoutes);
app.route("/", helperDownload);
app.route("/", pluginMarketplace);
app.route("/", signingKeyRoutes);
app.route("/", exportApiRoutes);
app.route("/", oauthRoutes);
app.route("/", tokenRoutes);
app.route("/", deviceRoutes);
app.route("/", accountRoutes);
app.route("/", insightRoutes);
// Every read of one workflow: one sub-app, mounted for each kind of reader.
app.route("/s/:token", workflowReads(SHARE_LINK_READERS));
app.route("/w/:id", workflowReads(OWNER_READERS));
app.route("/api/workflows/:id", workflowReads(READ_TOKEN_READERS));
app.route("/", githubReceiverRoutes);
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

/** The app, with each request counted where the deployment meters itself. */
export default {
  fetch(request: Request, env: Env, ctx?: ExecutionContext): Response | Promise<Response> {
    meter.enableFrom(env);
    if (meter.on) meter.workerRequest();
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
