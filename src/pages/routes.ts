import { type Context, Hono } from "hono";
import { accountForToken, authAttemptAllowed, authenticateBearer, UNAUTHORIZED_HEADERS } from "../auth";
import { isWorkflowId } from "../ids";
import { CLIENT_HEADER, SHARE_TOKEN_HEADER } from "../workflow/object";
import { MAX_SHARE_SECONDS, type ShareAction, type ShareInfo, workflowOfShareToken } from "../workflow/share";
import type { WorkflowView } from "../workflow/view";
import { renderDashboard, renderLoginPage, type ShownLink } from "./dashboard";
import { renderMarkdown } from "./markdown";
import { renderGonePage, renderWorkflowPage } from "./page";
import { newNonce, sameOrigin, securityHeaders } from "./security";
import { clearedSessionCookie, sessionAccount, sessionCookie } from "./session";

/**
 * Shared workflow pages (/s/:token…), the owner's dashboard (/login, /dashboard) and the
 * share-management JSON API (/api/workflows/:id/share). Mounted by src/index.ts.
 *
 * Access rules: a share token reads one workflow (page, exports, live socket) and nothing
 * else; the dashboard needs a session cookie; the JSON API needs the bearer token.
 */
type Env_ = { Bindings: Env };
type Ctx = Context<Env_>;

export const pageRoutes = new Hono<Env_>();

const workflowStub = (env: Env, workflowId: string) => env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId));

function htmlResponse(body: string, status: number, nonce: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { "Content-Type": "text/html; charset=utf-8", ...securityHeaders(nonce), ...extra } });
}

async function gone(status: 404 | 410): Promise<Response> {
  const nonce = newNonce();
  return htmlResponse(await renderGonePage(nonce).toString(), status, nonce);
}

type Shared = { ok: true; view: WorkflowView } | { ok: false; response: Response };

/** The workflow a share token opens, or the "no longer shared" answer (410 revoked/expired, 404 unknown). */
async function sharedView(env: Env, token: string): Promise<Shared> {
  const workflowId = workflowOfShareToken(token);
  if (!workflowId) return { ok: false, response: await gone(404) };
  const { status, view } = await workflowStub(env, workflowId).sharedView(token);
  if (status === "active" && view) return { ok: true, view };
  return { ok: false, response: await gone(status === "not_found" || status === "none" ? 404 : 410) };
}

// ── Shared pages ────────────────────────────────────────────────────────────

pageRoutes.get("/s/:token", async (c) => {
  const shared = await sharedView(c.env, c.req.param("token"));
  if (!shared.ok) return shared.response;
  const nonce = newNonce();
  const body = await renderWorkflowPage(shared.view, { nonce, base: `/s/${c.req.param("token")}` }).toString();
  return htmlResponse(body, 200, nonce);
});

pageRoutes.get("/s/:token/export.json", async (c) => {
  const shared = await sharedView(c.env, c.req.param("token"));
  if (!shared.ok) return shared.response;
  return new Response(JSON.stringify(shared.view, null, 2), {
    headers: { "Content-Type": "application/json; charset=utf-8", ...securityHeaders(null) },
  });
});

pageRoutes.get("/s/:token/export.md", async (c) => {
  const shared = await sharedView(c.env, c.req.param("token"));
  if (!shared.ok) return shared.response;
  return new Response(renderMarkdown(shared.view), {
    headers: { "Content-Type": "text/markdown; charset=utf-8", ...securityHeaders(null) },
  });
});

/** The live feed: the workflow object checks the token itself (so a revoke cannot slip between check and accept). */
pageRoutes.get("/s/:token/ws", async (c) => {
  if (c.req.header("Upgrade") !== "websocket") return c.text("expected a WebSocket upgrade", 426);
  // A browser WebSocket carries Origin: only this origin's pages may open the feed.
  if (!sameOrigin(c.req.raw)) return c.text("forbidden origin", 403);
  const token = c.req.param("token");
  const workflowId = workflowOfShareToken(token);
  if (!workflowId) return c.text("This workflow is no longer shared.", 404);
  // The object never looks at this URL: it checks the token header on every request.
  const after = /^\d{1,15}$/.test(c.req.query("after") ?? "") ? (c.req.query("after") as string) : "0";
  const live = new Request(`https://workflow.internal/live?after=${after}`, {
    headers: { Upgrade: "websocket", [SHARE_TOKEN_HEADER]: token, [CLIENT_HEADER]: c.req.header("CF-Connecting-IP") ?? "local" },
  });
  return workflowStub(c.env, workflowId).fetch(live);
});

// ── Share management: shared by the dashboard and the JSON API ─────────────

type ShareRequest = { action: ShareAction; expiresInSeconds: number | null };

/** Validates {action, expires_in_seconds}; the message names the field and the rule. */
function parseShareRequest(action: unknown, expires: unknown): ShareRequest | string {
  if (action !== "rotate" && action !== "revoke" && action !== "set_expiry") return 'action: must be "rotate", "revoke" or "set_expiry"';
  if (expires === undefined || expires === null || expires === "") return { action, expiresInSeconds: null };
  const seconds = typeof expires === "string" ? Number(expires) : expires;
  if (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SHARE_SECONDS) {
    return `expires_in_seconds: must be a whole number from 1 to ${MAX_SHARE_SECONDS}, or null for no expiry`;
  }
  return { action, expiresInSeconds: seconds };
}

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

const apiHeaders = securityHeaders(null);

async function apiAccount(c: Ctx): Promise<string | Response> {
  if (!sameOrigin(c.req.raw)) return c.json({ error: "FORBIDDEN: cross-origin request" }, 403, apiHeaders);
  const auth = await authenticateBearer(c.env, c.req.raw);
  if (!auth.ok) {
    return c.json({ error: auth.message }, auth.status, {
      ...apiHeaders,
      ...(auth.status === 401 ? UNAUTHORIZED_HEADERS : { "Retry-After": "60" }),
    });
  }
  const account = auth.account;
  if (!isWorkflowId(c.req.param("id") ?? "")) return c.json({ error: "NOT_FOUND: no such workflow in this account" }, 404, apiHeaders);
  return account;
}

pageRoutes.get("/api/workflows/:id/share", async (c) => {
  const account = await apiAccount(c);
  if (account instanceof Response) return account;
  const id = c.req.param("id");
  const result = await workflowStub(c.env, id).shareLink(account);
  if (!result.ok) return c.json({ error: `${result.code}: ${result.message}` }, 404, apiHeaders);
  return c.json(shareJson(c, id, result.value), 200, apiHeaders);
});

pageRoutes.post("/api/workflows/:id/share", async (c) => {
  const account = await apiAccount(c);
  if (account instanceof Response) return account;
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = await c.req.json();
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    return c.json(
      { error: 'INPUT_VALIDATION_ERROR: body must be a JSON object {"action": ..., "expires_in_seconds"?: ...}' },
      400,
      apiHeaders,
    );
  }
  const request = parseShareRequest(body.action, body.expires_in_seconds);
  if (typeof request === "string") return c.json({ error: `INPUT_VALIDATION_ERROR: ${request}` }, 400, apiHeaders);
  const id = c.req.param("id");
  const result = await workflowStub(c.env, id).manageShare(account, request.action, request.expiresInSeconds);
  if (!result.ok) return c.json({ error: `${result.code}: ${result.message}` }, result.code === "NOT_FOUND" ? 404 : 400, apiHeaders);
  return c.json(shareJson(c, id, result.value), 200, apiHeaders);
});

// ── Dashboard ───────────────────────────────────────────────────────────────

const redirect = (location: string, extra: Record<string, string> = {}) =>
  new Response(null, { status: 303, headers: { Location: location, ...securityHeaders(null), ...extra } });

pageRoutes.get("/login", async (c) => {
  if (await sessionAccount(c.env, c.req.raw)) return redirect("/dashboard");
  const nonce = newNonce();
  return htmlResponse(await renderLoginPage(nonce, null).toString(), 200, nonce);
});

pageRoutes.post("/login", async (c) => {
  if (!sameOrigin(c.req.raw)) return c.text("Forbidden: cross-site form", 403, securityHeaders(null));
  // Every login spends an attempt: people log in rarely, guessers often.
  if (!(await authAttemptAllowed(c.env, c.req.raw))) {
    const nonce = newNonce();
    return htmlResponse(await renderLoginPage(nonce, "Too many attempts. Wait a minute and try again.").toString(), 429, nonce, {
      "Retry-After": "60",
    });
  }
  const form = await c.req.parseBody();
  const token = typeof form.token === "string" ? form.token.trim() : "";
  const account = token ? await accountForToken(c.env, token) : null;
  if (!account) {
    const nonce = newNonce();
    return htmlResponse(await renderLoginPage(nonce, "That token is not valid.").toString(), 401, nonce);
  }
  return redirect("/dashboard", { "Set-Cookie": await sessionCookie(c.env, c.req.url, account) });
});

pageRoutes.post("/logout", (c) => {
  if (!sameOrigin(c.req.raw)) return c.text("Forbidden: cross-site form", 403, securityHeaders(null));
  return redirect("/login", { "Set-Cookie": clearedSessionCookie(c.req.url) });
});

pageRoutes.get("/dashboard", async (c) => {
  const account = await sessionAccount(c.env, c.req.raw);
  if (!account) return redirect("/login");
  const index = c.env.ACCOUNT.get(c.env.ACCOUNT.idFromName(account));
  const rows = await index.dashboardRows();
  let shown: ShownLink | null = null;
  const shownId = c.req.query("shown") ?? "";
  if (isWorkflowId(shownId)) {
    const result = await workflowStub(c.env, shownId).shareLink(account);
    if (result.ok) shown = { workflowId: shownId, info: result.value, url: shareUrl(c, result.value) };
  }
  const nonce = newNonce();
  return htmlResponse(await renderDashboard(nonce, account, rows, shown).toString(), 200, nonce);
});

pageRoutes.post("/dashboard/workflows/:id/share", async (c) => {
  if (!sameOrigin(c.req.raw)) return c.text("Forbidden: cross-site form", 403, securityHeaders(null));
  const account = await sessionAccount(c.env, c.req.raw);
  if (!account) return redirect("/login");
  const id = c.req.param("id");
  if (!isWorkflowId(id)) return c.text("no such workflow", 404, securityHeaders(null));
  const form = await c.req.parseBody();
  const request = parseShareRequest(form.action, form.expires_in_seconds);
  if (typeof request === "string") return c.text(request, 400, securityHeaders(null));
  const result = await workflowStub(c.env, id).manageShare(account, request.action, request.expiresInSeconds);
  if (!result.ok) return c.text(result.message, result.code === "NOT_FOUND" ? 404 : 400, securityHeaders(null));
  // Rotation shows the new link straight away; the other actions return to the row.
  return redirect(request.action === "revoke" ? `/dashboard#${id}` : `/dashboard?shown=${id}#${id}`);
});
