/**
 * @module routes/account-api
 * Account-level JSON API, mounted by src/index.ts:
 *   GET    /api/search?q=…&limit=…   memory search; bearer token or the dashboard's session cookie (read)
 *   GET    /api/workflows?q=&path=&prefix=&status=&needs_review=&page=
 *                                    the owner view's list as JSON (rows, page, account totals); bearer or session (read)
 *   GET    /api/paths?path=…&prefix=…  which tasks changed a file (or anything under a prefix); bearer or session (read)
 *   GET    /api/commits?sha=<id>,<id>…  which tasks made these commits (full ids, at most COMMITS_QUERY): what
 *                                    `waymark ci` asks about a pull request's range; bearer or session (read)
 *   GET    /api/webhooks             webhooks and their delivery status; bearer token (admin)
 *   POST   /api/webhooks             {url, events?, format?: "json"|"slack"} → the webhook and its secret (shown once);
 *                                    bearer token (admin and read: it delivers workflow text); it delivers while that
 *                                    token holds, and never past its expiry
 *   DELETE /api/webhooks/:id         bearer token (admin)
 * Errors are `{code, message}` (src/http/api-errors.ts); bodies are capped before parsing.
 */
import { Hono } from "hono";
import { z } from "zod";
import { WEBHOOK_EVENTS, type WebhookEvent, webhookEventsProblem } from "../domain/webhook-events";
import { WEBHOOK_FORMATS } from "../domain/webhook-payloads";
import { webhookUrlProblem } from "../domain/webhook-url";
import { apiError } from "../http/api-errors";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { jsonBody, jsonQuery } from "../http/validate";
import { LIMITS } from "../limits";
import { accountStub } from "../stubs";

export const accountRoutes = new Hono<AppEnv>();

const webhookAdmin = requireAccount({ bearer: true, session: false, otherwise: "json", action: "webhook.manage" });
const webhookCreator = requireAccount({ bearer: true, session: false, otherwise: "json", action: "webhook.create" });
const bearerOrSession = requireAccount({ bearer: true, session: true, otherwise: "json", action: "workflow.read" });

accountRoutes.use("/api/search", noStore, dataHeaders);
accountRoutes.use("/api/workflows", noStore, dataHeaders);
accountRoutes.use("/api/paths", noStore, dataHeaders);
accountRoutes.use("/api/commits", noStore, dataHeaders);
accountRoutes.use("/api/webhooks", noStore, dataHeaders);
accountRoutes.use("/api/webhooks/*", noStore, dataHeaders);

// Search text is user text: well-formed, no control characters (a NUL would reach SQLite).
const searchText = z
  .string({ error: "is required (the words to search for)" })
  .refine((q) => q.trim() !== "", { error: "is required (the words to search for)" })
  .refine((q) => q.length <= LIMITS.SEARCH_QUERY, { error: `must be at most ${LIMITS.SEARCH_QUERY} characters` })
  .refine((q) => q.isWellFormed() && !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(q), {
    error: "must be text without control characters",
  });

const searchQuery = z.object({
  q: searchText,
  limit: z
    .string()
    .regex(/^\d{1,3}$/, { error: `must be a whole number from 1 to ${LIMITS.SEARCH_RESULTS}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, { error: `must be a whole number from 1 to ${LIMITS.SEARCH_RESULTS}` })
        .max(LIMITS.SEARCH_RESULTS, { error: `must be a whole number from 1 to ${LIMITS.SEARCH_RESULTS}` }),
    )
    .optional(),
});

accountRoutes.get("/api/search", bearerOrSession, jsonQuery(searchQuery), async (c) => {
  const { q, limit } = c.req.valid("query");
  const found = await accountStub(c.env, c.var.account).search(q, limit ?? 10);
  return c.json({ query: q, ...found });
});

const flag = z.enum(["true", "false", "1", "0"], { error: 'must be "true" or "false"' }).transform((v) => v === "true" || v === "1");
const filePath = z
  .string({ error: "is required (a repository-relative file path)" })
  .min(1, { error: "is required (a repository-relative file path)" })
  .max(LIMITS.PATH_QUERY, { error: `must be at most ${LIMITS.PATH_QUERY} characters` })
  .refine((p) => p.isWellFormed() && !p.includes("\u0000"), { error: "must be text without NUL characters" });

const workflowsQuery = z.object({
  q: searchText.optional(),
  path: filePath.optional(),
  prefix: flag.optional(),
  status: z
    .enum(["active", "success", "partial_success", "failed"], { error: "must be active, success, partial_success or failed" })
    .optional(),
  needs_review: flag.optional(),
  page: z
    .string()
    .regex(/^\d{1,6}$/, { error: "must be a whole number ≥ 0" })
    .transform(Number)
    .optional(),
});

accountRoutes.get("/api/workflows", bearerOrSession, jsonQuery(workflowsQuery), async (c) => {
  const q = c.req.valid("query");
  const account = accountStub(c.env, c.var.account);
  const [page, totals] = await Promise.all([
    account.dashboardPage({
      text: q.q,
      path: q.path,
      prefix: q.prefix ?? false,
      status: q.status,
      needs_review: q.needs_review,
      page: q.page,
    }),
    account.totals(),
  ]);
  const origin = new URL(c.req.url).origin;
  return c.json({ ...page, rows: page.rows.map((r) => ({ ...r, owner_url: `${origin}/w/${r.id}` })), account_totals: totals });
});

const pathsQuery = z.object({
  path: filePath,
  prefix: flag.optional(),
  limit: searchQuery.shape.limit,
});

accountRoutes.get("/api/paths", bearerOrSession, jsonQuery(pathsQuery), async (c) => {
  const q = c.req.valid("query");
  const found = await accountStub(c.env, c.var.account).searchPaths(q.path, q.prefix ?? false, q.limit ?? 20);
  // Where the lookup stopped at its bound, older completions were not searched: said, never an absence.
  const searched = found.searched_all
    ? "all task completions"
    : `the newest task completions up to a lookup's bound (${LIMITS.PATH_SETS_SCANNED} completions or ${LIMITS.PATH_SETS_SCANNED_BYTES / 1024 / 1024} MiB of their paths); older ones not searched`;
  return c.json({ path: q.path, prefix: q.prefix ?? false, results: found.hits, searched });
});

const COMMIT_RULE = `must be full commit ids (40 or 64 lowercase hex digits), separated by commas, at most ${LIMITS.COMMITS_QUERY}`;
const FULL_COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const commitsQuery = z.strictObject({
  sha: z
    .string({ error: `is required: ${COMMIT_RULE}` })
    .transform((list) => list.split(","))
    .refine((shas) => shas.length <= LIMITS.COMMITS_QUERY && shas.every((sha) => FULL_COMMIT.test(sha)), { error: COMMIT_RULE }),
});

accountRoutes.get("/api/commits", bearerOrSession, jsonQuery(commitsQuery), async (c) => {
  const shas = [...new Set(c.req.valid("query").sha)];
  const results = await accountStub(c.env, c.var.account).searchCommits(shas, 2 * LIMITS.COMMITS_QUERY);
  return c.json({ commits: shas.length, results });
});

accountRoutes.get("/api/webhooks", webhookAdmin, async (c) => {
  return c.json({ webhooks: await accountStub(c.env, c.var.account).listWebhooks() });
});

/** The URL and event rules live with the webhooks (the account object checks the URL again against its own env). */
const newWebhook = z.strictObject(
  {
    url: z.string({ error: "is required (an http(s) URL)" }).superRefine((url, ctx) => {
      const problem = webhookUrlProblem(url, true);
      if (problem) ctx.addIssue({ code: "custom", message: problem.replace(/^url: /, "") });
    }),
    events: z
      .unknown()
      .optional()
      .superRefine((events, ctx) => {
        const problem = webhookEventsProblem(events);
        if (problem) ctx.addIssue({ code: "custom", message: problem.replace(/^events: /, "") });
      }),
    format: z.enum(WEBHOOK_FORMATS, { error: `must be one of: ${WEBHOOK_FORMATS.join(", ")}` }).optional(),
  },
  { error: 'must be a JSON object {"url": "https://…", "events"?: [...], "format"?: "json" | "slack"}' },
);

accountRoutes.post("/api/webhooks", webhookCreator, jsonBody(newWebhook), async (c) => {
  const body = c.req.valid("json");
  const events = (body.events as WebhookEvent[] | undefined) ?? [...WEBHOOK_EVENTS];
  const { account, credential, expiresAt } = c.var.principal;
  const result = await accountStub(c.env, account).registerWebhook(account, body.url, [...new Set(events)], body.format ?? "json", {
    credential,
    expiresAt,
  });
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value, 201);
});

accountRoutes.delete("/api/webhooks/:id", webhookAdmin, async (c) => {
  const result = await accountStub(c.env, c.var.account).deleteWebhook(c.req.param("id"));
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value);
});
