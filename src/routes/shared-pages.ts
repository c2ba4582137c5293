/**
 * @module routes/shared-pages
 * Sharing and signing in: sign-in (/login, /logout), the share forms of the dashboard and the
 * share-management JSON API (/api/workflows/:id/share). Mounted by src/index.ts; the owner's
 * dashboard and workflow forms (owner-pages.ts) are mounted here. What a share link reads (its
 * page, exports and live socket under /s/:token) is a workflow read (./workflow-reads.ts).
 *
 * Access rules: the dashboard needs a session cookie, the JSON API a bearer token
 * (src/http/require-account.ts). Forms pass hono/csrf.
 */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { allows } from "../domain/access-scopes";
import type { ShareInfo } from "../domain/share-status";
import { notFound } from "../errors";
import { apiError } from "../http/api-errors";
import { authenticateToken, failedAttemptWithinBudget } from "../http/bearer-tokens";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import { currentSession, endSession, sessionCookie } from "../http/session";
import type { AppEnv } from "../http/types";
import { formBody, jsonBody } from "../http/validate";
import { isWorkflowId } from "../ids";
import { takeReturnPath } from "../oauth/return-path";
import { renderLoginPage } from "../pages/dashboard";
import { accountStub, workflowStub } from "../stubs";
import { applyShareForm, confirmShareRevocation, dashboardWriter, formCsrf, nonceOf, shareForm, shareRequest, shareUrl } from "./forms";
import { ownerRoutes } from "./owner-pages";

type Ctx = Context<AppEnv>;

export const pageRoutes = new Hono<AppEnv>();

for (const path of ["/login", "/logout", "/dashboard", "/dashboard/*"]) pageRoutes.use(path, noStore);
pageRoutes.use("/api/workflows/*", noStore, dataHeaders);

// ── Share management: shared by the dashboard and the JSON API ─────────────

function shareJson(c: Ctx, workflowId: string, info: ShareInfo) {
  return {
    workflow_id: workflowId,
    status: info.status,
    share_url: shareUrl(c, info),
    created_at: info.created_at,
    expires_at: info.expires_at,
    revoked_at: info.revoked_at,
  };
}

const apiReader = requireAccount({ bearer: true, session: false, otherwise: "json", action: "share.read" });
const apiWriter = requireAccount({ bearer: true, session: false, otherwise: "json", action: "share.change" });
const noSuchWorkflow = (c: Ctx) => apiError(c, "NOT_FOUND", notFound("workflow_id", "such workflow").message);

pageRoutes.get("/api/workflows/:id/share", apiReader, async (c) => {
  const id = c.req.param("id");
  if (!isWorkflowId(id)) return noSuchWorkflow(c);
  const result = await workflowStub(c.env, id).shareLink(c.var.account);
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(shareJson(c, id, result.value));
});

pageRoutes.post("/api/workflows/:id/share", apiWriter, jsonBody(shareRequest), async (c) => {
  const id = c.req.param("id");
  if (!isWorkflowId(id)) return noSuchWorkflow(c);
  const request = c.req.valid("json");
  const result = await workflowStub(c.env, id).manageShare(c.var.account, request.action, request.expires_in_seconds ?? null);
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(shareJson(c, id, result.value));
});

// ── Dashboard ───────────────────────────────────────────────────────────────

for (const path of ["/login", "/logout", "/dashboard", "/dashboard/*"]) pageRoutes.use(path, pageHeaders);

pageRoutes.get("/login", async (c) => {
  if (await currentSession(c)) return c.redirect("/dashboard", 303);
  return c.html(renderLoginPage(nonceOf(c), null));
});

const loginForm = z.object({ token: z.string({ error: "is required" }).max(1024, { error: "must be at most 1024 characters" }) });

pageRoutes.post("/login", formCsrf, formBody(loginForm), async (c) => {
  const token = c.req.valid("form").token.trim();
  const principal = token ? await authenticateToken(c.env, token) : null;
  const cookie = principal ? await sessionCookie(c.env, c.req.url, principal) : null;
  if (principal && cookie) {
    c.header("Set-Cookie", cookie);
    // Webhook payloads link to the owner view at the origin the owner signs in at.
    await accountStub(c.env, principal.account).recordOrigin(new URL(c.req.url).origin);
    // An OAuth consent page sent the owner here to sign in: back to it. An admin-only token has no workflows to list.
    return c.redirect(takeReturnPath(c) ?? (allows(principal.scopes, "read") ? "/dashboard" : "/dashboard/tokens"), 303);
  }
  if (!(await failedAttemptWithinBudget(c.env, c.req.raw))) {
    return c.html(renderLoginPage(nonceOf(c), "Too many failed attempts. Wait a minute and try again."), 429, { "Retry-After": "60" });
  }
  return c.html(renderLoginPage(nonceOf(c), "That token is not valid."), 401);
});

pageRoutes.post("/logout", formCsrf, async (c) => {
  await endSession(c, await currentSession(c));
  return c.redirect("/login", 303);
});

pageRoutes.post("/dashboard/workflows/:id/share", formCsrf, dashboardWriter, formBody(shareForm), async (c) => {
  const id = c.req.param("id");
  const request = c.req.valid("form");
  const asked = confirmShareRevocation(c, request, `/dashboard#${id}`);
  if (asked) return asked;
  const refused = await applyShareForm(c, request);
  if (refused) return refused;
  // Rotation shows the new link straight away; the other actions return to the row.
  return c.redirect(request.action === "revoke" ? `/dashboard#${id}` : `/dashboard?shown=${id}#${id}`, 303);
});

pageRoutes.route("/", ownerRoutes);
