/**
 * @module pages/routes
 * Shared workflow pages (/s/:token…), the owner's dashboard (/login, /dashboard) and the
 * share-management JSON API (/api/workflows/:id/share). Mounted by src/index.ts.
 *
 * Access rules: a share token reads one workflow (page, exports, live socket) and nothing
 * else, and it is verified here (HMAC) before any Durable Object is touched; whether the
 * link is still active is the workflow object's answer. The dashboard needs a session
 * cookie, the JSON API a bearer token (src/http/auth.ts). Forms pass hono/csrf.
 */
import { type Context, Hono } from "hono";
import { csrf } from "hono/csrf";
import { z } from "zod";
import { authenticateToken, failedAttemptWithinBudget } from "../auth";
import { clientKey } from "../domain/network";
import { requireAccount } from "../http/auth";
import { apiError } from "../http/errors";
import { originAllowed } from "../http/origins";
import { allows } from "../http/scopes";
import type { AppEnv } from "../http/types";
import { formBody, jsonBody } from "../http/validate";
import { isWorkflowId } from "../ids";
import { takeReturnPath } from "../oauth/return-path";
import { CLIENT_HEADER, SHARE_TOKEN_HEADER } from "../workflow/object";
import { MAX_SHARE_SECONDS, type ShareInfo, shareSecret, verifiedShareWorkflow } from "../workflow/share";
import type { WorkflowView } from "../workflow/view";
import { renderDashboard, renderLoginPage, type ShownLink } from "./dashboard";
import { revealBidiControls } from "./format";
import { renderMarkdown } from "./markdown";
import { renderGonePage, renderWorkflowBlocks, renderWorkflowPage } from "./page";
import { dataHeaders, noStore, pageHeaders } from "./security";
import { currentSession, endSession, sessionCookie } from "./session";

type Ctx = Context<AppEnv>;

export const pageRoutes = new Hono<AppEnv>();

const workflowStub = (env: Env, workflowId: string) => env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId));
const nonceOf = (c: Ctx) => c.get("secureHeadersNonce") ?? "";

/** Browsers post forms from our no-referrer pages with `Origin: null` and `Sec-Fetch-Site: same-origin`; both are accepted. */
const formCsrf = csrf({ origin: (origin, c) => originAllowed(c.env, origin), secFetchSite: "same-origin" });

for (const path of ["/s/*", "/login", "/logout", "/dashboard", "/dashboard/*"]) pageRoutes.use(path, noStore);
pageRoutes.use("/api/workflows/*", noStore, dataHeaders);

// ── Shared pages ────────────────────────────────────────────────────────────

/** The workflow of a genuine share token (HMAC checked, no storage touched), or null. */
async function verifiedWorkflow(c: Ctx): Promise<string | null> {
  return verifiedShareWorkflow(await shareSecret(c.env), c.req.param("token") ?? "");
}

type Shared = { ok: true; view: WorkflowView } | { ok: false; status: 404 | 410 };

/** The workflow a share token opens, or why not (410 revoked/expired, 404 unknown or forged). */
async function sharedView(c: Ctx, withEvents = false): Promise<Shared> {
  const workflowId = await verifiedWorkflow(c);
  if (!workflowId) return { ok: false, status: 404 };
  const { status, view } = await workflowStub(c.env, workflowId).sharedView(c.req.param("token") ?? "", withEvents);
  if (status === "active" && view) return { ok: true, view };
  return { ok: false, status: status === "not_found" || status === "none" ? 404 : 410 };
}

const gonePage = (c: Ctx, status: 404 | 410) => c.html(renderGonePage(nonceOf(c)), status);

/** Agent text on pages: bidi controls become visible code points (the markup itself has none). */
const shown = async (rendered: ReturnType<typeof renderWorkflowBlocks>) => revealBidiControls((await rendered).toString());

pageRoutes.get("/s/:token", pageHeaders, async (c) => {
  const shared = await sharedView(c);
  if (!shared.ok) return gonePage(c, shared.status);
  return c.html(await shown(renderWorkflowPage(shared.view, { nonce: nonceOf(c), base: `/s/${c.req.param("token")}` })));
});

/** The page's blocks rendered now: the live page swaps them in after events (one renderer for both). */
pageRoutes.get("/s/:token/blocks", dataHeaders, async (c) => {
  const shared = await sharedView(c);
  if (!shared.ok) return c.text("This workflow is no longer shared.", shared.status);
  return c.html(await shown(renderWorkflowBlocks(shared.view)), 200, { "Waymark-Seq": String(shared.view.last_seq) });
});

/** The workflow with its whole event log and hash chain: `waymark verify` checks it offline. */
pageRoutes.get("/s/:token/export.json", dataHeaders, async (c) => {
  const shared = await sharedView(c, true);
  if (!shared.ok) return gonePage(c, shared.status);
  return c.body(JSON.stringify(shared.view, null, 2), 200, { "Content-Type": "application/json; charset=utf-8" });
});

pageRoutes.get("/s/:token/export.md", dataHeaders, async (c) => {
  const shared = await sharedView(c);
  if (!shared.ok) return gonePage(c, shared.status);
  return c.body(renderMarkdown(shared.view), 200, { "Content-Type": "text/markdown; charset=utf-8" });
});

const liveQuery = z.object({
  after: z
    .string()
    .regex(/^\d{1,15}$/, "must be a whole number ≥ 0")
    .optional(),
});

/**
 * The live feed. Routing is on the decoded path, so `/s/<token>/%77s` lands here too and
 * gets the same checks. The object is never shown the browser's URL: it gets the verified
 * token in a header and a fixed internal URL, and re-checks the token before accepting.
 */
pageRoutes.get("/s/:token/ws", async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") return c.text("expected a WebSocket upgrade", 426);
  const query = liveQuery.safeParse({ after: c.req.query("after") });
  if (!query.success) return c.text("after: must be a whole number ≥ 0", 400);
  const workflowId = await verifiedWorkflow(c);
  if (!workflowId) return c.text("This workflow is no longer shared.", 404);
  const live = new Request(`https://workflow.internal/live?after=${query.data.after ?? "0"}`, {
    headers: {
      Upgrade: "websocket",
      [SHARE_TOKEN_HEADER]: c.req.param("token"),
      // Live pages are capped per client; clientKey groups an IPv6 /64 like the login limiter.
      [CLIENT_HEADER]: clientKey(c.req.header("CF-Connecting-IP") ?? "") ?? "local",
    },
  });
  return workflowStub(c.env, workflowId).fetch(live);
});

// ── Share management: shared by the dashboard and the JSON API ─────────────

const SECONDS_RULE = `must be a whole number from 1 to ${MAX_SHARE_SECONDS}, or null for no expiry`;

/** {action, expires_in_seconds?}: JSON gives a number or null, the dashboard's form a string ("" = never). */
const shareRequest = z.strictObject(
  {
    action: z.enum(["rotate", "revoke", "set_expiry"], { error: 'must be "rotate", "revoke" or "set_expiry"' }),
    expires_in_seconds: z
      .preprocess(
        (value) => (value === "" ? null : typeof value === "string" && /^\d{1,12}$/.test(value) ? Number(value) : value),
        z
          .number({ error: SECONDS_RULE })
          .int({ error: SECONDS_RULE })
          .min(1, { error: SECONDS_RULE })
          .max(MAX_SHARE_SECONDS, { error: SECONDS_RULE })
          .nullable(),
      )
      .optional(),
  },
  { error: 'must be a JSON object {"action": ..., "expires_in_seconds"?: ...}' },
);

function shareUrl(c: Ctx, info: ShareInfo): string | null {
  return info.token ? `${new URL(c.req.url).origin}/s/${info.token}` : null;
}

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

const apiReader = requireAccount({ bearer: true, session: false, otherwise: "json", scope: "read" });
const apiWriter = requireAccount({ bearer: true, session: false, otherwise: "json", scope: "write" });
const dashboardReader = requireAccount({ bearer: false, session: true, otherwise: "login", scope: "read" });
const dashboardWriter = requireAccount({ bearer: false, session: true, otherwise: "login", scope: "write" });
const noSuchWorkflow = (c: Ctx) => apiError(c, "NOT_FOUND", "workflow_id: no such workflow in this account");

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
  if (principal) {
    c.header("Set-Cookie", await sessionCookie(c.env, c.req.url, principal));
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

pageRoutes.get("/dashboard", dashboardReader, async (c) => {
  const account = c.var.account;
  const rows = await c.env.ACCOUNT.get(c.env.ACCOUNT.idFromName(account)).dashboardRows();
  let link: ShownLink | null = null;
  const shownId = c.req.query("shown") ?? "";
  if (isWorkflowId(shownId)) {
    const result = await workflowStub(c.env, shownId).shareLink(account);
    if (result.ok) link = { workflowId: shownId, info: result.value, url: shareUrl(c, result.value) };
  }
  return c.html(await shown(renderDashboard(nonceOf(c), account, rows, link)));
});

pageRoutes.post("/dashboard/workflows/:id/share", formCsrf, dashboardWriter, formBody(shareRequest), async (c) => {
  const id = c.req.param("id");
  if (!isWorkflowId(id)) return c.text("no such workflow", 404);
  const request = c.req.valid("form");
  const result = await workflowStub(c.env, id).manageShare(c.var.account, request.action, request.expires_in_seconds ?? null);
  if (!result.ok) return c.text(result.message, result.code === "NOT_FOUND" ? 404 : 400);
  // Rotation shows the new link straight away; the other actions return to the row.
  return c.redirect(request.action === "revoke" ? `/dashboard#${id}` : `/dashboard?shown=${id}#${id}`, 303);
});
