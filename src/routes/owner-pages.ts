/**
 * @module routes/owner-pages
 * The owner's pages, all behind the dashboard session (src/http/session.ts):
 *   GET  /dashboard?q=&path=&status=&review=1&page=   workflows, searched, filtered, paged; totals; settings
 *   POST /dashboard/settings                           share_new_workflows
 *   GET  /w/:id                                        the owner view of one workflow, whatever its share link's state
 *   GET  /w/:id/blocks | export.json | export.md | export.agent-trace.json | ws  what the live page and its links fetch
 *   POST /w/:id/share                                  create, rotate, expire or revoke the share link
 *   POST /w/:id/feedback                               a comment or verdict for the agent
 *
 * The live socket follows the share link's contract with the owner's credentials instead of a
 * token: the Worker verifies the session, then calls the workflow object's `fetch` with a fixed
 * internal URL and the headers `Waymark-Owner-Account` and `Waymark-Owner-Session`; the object
 * checks that the account owns the workflow and that the session is open (it asks the account's
 * object), and never looks at the browser's URL.
 */
import { type Context, Hono } from "hono";
import { html } from "hono/html";
import { z } from "zod";
import type { DashboardQuery } from "../account/account-object";
import { authorOf } from "../account/credentials";
import { allows } from "../domain/access-scopes";
import type { FeedbackTarget, WorkflowHead } from "../domain/view";
import { clientOf } from "../http/bearer-tokens";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import { currentSession } from "../http/session";
import type { AppEnv } from "../http/types";
import { formBody } from "../http/validate";
import { isWorkflowId } from "../ids";
import { LIMITS } from "../limits";
import { type DashboardFilters, layout, renderDashboard, type ShownLink } from "../pages/dashboard";
import { agentTraceExport } from "../pages/export-agent-trace";
import { exportSigning, jsonExport } from "../pages/export-json";
import { revealBidiControls } from "../pages/format";
import { markdownExport, signingNote } from "../pages/markdown";
import { type OwnerHead, ownerPage } from "../pages/owner-view";
import { pageBlocks } from "../pages/page-reads";
import { textStream } from "../pages/text-stream";
import { currentKeyId } from "../signing";
import { accountStub, workflowStub } from "../stubs";
import { CLIENT_HEADER, OWNER_ACCOUNT_HEADER, OWNER_SESSION_HEADER } from "../workflow/workflow-object";
import { applyShareForm, dashboardAdmin, dashboardReader, dashboardWriter, formCsrf, nonceOf, shareRequest, shareUrl } from "./forms";
import { answerFilesPage, answerPage, BAD_AFTER, BAD_FROM, filesFrom, pageQuery, timelineAfter } from "./page-answers";

type Ctx = Context<AppEnv>;

/** What every owner request for a workflow that is not the signed-in account's (or without a session) answers. */
const notOwned = (c: Ctx) => c.text("No such workflow in this account, or you are signed out.", 404);

export const ownerRoutes = new Hono<AppEnv>();

for (const path of ["/dashboard", "/dashboard/*", "/w/*"]) ownerRoutes.use(path, noStore);

/** User text in a query or form: well-formed, no control characters (a NUL would reach SQLite). */
const plainText = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .refine((q) => q.isWellFormed() && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(q), {
      error: "must be text without control characters",
    });

const dashboardQuery = z.object({
  q: plainText(LIMITS.SEARCH_QUERY).optional(),
  path: plainText(LIMITS.PATH_QUERY).optional(),
  status: z.enum(["", "active", "success", "partial_success", "failed"], { error: "must be a workflow status" }).optional(),
  review: z.enum(["", "1"], { error: 'must be "1" or empty' }).optional(),
  page: z
    .string()
    .regex(/^\d{1,6}$/, { error: "must be a whole number ≥ 0" })
    .optional(),
});

/** Agent text on pages: bidi controls become visible code points (the markup itself has none). */
const shown = async (rendered: PromiseLike<unknown> | unknown) => revealBidiControls(String(await rendered));

const missingPage = (c: Ctx) =>
  c.html(
    layout(nonceOf(c), "Not found", html`<h1>No such workflow in this account</h1><p><a href="/dashboard">All workflows</a></p>`),
    404,
  );

ownerRoutes.get("/dashboard", pageHeaders, dashboardReader, async (c) => {
  const parsed = dashboardQuery.safeParse(c.req.query());
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return c.text(`${issue?.path.join(".") ?? "query"}: ${issue?.message ?? "is not valid"}`, 400);
  }
  const q = parsed.data;
  const filters: DashboardFilters = {
    q: q.q?.trim() ?? "",
    path: q.path?.trim() ?? "",
    status: q.status ?? "",
    review: q.review === "1",
    page: Number(q.page ?? "0"),
  };
  const query: DashboardQuery = {
    text: filters.q || undefined,
    // The path box finds the exact path and everything under it.
    path: filters.path || undefined,
    prefix: true,
    status: (filters.status || undefined) as DashboardQuery["status"],
    needs_review: filters.review,
    page: filters.page,
  };
  const account = accountStub(c.env, c.var.account);
  const [page, totals, settings] = await Promise.all([account.dashboardPage(query), account.totals(), account.settings()]);
  let link: ShownLink | null = null;
  const shownId = c.req.query("shown") ?? "";
  if (isWorkflowId(shownId)) {
    const result = await workflowStub(c.env, shownId).shareLink(c.var.account);
    if (result.ok) link = { workflowId: shownId, info: result.value, url: shareUrl(c, result.value) };
  }
  return c.html(await shown(renderDashboard(nonceOf(c), { account: c.var.account, page, totals, settings, filters, shown: link })));
});

const settingsForm = z.object({ share_new_workflows: z.literal("on", { error: 'must be "on" or absent' }).optional() });

ownerRoutes.post("/dashboard/settings", formCsrf, dashboardAdmin, formBody(settingsForm), async (c) => {
  await accountStub(c.env, c.var.account).updateSettings({ share_new_workflows: c.req.valid("form").share_new_workflows === "on" });
  return c.redirect("/dashboard#settings", 303);
});

// ── One workflow ────────────────────────────────────────────────────────────

/** A head the owner read: the share link's state and the feedback are always there. */
const ownerHead = (head: WorkflowHead): OwnerHead | null =>
  head.share ? { ...head, share: head.share, feedback: head.feedback ?? [] } : null;

/** The owner view, one page of its timeline (`?after=<cursor>`), rendered or recalled. */
ownerRoutes.get("/w/:id", pageHeaders, dashboardReader, async (c) => {
  const id = c.req.param("id");
  const after = timelineAfter(c);
  if (after === undefined) return c.text(BAD_AFTER, 400);
  if (!isWorkflowId(id)) return missingPage(c);
  const stub = workflowStub(c.env, id);
  const read = await stub.readHead(c.var.account, true);
  const head = read.ok ? ownerHead(read.value) : null;
  if (!head) return missingPage(c);
  const on = c.req.query("on") ?? null;
  const base = `/w/${id}`;
  return answerPage(c, async () => {
    const blocks = await pageBlocks(stub, c.var.account, head, {
      base,
      after,
      reviewBase: base,
      selected: on,
      signingKey: await currentKeyId(c.env),
    });
    return ownerPage(head, blocks, { nonce: nonceOf(c), shareUrl: shareUrl(c, head.share), on, query: pageQuery(after) });
  });
});

/**
 * What the live page fetches. Without a session this answers 404 rather than redirecting: the
 * live client must not swap the sign-in page in as the workflow's blocks.
 */
ownerRoutes.get("/w/:id/blocks", dataHeaders, async (c) => {
  const after = timelineAfter(c);
  if (after === undefined) return c.text(BAD_AFTER, 400);
  const owned = await ownedHead(c);
  const head = owned ? ownerHead(owned.head) : null;
  if (!owned || !head) return notOwned(c);
  const base = `/w/${head.workflow.id}`;
  return answerPage(
    c,
    async () =>
      (await pageBlocks(owned.stub, owned.reader, head, { base, after, reviewBase: base, signingKey: await currentKeyId(c.env) })).markup,
    {
      "Waymark-Seq": String(head.last_seq),
    },
  );
});

/** Every file of one task, FILES_PAGE at a time. */
ownerRoutes.get("/w/:id/files/:taskId", pageHeaders, async (c) => {
  const from = filesFrom(c);
  if (from === undefined) return c.text(BAD_FROM, 400);
  const owned = await ownedHead(c);
  if (!owned) return missingPage(c);
  return answerFilesPage(c, owned.stub, owned.reader, owned.head, `/w/${owned.head.workflow.id}`, from);
});

/** The exports' start: the head the owner reads (with the feedback), then the body streams page by page. */
async function ownedHead(c: Ctx) {
  const session = await currentSession(c);
  const id = c.req.param("id") ?? "";
  if (!session || !allows(session.scopes, "read") || !isWorkflowId(id)) return null;
  const stub = workflowStub(c.env, id);
  const head = await stub.readHead(session.account, true);
  return head.ok ? { stub, reader: session.account, head: head.value } : null;
}

ownerRoutes.get("/w/:id/export.json", dataHeaders, async (c) => {
  // Like the shared export: with the event log, so the hash chain can be verified.
  const owned = await ownedHead(c);
  if (!owned) return notOwned(c);
  return c.body(textStream(jsonExport(owned.stub, owned.reader, owned.head, exportSigning(c.env, new URL(c.req.url).origin))), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
});

/** One Agent Trace record per task that committed work, linked to this page. */
ownerRoutes.get("/w/:id/export.agent-trace.json", dataHeaders, async (c) => {
  const owned = await ownedHead(c);
  if (!owned) return notOwned(c);
  const page = `${new URL(c.req.url).origin}/w/${owned.head.workflow.id}`;
  return c.body(textStream(agentTraceExport(owned.stub, owned.reader, owned.head, page)), 200, {
    "Content-Type": "application/json; charset=utf-8",
  });
});

ownerRoutes.get("/w/:id/export.md", dataHeaders, async (c) => {
  const owned = await ownedHead(c);
  if (!owned) return notOwned(c);
  return c.body(
    textStream(markdownExport(owned.stub, owned.reader, owned.head, await signingNote(c.env, new URL(c.req.url).origin))),
    200,
    { "Content-Type": "text/markdown; charset=utf-8" },
  );
});

const afterQuery = z
  .string()
  .regex(/^\d{1,15}$/)
  .optional();

ownerRoutes.get("/w/:id/ws", async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") return c.text("expected a WebSocket upgrade", 426);
  const after = afterQuery.safeParse(c.req.query("after"));
  if (!after.success) return c.text("after: must be a whole number ≥ 0", 400);
  const session = await currentSession(c);
  const id = c.req.param("id");
  if (!session || !allows(session.scopes, "read") || !isWorkflowId(id)) return notOwned(c);
  const live = new Request(`https://workflow.internal/live?after=${after.data ?? "0"}`, {
    headers: {
      Upgrade: "websocket",
      [OWNER_ACCOUNT_HEADER]: session.account,
      [OWNER_SESSION_HEADER]: session.id,
      [CLIENT_HEADER]: clientOf(c.env, c.req.raw) ?? "local",
    },
  });
  return workflowStub(c.env, id).fetch(live);
});

ownerRoutes.post("/w/:id/share", formCsrf, dashboardWriter, formBody(shareRequest), async (c) => {
  const refused = await applyShareForm(c, c.req.valid("form"));
  return refused ?? c.redirect(`/w/${c.req.param("id")}#share`, 303);
});

const TARGET = /^(workflow|task|decision|issue):([A-Za-z0-9_-]{1,64})$/;

const feedbackForm = z.object({
  target: z.string({ error: "is required" }).regex(TARGET, { error: "must name the workflow, a task, a decision or an issue" }),
  verdict: z.enum(["comment", "approved", "changes_requested"], { error: 'must be "comment", "approved" or "changes_requested"' }),
  body: plainText(LIMITS.FEEDBACK_TEXT).refine((b) => b.trim() !== "", { error: "must not be empty" }),
});

ownerRoutes.post("/w/:id/feedback", formCsrf, dashboardWriter, formBody(feedbackForm), async (c) => {
  const id = c.req.param("id");
  if (!isWorkflowId(id)) return c.text("no such workflow", 404);
  const form = c.req.valid("form");
  const [, target, targetId] = TARGET.exec(form.target) ?? [];
  // The page: a person signed in to the dashboard posted it (the one channel whose verdicts count).
  const result = await workflowStub(c.env, id).addFeedback(c.var.account, {
    target: target as FeedbackTarget,
    target_id: targetId ?? "",
    verdict: form.verdict,
    body: form.body.trim(),
    author: authorOf(c.var.principal, "session"),
    channel: "page",
  });
  if (!result.ok) return c.text(result.message, result.code === "NOT_FOUND" ? 404 : 400);
  return c.redirect(`/w/${id}#${result.value.id}`, 303);
});
