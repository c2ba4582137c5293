/**
 * @module routes/owner-pages
 * The owner's pages, all behind the dashboard session (src/http/session.ts) and the access matrix
 * (the principal middleware, src/http/require-account.ts, through ./forms.ts):
 *   GET  /dashboard?q=&path=&status=&review=1&page=   workflows, searched, filtered, paged; totals; settings
 *   POST /dashboard/settings                           share_new_workflows
 *   POST /w/:id/share                                  create, rotate, expire or revoke the share link
 *   POST /w/:id/feedback                               a comment or verdict for the agent
 * What the owner reads of one workflow under /w/:id (the owner view, its blocks, files pages,
 * exports and live socket) is a workflow read (./workflow-reads.ts), mounted for the owner.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { DashboardQuery } from "../account/account-object";
import { authorOf } from "../domain/credentials";
import type { FeedbackTarget } from "../domain/view";
import { noStore, pageHeaders } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { formBody } from "../http/validate";
import { isWorkflowId } from "../ids";
import { LIMITS } from "../limits";
import { type DashboardFilters, renderDashboard, type ShownLink } from "../pages/dashboard";
import { revealBidiControls } from "../pages/format";
import { accountStub, workflowStub } from "../stubs";
import {
  applyShareForm,
  confirmShareRevocation,
  dashboardAdmin,
  dashboardReader,
  dashboardWriter,
  formCsrf,
  nonceOf,
  shareForm,
  shareUrl,
} from "./forms";

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

// ── One workflow: its forms (its reads are ./workflow-reads.ts) ─────────────

ownerRoutes.post("/w/:id/share", formCsrf, dashboardWriter, formBody(shareForm), async (c) => {
  const form = c.req.valid("form");
  const asked = confirmShareRevocation(c, form, `/w/${c.req.param("id")}#share`);
  if (asked) return asked;
  const refused = await applyShareForm(c, form);
  return refused ?? c.redirect(`/w/${c.req.param("id")}#share`, 303);
});

const TARGET = /^(workflow|task|decision|issue):([A-Za-z0-9_-]{1,64})$/;

const feedbackForm = z
  .object({
    target: z.string({ error: "is required" }).regex(TARGET, { error: "must name the workflow, a task, a decision or an issue" }),
    verdict: z.enum(["comment", "approved", "changes_requested"], { error: 'must be "comment", "approved" or "changes_requested"' }),
    // A verdict may come without words; a comment is its words.
    body: plainText(LIMITS.FEEDBACK_TEXT).default(""),
    /** A file the feedback is about (a Review link in the list of changed files): named at the start of the body. */
    path: plainText(LIMITS.PATH_QUERY).optional(),
  })
  .refine((f) => f.verdict !== "comment" || f.body.trim() !== "", { error: "must not be empty for a comment", path: ["body"] });

/** The page script sends the form in the background and asks for JSON: the answer it shows in place. */
const wantsJson = (accept: string | undefined) => (accept ?? "").includes("application/json");

ownerRoutes.post("/w/:id/feedback", formCsrf, dashboardWriter, formBody(feedbackForm), async (c) => {
  const id = c.req.param("id");
  const json = wantsJson(c.req.header("Accept"));
  if (!isWorkflowId(id)) return json ? c.json({ code: "NOT_FOUND", message: "no such workflow" }, 404) : c.text("no such workflow", 404);
  const form = c.req.valid("form");
  const [, target, targetId] = TARGET.exec(form.target) ?? [];
  const words = form.body.trim();
  const about = form.path ? `On ${form.path}:` : "";
  // The page: a person signed in to the dashboard posted it (the one channel whose verdicts count,
  // unless the session's credential recorded the task under review: workflow/feedback.ts).
  const result = await workflowStub(c.env, id).addFeedback(c.var.account, {
    target: target as FeedbackTarget,
    target_id: targetId ?? "",
    verdict: form.verdict,
    body: about && words ? `${about} ${words}` : about || words,
    author: authorOf(c.var.principal, "session"),
    channel: "page",
    credential: c.var.principal.credential,
  });
  const status = result.ok ? 200 : result.code === "NOT_FOUND" ? 404 : 400;
  if (!result.ok) return json ? c.json({ code: result.code, message: result.message }, status) : c.text(result.message, status);
  if (json) return c.json(result.value, 200);
  return c.redirect(`/w/${id}#${result.value.id}`, 303);
});
