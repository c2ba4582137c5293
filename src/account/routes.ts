import { type Context, Hono } from "hono";
import { authenticateBearer, bearerToken, UNAUTHORIZED_HEADERS } from "../auth";
import { LIMITS } from "../limits";
import { sameOrigin, securityHeaders } from "../pages/security";
import { sessionAccount } from "../pages/session";
import { WEBHOOK_EVENTS, type WebhookEvent, webhookEventsProblem, webhookUrlProblem } from "./webhooks";

/**
 * Account-level JSON API (issue 5), mounted by src/index.ts:
 *   GET    /api/search?q=…&limit=…   memory search; bearer token or the dashboard's session cookie
 *   GET    /api/webhooks             webhooks and their delivery status; bearer token
 *   POST   /api/webhooks             {url, events?} → the webhook and its secret (shown once); bearer token
 *   DELETE /api/webhooks/:id         bearer token
 * Errors are {"error": "<CODE>: <field>: <rule>"} like the share API.
 */
type Env_ = { Bindings: Env };
type Ctx = Context<Env_>;

export const accountRoutes = new Hono<Env_>();

const headers = securityHeaders(null);
const MAX_WEBHOOK_BODY = 8 * 1024;

const error = (c: Ctx, status: 400 | 401 | 403 | 404 | 413 | 429, message: string, extra: Record<string, string> = {}) =>
  c.json({ error: message }, status, { ...headers, ...extra });

/** The caller's account from the bearer token, or (when `cookie` is allowed) the dashboard session; else the error to answer. */
async function authenticate(c: Ctx, cookie: boolean): Promise<string | Response> {
  if (!sameOrigin(c.req.raw)) return error(c, 403, "FORBIDDEN: cross-origin request");
  if (cookie && bearerToken(c.req.raw) === null) {
    const account = await sessionAccount(c.env, c.req.raw);
    if (account) return account;
  }
  const auth = await authenticateBearer(c.env, c.req.raw);
  if (auth.ok) return auth.account;
  return error(c, auth.status, auth.message, auth.status === 401 ? UNAUTHORIZED_HEADERS : { "Retry-After": "60" });
}

const accountStub = (env: Env, account: string) => env.ACCOUNT.get(env.ACCOUNT.idFromName(account));

accountRoutes.get("/api/search", async (c) => {
  const account = await authenticate(c, true);
  if (account instanceof Response) return account;
  const query = c.req.query("q") ?? "";
  if (query.trim() === "") return error(c, 400, "INPUT_VALIDATION_ERROR: q: is required (the words to search for)");
  if (query.length > LIMITS.SEARCH_QUERY) {
    return error(c, 400, `INPUT_VALIDATION_ERROR: q: must be at most ${LIMITS.SEARCH_QUERY} characters`);
  }
  const rawLimit = c.req.query("limit");
  const limit = rawLimit === undefined ? 10 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.SEARCH_RESULTS) {
    return error(c, 400, `INPUT_VALIDATION_ERROR: limit: must be a whole number from 1 to ${LIMITS.SEARCH_RESULTS}`);
  }
  const found = await accountStub(c.env, account).search(query, limit);
  return c.json({ query, ...found }, 200, headers);
});

accountRoutes.get("/api/webhooks", async (c) => {
  const account = await authenticate(c, false);
  if (account instanceof Response) return account;
  return c.json({ webhooks: await accountStub(c.env, account).listWebhooks() }, 200, headers);
});

accountRoutes.post("/api/webhooks", async (c) => {
  const account = await authenticate(c, false);
  if (account instanceof Response) return account;
  if (Number(c.req.header("Content-Length") ?? 0) > MAX_WEBHOOK_BODY) {
    return error(c, 413, `PAYLOAD_TOO_LARGE: body must be at most ${MAX_WEBHOOK_BODY} bytes`);
  }
  const text = await c.req.text();
  if (text.length > MAX_WEBHOOK_BODY) return error(c, 413, `PAYLOAD_TOO_LARGE: body must be at most ${MAX_WEBHOOK_BODY} bytes`);
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    return error(c, 400, 'INPUT_VALIDATION_ERROR: body must be a JSON object {"url": "https://…", "events"?: [...]}');
  }
  const unknownFields = Object.keys(body).filter((k) => k !== "url" && k !== "events");
  if (unknownFields.length > 0) return error(c, 400, `INPUT_VALIDATION_ERROR: unknown field(s): ${unknownFields.join(", ")}`);
  // Checked here for a clear 400; the account object checks the URL again against its own env.
  const problem = webhookUrlProblem(body.url, true) ?? webhookEventsProblem(body.events);
  if (problem) return error(c, 400, `INPUT_VALIDATION_ERROR: ${problem}`);
  const events = (body.events as WebhookEvent[] | undefined) ?? [...WEBHOOK_EVENTS];
  const result = await accountStub(c.env, account).registerWebhook(body.url as string, [...new Set(events)]);
  if (!result.ok) return error(c, result.code === "PAYLOAD_TOO_LARGE" ? 413 : 400, `${result.code}: ${result.message}`);
  return c.json(result.value, 201, headers);
});

accountRoutes.delete("/api/webhooks/:id", async (c) => {
  const account = await authenticate(c, false);
  if (account instanceof Response) return account;
  const result = await accountStub(c.env, account).deleteWebhook(c.req.param("id"));
  if (!result.ok) return error(c, 404, `${result.code}: ${result.message}`);
  return c.json(result.value, 200, headers);
});
