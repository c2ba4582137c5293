/**
 * @module routes/shared-pages
 * Shared workflow pages (/s/:token…), sign-in (/login, /logout), the share forms of the
 * dashboard and the share-management JSON API (/api/workflows/:id/share). Mounted by
 * src/index.ts; the owner's dashboard and workflow pages (owner-pages.ts) are mounted here.
 *
 * Access rules: a share token reads one workflow (page, exports, live socket) and nothing
 * else, and it is verified here (HMAC) before any Durable Object is touched; whether the
 * link is still active is the workflow object's answer. The dashboard needs a session
 * cookie, the JSON API a bearer token (src/http/require-account.ts). Forms pass hono/csrf.
 */
import { type Context, Hono } from "hono";
import { z } from "zod";
import { allows } from "../domain/access-scopes";
import type { ShareInfo } from "../domain/share-status";
import { shareSecret, verifiedShareWorkflow } from "../domain/share-token";
import type { Reader, WorkflowHead } from "../domain/view";
import { notFound } from "../errors";
import { apiError } from "../http/api-errors";
import { authenticateToken, clientOf, failedAttemptWithinBudget } from "../http/bearer-tokens";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import { currentSession, endSession, sessionCookie } from "../http/session";
import type { AppEnv } from "../http/types";
import { formBody, jsonBody } from "../http/validate";
import { isWorkflowId } from "../ids";
import { takeReturnPath } from "../oauth/return-path";
import { renderLoginPage } from "../pages/dashboard";
import { agentTraceExport } from "../pages/export-agent-trace";
import { exportSigning, jsonExport } from "../pages/export-json";
import { markdownExport, signingNote } from "../pages/markdown";
import { renderGonePage, workflowPage } from "../pages/page";
import { pageBlocks } from "../pages/page-reads";
import { textStream } from "../pages/text-stream";
import { currentKeyId } from "../signing";
import { accountStub, workflowStub } from "../stubs";
import { CLIENT_HEADER, SHARE_TOKEN_HEADER, type WorkflowObject } from "../workflow/workflow-object";
import { applyShareForm, dashboardWriter, formCsrf, nonceOf, shareRequest, shareUrl } from "./forms";
import { ownerRoutes } from "./owner-pages";
import { answerFilesPage, answerPage, BAD_AFTER, BAD_FROM, filesFrom, pageQuery, timelineAfter } from "./page-answers";
import { overBudget, type ReadKind, withinReadBudget } from "./read-budget";

type Ctx = Context<AppEnv>;

export const pageRoutes = new Hono<AppEnv>();

for (const path of ["/s/*", "/login", "/logout", "/dashboard", "/dashboard/*"]) pageRoutes.use(path, noStore);
pageRoutes.use("/api/workflows/*", noStore, dataHeaders);

// ── Shared pages ────────────────────────────────────────────────────────────

/** The workflow of a genuine share token (HMAC checked, no storage touched), or null. */
async function verifiedWorkflow(c: Ctx): Promise<string | null> {
  return verifiedShareWorkflow(await shareSecret(c.env), c.req.param("token") ?? "");
}

const gonePage = (c: Ctx, status: 404 | 410) => c.html(renderGonePage(nonceOf(c)), status);

type SharedHead =
  | { ok: true; stub: DurableObjectStub<WorkflowObject>; reader: Reader; head: WorkflowHead }
  | { ok: false; response: Response };

/**
 * The start of every shared read: the token's workflow (HMAC checked, no storage touched), the
 * read charged to the client's and the link's budgets, then the head the object gives this token
 * (it re-checks the token on every page after it); or the answer to give instead.
 */
async function sharedHead(c: Ctx, kind: ReadKind, gone: (status: 404 | 410) => Response | Promise<Response>): Promise<SharedHead> {
  const workflowId = await verifiedWorkflow(c);
  if (!workflowId) return { ok: false, response: await gone(404) };
  if (!(await withinReadBudget(c, workflowId, kind))) return { ok: false, response: overBudget(c, kind) };
  const stub = workflowStub(c.env, workflowId);
  const reader = { share_token: c.req.param("token") ?? "" };
  const head = await stub.readHead(reader, false);
  if (head.ok) return { ok: true, stub, reader, head: head.value };
  return { ok: false, response: await gone(head.code === "UNAUTHORIZED" ? 410 : 404) };
}

const goneText = (c: Ctx) => (status: 404 | 410) => c.text("This workflow is no longer shared.", status);
const gonePageFor = (c: Ctx) => (status: 404 | 410) => gonePage(c, status);

/** The page, one page of its timeline (`?after=<cursor>`) rendered or recalled (agent text's bidi controls shown as code points). */
pageRoutes.get("/s/:token", pageHeaders, async (c) => {
  const after = timelineAfter(c);
  if (after === undefined) return c.text(BAD_AFTER, 400);
  const shared = await sharedHead(c, "page", gonePageFor(c));
  if (!shared.ok) return shared.response;
  const base = `/s/${c.req.param("token")}`;
  return answerPage(c, async () => {
    const blocks = await pageBlocks(shared.stub, shared.reader, shared.head, { base, after, signingKey: await currentKeyId(c.env) });
    return workflowPage(shared.head, blocks.markup, { nonce: nonceOf(c), base, query: pageQuery(after) });
  });
});

/** The page's blocks rendered now: the live page swaps them in after events (one renderer for both). */
pageRoutes.get("/s/:token/blocks", dataHeaders, async (c) => {
  const after = timelineAfter(c);
  if (after === undefined) return c.text(BAD_AFTER, 400);
  const shared = await sharedHead(c, "page", goneText(c));
  if (!shared.ok) return shared.response;
  const base = `/s/${c.req.param("token")}`;
  return answerPage(
    c,
    async () => (await pageBlocks(shared.stub, shared.reader, shared.head, { base, after, signingKey: await currentKeyId(c.env) })).markup,
    {
      "Waymark-Seq": String(shared.head.last_seq),
    },
  );
});

/** Every file of one task, FILES_PAGE at a time: what its card on the page leaves out. */
pageRoutes.get("/s/:token/files/:taskId", pageHeaders, async (c) => {
  const from = filesFrom(c);
  if (from === undefined) return c.text(BAD_FROM, 400);
  const shared = await sharedHead(c, "page", gonePageFor(c));
  if (!shared.ok) return shared.response;
  const base = `/s/${c.req.param("token")}`;
  return answerFilesPage(c, shared.stub, shared.reader, shared.head, base, from);
});

/** The workflow with its whole event log and hash chain, streamed: `waymark verify` checks it offline. */
pageRoutes.get("/s/:token/export.json", dataHeaders, async (c) => {
  const shared = await sharedHead(c, "export", gonePageFor(c));
  if (!shared.ok) return shared.response;
  return c.body(textStream(jsonExport(shared.stub, shared.reader, shared.head, exportSigning(c.env, new URL(c.req.url).origin))), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
});

/**
 * One Agent Trace record per task that committed work. Each links its task on the owner's page,
 * never this share link: records end up in repositories and reviews, and the link would give
 * whoever reads them the workflow (the Markdown export leaves it out for the same reason).
 */
pageRoutes.get("/s/:token/export.agent-trace.json", dataHeaders, async (c) => {
  const shared = await sharedHead(c, "export", gonePageFor(c));
  if (!shared.ok) return shared.response;
  const page = `${new URL(c.req.url).origin}/w/${shared.head.workflow.id}`;
  return c.body(textStream(agentTraceExport(shared.stub, shared.reader, shared.head, page)), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
});

pageRoutes.get("/s/:token/export.md", dataHeaders, async (c) => {
  const shared = await sharedHead(c, "export", gonePageFor(c));
  if (!shared.ok) return shared.response;
  return c.body(
    textStream(markdownExport(shared.stub, shared.reader, shared.head, await signingNote(c.env, new URL(c.req.url).origin))),
    200,
    {
      "Content-Type": "text/markdown; charset=utf-8",
    },
  );
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
      // Live pages are capped per client, counted as the login limiter counts them (an IPv6 /64 is one client).
      [CLIENT_HEADER]: clientOf(c.env, c.req.raw) ?? "local",
    },
  });
  return workflowStub(c.env, workflowId).fetch(live);
});

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

pageRoutes.post("/dashboard/workflows/:id/share", formCsrf, dashboardWriter, formBody(shareRequest), async (c) => {
  const id = c.req.param("id");
  const request = c.req.valid("form");
  const refused = await applyShareForm(c, request);
  if (refused) return refused;
  // Rotation shows the new link straight away; the other actions return to the row.
  return c.redirect(request.action === "revoke" ? `/dashboard#${id}` : `/dashboard?shown=${id}#${id}`, 303);
});

pageRoutes.route("/", ownerRoutes);
