/**
 * @module routes/read-budget
 * What a reader may read per minute, charged in an order that keeps one client from spending what
 * other readers of the same link or workflow get:
 *   1. the reader's own budget, before anything is read: a share link's client (PAGE_CLIENT_LIMITER
 *      per 10 s for the page, its live blocks and a task's files page; EXPORT_LIMITER for exports,
 *      which read the whole workflow), or a read token's account (EXPORT_LIMITER);
 *   2. then the workflow object checks the share token, and only a live one goes on to
 *   3. the link's budget: for an export, first the client's share of this one link
 *      (EXPORT_SHARE_LIMITER, below the link's budget), then the link's (EXPORT_LIMITER); for a page,
 *      the link's (PAGE_LINK_LIMITER, above what one client's own budget lets it spend).
 * A refusal at one step charges nothing after it: a client over its own budget, or holding a
 * revoked, rotated or expired link, costs the link nothing, so rotating a link ends what its old
 * holders could do to its readers. Numbers are in wrangler.toml and docs/limits.md. The client is
 * the sign-in limiter's (`clientOf`: CF-Connecting-IP where Cloudflare sets it); a request without
 * one came from inside the deployment (tests, service bindings) and is charged to the link only.
 * The owner's own pages are not limited: a session is an account's, not an anonymous reader's.
 */
import type { Context } from "hono";
import { apiError, RETRY_HEADERS } from "../http/api-errors";
import { clientOf } from "../http/bearer-tokens";
import type { AppEnv } from "../http/types";

type Ctx = Context<AppEnv>;

export type ReadKind = "page" | "export";

/** Seconds a refused reader is told to wait: a client's page budget is counted per 10 s, exports per minute. */
const RETRY_AFTER_SECONDS: Record<ReadKind, number> = { page: 10, export: 60 };

/** Charges one read to each limiter in turn, stopping at the first refusal (a missing binding: no limit). */
async function chargeInTurn(charges: [RateLimit | undefined, string][]): Promise<boolean> {
  for (const [limiter, key] of charges) {
    if (limiter && !(await limiter.limit({ key })).success) return false;
  }
  return true;
}

/** Step 1 for a share link's reader: whether this read is within its client's own budget. */
export async function withinClientBudget(c: Ctx, kind: ReadKind): Promise<boolean> {
  const client = clientOf(c.env, c.req.raw);
  if (client === null) return true;
  return chargeInTurn([[kind === "export" ? c.env.EXPORT_LIMITER : c.env.PAGE_CLIENT_LIMITER, `client:${client}`]]);
}

/** Step 3, once the object has found the share token live: the client's share of this link, then the link. */
export async function withinLinkBudget(c: Ctx, workflowId: string, kind: ReadKind): Promise<boolean> {
  const link = `link:${workflowId}`;
  if (kind === "page") return chargeInTurn([[c.env.PAGE_LINK_LIMITER, link]]);
  const client = clientOf(c.env, c.req.raw);
  return chargeInTurn([
    ...(client === null ? [] : ([[c.env.EXPORT_SHARE_LIMITER, `${link}:client:${client}`]] as [RateLimit, string][])),
    [c.env.EXPORT_LIMITER, link],
  ]);
}

/** A share link's read over budget: plain text (the live client waits Retry-After, a person reads it). */
export function overBudget(c: Ctx, kind: ReadKind): Response {
  const seconds = RETRY_AFTER_SECONDS[kind];
  return c.text(`QUOTA_EXCEEDED: too many reads of this shared workflow; wait ${seconds} seconds and reload`, 429, {
    "Retry-After": String(seconds),
  });
}

/** A read token's export: charged to its account's export budget (a script reads the whole workflow each time); the refusal, or null. */
export async function accountExportRefusal(c: Ctx, account: string): Promise<Response | null> {
  if (await chargeInTurn([[c.env.EXPORT_LIMITER, `account:${account}`]])) return null;
  return apiError(c, "RATE_LIMITED", "too many exports by this account; wait a minute and retry", RETRY_HEADERS);
}
