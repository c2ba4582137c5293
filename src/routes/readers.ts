/**
 * @module routes/readers
 * Who reads a workflow, for every route of the workflow reads (./workflow-reads.ts): one
 * middleware resolves the reader, in the way of the mount the request came in through.
 *   share link  /s/:token            anyone holding a live link: the token's MAC is checked before any
 *                                    storage is touched, the workflow object decides whether the link
 *                                    is still active; a link holds the `read` scope of its one workflow
 *   owner       /w/:id               the signed-in owner: a dashboard session (the principal middleware)
 *   read token  /api/workflows/:id   a bearer token, or the owner's session: what CI and `waymark verify` read
 * Every route's action (a row of the access matrix, src/domain/access-scopes.ts) is checked against
 * what the reader holds: a session's or token's scopes in the principal middleware
 * (src/http/require-account.ts), a share link's `SHARE_LINK_SCOPES` here. Then the budgets are
 * charged in read-budget.ts's order (the reader's own; the token checked by the object; the link's),
 * and the head this reader may read is read. A refusal answers in the mount's language: a share link's
 * "no longer shared" (404, or 410 for a revoked or expired link), the owner's "no such workflow"
 * (or the sign-in page), the API's `{code, message}`.
 */
import type { Context, MiddlewareHandler } from "hono";
import { html } from "hono/html";
import { type Action, SHARE_LINK_SCOPES, scopeMissing } from "../domain/access-scopes";
import { shareSecret, verifiedShareWorkflow } from "../domain/share-token";
import type { Reader, WorkflowHead } from "../domain/view";
import { apiError } from "../http/api-errors";
import { type PrincipalOptions, requireAccount } from "../http/require-account";
import type { AppEnv } from "../http/types";
import { isWorkflowId } from "../ids";
import { layout } from "../pages/dashboard";
import { renderGonePage } from "../pages/page";
import { workflowStub } from "../stubs";
import { OWNER_ACCOUNT_HEADER, OWNER_SESSION_HEADER, SHARE_TOKEN_HEADER, type WorkflowObject } from "../workflow/workflow-object";
import { nonceOf } from "./forms";
import { accountExportRefusal, overBudget, type ReadKind, withinClientBudget, withinLinkBudget } from "./read-budget";

/** One read of a workflow, as the reader middleware needs to know it. */
export interface WorkflowRead {
  /** The row of the access matrix the reader must be allowed. */
  action: Action;
  /** The budget it is charged to; null: none (the live socket is capped per client by the workflow object). */
  budget: ReadKind | null;
  /** Whether it renders from the workflow's head; the live socket only opens the object's feed. */
  head: boolean;
  /**
   * What a person or script gets: the workflow's page (a signed-out owner is sent to sign in),
   * another HTML document, an export, or data the live page fetches.
   */
  form: "page" | "document" | "export" | "data";
}

export type ReaderKind = "share" | "owner" | "token";

/** The reader a request resolved to, for the handler of its read. */
export interface WorkflowReader {
  kind: ReaderKind;
  workflowId: string;
  stub: DurableObjectStub<WorkflowObject>;
  /** Who the object reads for: the account, or the share token (which it checks again on every page). */
  as: Reader;
  /** The head this reader reads; null for a read without one (the live socket). */
  head: WorkflowHead | null;
  /** Where the page's own links start: /s/<token> or /w/<id>. */
  base: string;
  /** The headers that tell the workflow object who opens its live feed (it checks them itself). */
  live: Record<string, string>;
}

/** The environment of the workflow reads: the app's, and the reader the middleware resolved. */
export type ReadsEnv = { Bindings: AppEnv["Bindings"]; Variables: AppEnv["Variables"] & { reader?: WorkflowReader } };

type Ctx = Context<ReadsEnv>;

type Resolved = WorkflowReader | Response | Promise<Response>;
type Resolver = (c: Ctx) => Promise<Resolved>;

/** The principal middleware's verdict for `options`: null when it let the request through (c.var holds the principal), else its answer. */
function principalCheck(options: PrincipalOptions): (c: Ctx) => Promise<Response | null> {
  const middleware = requireAccount(options);
  return async (c) => {
    let through = false;
    const answer = await middleware(c, async () => {
      through = true;
    });
    if (through) return null;
    return answer ?? c.text("refused", 403);
  };
}

// ── Share links ─────────────────────────────────────────────────────────────

/** A share link's "no longer shared": a page for what a person opened, text for the live page's fetches. */
function goneAnswer(c: Ctx, read: WorkflowRead, status: 404 | 410): Response | Promise<Response> {
  if (read.form === "data") return c.text("This workflow is no longer shared.", status);
  return c.html(renderGonePage(nonceOf(c)), status);
}

const shareLinkResolver =
  (read: WorkflowRead): Resolver =>
  async (c) => {
    const token = c.req.param("token") ?? "";
    const gone = (status: 404 | 410) => goneAnswer(c, read, status);
    // A genuine token of this deployment, or nothing is touched (no storage, no budget).
    const workflowId = await verifiedShareWorkflow(await shareSecret(c.env), token);
    if (!workflowId || scopeMissing(SHARE_LINK_SCOPES, read.action)) return gone(404);
    const stub = workflowStub(c.env, workflowId);
    const reader: WorkflowReader = {
      kind: "share",
      workflowId,
      stub,
      as: { share_token: token },
      head: null,
      base: `/s/${token}`,
      live: { [SHARE_TOKEN_HEADER]: token },
    };
    if (!read.head) return reader;
    if (read.budget && !(await withinClientBudget(c, read.budget))) return overBudget(c, read.budget);
    // The object checks the token (revoked, rotated, expired) before anything is charged to the link.
    const head = await stub.readHead(reader.as, false);
    if (!head.ok) return gone(head.code === "UNAUTHORIZED" ? 410 : 404);
    if (read.budget && !(await withinLinkBudget(c, workflowId, read.budget))) return overBudget(c, read.budget);
    return { ...reader, head: head.value };
  };

// ── The owner ───────────────────────────────────────────────────────────────

const notOwned = (c: Ctx) => c.text("No such workflow in this account, or you are signed out.", 404);

const missingPage = (c: Ctx) =>
  c.html(
    layout(nonceOf(c), "Not found", html`<h1>No such workflow in this account</h1><p><a href="/dashboard">All workflows</a></p>`),
    404,
  );

/** The owner's refusals: the page sends a signed-out owner to sign in; what it fetches answers 404, never the sign-in page the live client would swap in. */
function ownerAnswers(read: WorkflowRead) {
  const missing = (c: Ctx) => (read.form === "page" || read.form === "document" ? missingPage(c) : notOwned(c));
  const session = principalCheck({
    bearer: false,
    session: true,
    action: read.action,
    otherwise: read.form === "page" ? "login" : missing,
  });
  return { missing, session };
}

function ownerResolver(read: WorkflowRead): Resolver {
  const answers = ownerAnswers(read);
  return async (c) => {
    const refused = await answers.session(c);
    if (refused) return refused;
    const account = c.var.account;
    const id = c.req.param("id") ?? "";
    const missing = () => answers.missing(c);
    if (!isWorkflowId(id)) return missing();
    const stub = workflowStub(c.env, id);
    const live = { [OWNER_ACCOUNT_HEADER]: account, [OWNER_SESSION_HEADER]: c.var.session?.id ?? "" };
    const reader: WorkflowReader = { kind: "owner", workflowId: id, stub, as: account, head: null, base: `/w/${id}`, live };
    if (!read.head) return reader;
    const head = await stub.readHead(account, true);
    // The owner's read always carries the share link's state (the owner view shows it).
    return head.ok && head.value.share ? { ...reader, head: head.value } : missing();
  };
}

// ── Read tokens ─────────────────────────────────────────────────────────────

function tokenResolver(read: WorkflowRead): Resolver {
  const principal = principalCheck({ bearer: true, session: true, otherwise: "json", action: read.action });
  return async (c) => {
    const refused = await principal(c);
    if (refused) return refused;
    const account = c.var.account;
    const id = c.req.param("id") ?? "";
    const missing = () => apiError(c, "NOT_FOUND", `workflow_id: no workflow ${id} in this account`);
    // The token was checked above: its account pays for what it asks, found or not.
    if (read.budget === "export") {
      const overBudget = await accountExportRefusal(c, account);
      if (overBudget) return overBudget;
    }
    if (!isWorkflowId(id)) return missing();
    const stub = workflowStub(c.env, id);
    const reader: WorkflowReader = { kind: "token", workflowId: id, stub, as: account, head: null, base: `/w/${id}`, live: {} };
    if (!read.head) return reader;
    const head = await stub.readHead(account, true);
    if (!head.ok) return head.code === "NOT_FOUND" ? missing() : apiError(c, head.code, head.message);
    return { ...reader, head: head.value };
  };
}

/**
 * The one reader middleware: resolves a reader of `kind` (the mount's), authorises `read`'s action,
 * charges the budgets and reads the head, then hands the reader to the route's handler (`c.var.reader`).
 */
export function readerOf(kind: ReaderKind, read: WorkflowRead): MiddlewareHandler<ReadsEnv> {
  const resolve = { share: shareLinkResolver, owner: ownerResolver, token: tokenResolver }[kind](read);
  return async (c, next) => {
    const resolved = await resolve(c);
    if (resolved instanceof Response) return resolved;
    c.set("reader", resolved);
    await next();
  };
}
