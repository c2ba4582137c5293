/**
 * @module account/routes
 * Account-level JSON API, mounted by src/index.ts:
 *   GET    /api/search?q=…&limit=…   memory search; bearer token or the dashboard's session cookie (read)
 *   GET    /api/webhooks             webhooks and their delivery status; bearer token (admin)
 *   POST   /api/webhooks             {url, events?} → the webhook and its secret (shown once); bearer token (admin)
 *   DELETE /api/webhooks/:id         bearer token (admin)
 * Errors are `{code, message}` (src/http/errors.ts); bodies are capped before parsing.
 */
import { Hono } from "hono";
import { z } from "zod";
import { requireAccount } from "../http/auth";
import { apiError } from "../http/errors";
import type { AppEnv } from "../http/types";
import { jsonBody, jsonQuery } from "../http/validate";
import { LIMITS } from "../limits";
import { dataHeaders, noStore } from "../pages/security";
import { WEBHOOK_EVENTS, type WebhookEvent, webhookEventsProblem, webhookUrlProblem } from "./webhooks";

export const accountRoutes = new Hono<AppEnv>();

const accountStub = (env: Env, account: string) => env.ACCOUNT.get(env.ACCOUNT.idFromName(account));
const bearerOnly = requireAccount({ bearer: true, session: false, otherwise: "json", scope: "admin" });
const bearerOrSession = requireAccount({ bearer: true, session: true, otherwise: "json", scope: "read" });

accountRoutes.use("/api/search", noStore, dataHeaders);
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

accountRoutes.get("/api/webhooks", bearerOnly, async (c) => {
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
  },
  { error: 'must be a JSON object {"url": "https://…", "events"?: [...]}' },
);

accountRoutes.post("/api/webhooks", bearerOnly, jsonBody(newWebhook), async (c) => {
  const body = c.req.valid("json");
  const events = (body.events as WebhookEvent[] | undefined) ?? [...WEBHOOK_EVENTS];
  const result = await accountStub(c.env, c.var.account).registerWebhook(body.url, [...new Set(events)]);
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value, 201);
});

accountRoutes.delete("/api/webhooks/:id", bearerOnly, async (c) => {
  const result = await accountStub(c.env, c.var.account).deleteWebhook(c.req.param("id"));
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value);
});
