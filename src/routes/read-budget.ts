/**
 * @module routes/read-budget
 * What one holder of a share link may read per minute: the shared page, its live blocks and a
 * task's files page count against the client's budget (PAGE_CLIENT_LIMITER, per 10 s: an IPv4
 * address or an IPv6 /64, as the sign-in limiter groups them) and the link's (PAGE_LINK_LIMITER: every
 * holder of one workflow's link together); an export, which reads the whole workflow, against
 * EXPORT_LIMITER for both. Numbers are in wrangler.toml. The client is the sign-in limiter's
 * (`clientOf`: CF-Connecting-IP where Cloudflare sets it); a request without one came from inside
 * the deployment (tests, service bindings) and is charged to the link only.
 * The owner's own pages are not limited: a session is an account's, not an anonymous reader's.
 */
import type { Context } from "hono";
import { clientOf } from "../http/bearer-tokens";
import type { AppEnv } from "../http/types";

export type ReadKind = "page" | "export";

/** Seconds a refused reader is told to wait: a client's page budget is counted per 10 s, exports per minute. */
const RETRY_AFTER_SECONDS: Record<ReadKind, number> = { page: 10, export: 60 };

/** Whether this read of `workflowId` is within the client's and the link's budgets (each read is charged to both). */
export async function withinReadBudget(c: Context<AppEnv>, workflowId: string, kind: ReadKind): Promise<boolean> {
  const client = clientOf(c.env, c.req.raw);
  const [clientLimiter, linkLimiter] =
    kind === "export" ? [c.env.EXPORT_LIMITER, c.env.EXPORT_LIMITER] : [c.env.PAGE_CLIENT_LIMITER, c.env.PAGE_LINK_LIMITER];
  const checks = [linkLimiter?.limit({ key: `link:${workflowId}` })];
  if (client !== null) checks.push(clientLimiter?.limit({ key: `client:${client}` }));
  const outcomes = await Promise.all(checks);
  return outcomes.every((outcome) => outcome === undefined || outcome.success);
}

/** The answer to a read over budget: plain text (the live client waits Retry-After, a person reads it). */
export function overBudget(c: Context<AppEnv>, kind: ReadKind): Response {
  const seconds = RETRY_AFTER_SECONDS[kind];
  return c.text(`QUOTA_EXCEEDED: too many reads of this shared workflow; wait ${seconds} seconds and reload`, 429, {
    "Retry-After": String(seconds),
  });
}
