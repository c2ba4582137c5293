/**
 * @module routes/token-admin
 * Managing credentials, for admins (the `admin` scope), mounted by src/index.ts:
 *   GET    /api/tokens                  the account's managed tokens (never their secrets)
 *   POST   /api/tokens                  {name, scopes, expires_in_seconds?} → the token, its secret shown once (201);
 *                                       no scope the creating credential lacks, no later end than its own
 *   DELETE /api/tokens/:id              revoke: the sessions, webhooks, OAuth grants and live pages made with it end too
 *   GET    /dashboard/tokens            the tokens page (tokens and OAuth grants)
 *   POST   /dashboard/tokens            create from the page's form; the answer shows the secret once
 *   POST   /dashboard/tokens/:id/revoke
 *   POST   /dashboard/grants/:id/revoke revoke an OAuth grant (its access and refresh tokens stop working)
 * The API takes a bearer token, the pages the session cookie; forms pass hono/csrf.
 */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { CreatedToken } from "../account/tokens";
import { derivationProblem, SCOPES, type Scope } from "../domain/access-scopes";
import { managedRef } from "../domain/credentials";
import { apiError } from "../http/api-errors";
import { forgetVerifiedToken } from "../http/bearer-tokens";
import { formCsrf } from "../http/csrf";
import { requireAccount } from "../http/require-account";
import { dataHeaders, noStore, pageHeaders } from "../http/security-headers";
import type { AppEnv } from "../http/types";
import { formBody, jsonBody } from "../http/validate";
import { isoTime } from "../iso-time";
import { LIMITS } from "../limits";
import { clientLabel, isMetadataDocumentId, listedClientLabel } from "../oauth/client-metadata";
import { oauthApi, revokeGrantsOf } from "../oauth/provider";
import { type GrantRow, renderTokensPage } from "../pages/tokens-page";
import { accountStub } from "../stubs";
import { askFirst, confirmedForm } from "./forms";

type Ctx = Context<AppEnv>;

export const tokenRoutes = new Hono<AppEnv>();

const apiAdmin = requireAccount({ bearer: true, session: false, otherwise: "json", action: "token.manage" });
const apiCreator = requireAccount({ bearer: true, session: false, otherwise: "json", action: "token.create" });
const pageAdmin = requireAccount({ bearer: false, session: true, otherwise: "login", action: "token.manage" });
const pageCreator = requireAccount({ bearer: false, session: true, otherwise: "login", action: "token.create" });
const grantAdmin = requireAccount({ bearer: false, session: true, otherwise: "login", action: "grant.manage" });

tokenRoutes.use("/api/tokens", noStore, dataHeaders);
tokenRoutes.use("/api/tokens/*", noStore, dataHeaders);
for (const path of ["/dashboard/tokens", "/dashboard/tokens/*", "/dashboard/grants/*"]) tokenRoutes.use(path, noStore, pageHeaders);

/** Two years: long-lived tokens should be a decision, not a default. */
export const MAX_TOKEN_SECONDS = 2 * 365 * 24 * 3600;
const SECONDS_RULE = `must be a whole number from 60 to ${MAX_TOKEN_SECONDS}, or null for no expiry`;
const SCOPES_RULE = `must list one or more of ${SCOPES.join(", ")}`;

const tokenName = z
  .string({ error: "is required (a name saying what the token is for)" })
  .transform((name) => name.trim())
  .refine((name) => name !== "", { error: "is required (a name saying what the token is for)" })
  .refine((name) => name.length <= LIMITS.TOKEN_NAME, { error: `must be at most ${LIMITS.TOKEN_NAME} characters` })
  .refine((name) => name.isWellFormed() && !/[\u0000-\u001f\u007f]/.test(name), { error: "must be text without control characters" });

const tokenScopes = z.preprocess(
  // A form sends one checkbox as a string and several as an array.
  (value) => (typeof value === "string" ? [value] : value),
  z.array(z.enum(SCOPES, { error: SCOPES_RULE }), { error: SCOPES_RULE }).min(1, { error: SCOPES_RULE }),
);

const expiry = z
  .preprocess(
    (value) => (value === "" ? null : typeof value === "string" && /^\d{1,12}$/.test(value) ? Number(value) : value),
    z
      .number({ error: SECONDS_RULE })
      .int({ error: SECONDS_RULE })
      .min(60, { error: SECONDS_RULE })
      .max(MAX_TOKEN_SECONDS, { error: SECONDS_RULE })
      .nullable(),
  )
  .optional();

const newTokenJson = z.strictObject(
  { name: tokenName, scopes: tokenScopes, expires_in_seconds: expiry },
  { error: 'must be a JSON object {"name": "...", "scopes": ["read"|"write"|"admin", ...], "expires_in_seconds"?: n|null}' },
);
const newTokenForm = z.object({ name: tokenName, scopes: tokenScopes, expires_in_seconds: expiry });

type NewTokenInput = { name: string; scopes: Scope[]; expires_in_seconds?: number | null };

const expiryOf = (input: NewTokenInput, now: number) => (input.expires_in_seconds ? now + input.expires_in_seconds * 1000 : null);

/** Why the caller's credential may not create this token (`field: rule`), or null: a token is never stronger than its creator. */
const creationProblem = (c: Ctx, input: NewTokenInput, now: number) =>
  derivationProblem(c.var.principal, { scopes: input.scopes, expiresAt: expiryOf(input, now) });

async function create(c: Ctx, input: NewTokenInput, now: number) {
  const token = { name: input.name, scopes: input.scopes, expiresAt: expiryOf(input, now) };
  return accountStub(c.env, c.var.account).createToken(c.var.account, token);
}

/** Revokes the token; its account's object ends its sessions and webhooks, and the OAuth grants approved with it are revoked here. */
async function revoke(c: Ctx, id: string) {
  const result = await accountStub(c.env, c.var.account).revokeToken(id);
  if (result.ok) {
    forgetVerifiedToken(c.var.account, id);
    await revokeGrantsOf(c.req.raw, c.env, c.var.account, managedRef(id));
  }
  return result;
}

// ── JSON API ────────────────────────────────────────────────────────────────

tokenRoutes.get("/api/tokens", apiAdmin, async (c) => c.json({ tokens: await accountStub(c.env, c.var.account).listTokens() }));

tokenRoutes.post("/api/tokens", apiCreator, jsonBody(newTokenJson), async (c) => {
  const now = Date.now();
  const problem = creationProblem(c, c.req.valid("json"), now);
  if (problem) return apiError(c, "FORBIDDEN", problem);
  const result = await create(c, c.req.valid("json"), now);
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value, 201);
});

tokenRoutes.delete("/api/tokens/:id", apiAdmin, async (c) => {
  const result = await revoke(c, c.req.param("id"));
  if (!result.ok) return apiError(c, result.code, result.message);
  return c.json(result.value);
});

// ── The tokens page ─────────────────────────────────────────────────────────

/**
 * A grant's client as consent named it (never by its self-chosen name alone): a registered one
 * as it registered; one identified by its metadata document by the name recorded when the grant
 * was approved, with the document's host (no document is fetched to show this page).
 */
async function clientName(api: OAuthHelpers, grant: { clientId: string; metadata: unknown }): Promise<string> {
  if (isMetadataDocumentId(grant.clientId)) {
    const recorded = (grant.metadata as { client_name?: unknown } | null)?.client_name;
    return clientLabel(typeof recorded === "string" ? recorded : undefined, grant.clientId);
  }
  return listedClientLabel(await api.lookupClient(grant.clientId), grant.clientId);
}

/** The account's OAuth grants, each client named as consent named it. */
async function grants(c: Ctx): Promise<GrantRow[]> {
  const api = oauthApi(c.req.raw, c.env);
  const listed = await api.listUserGrants(c.var.account, { limit: 100 });
  return Promise.all(
    listed.items.map(async (grant) => ({
      id: grant.id,
      client: await clientName(api, grant),
      scopes: grant.scope,
      created_at: isoTime(grant.createdAt * 1000),
    })),
  );
}

async function tokensPage(c: Ctx, created: CreatedToken | null) {
  const [tokens, grantRows] = await Promise.all([accountStub(c.env, c.var.account).listTokens(), grants(c)]);
  return c.html(await renderTokensPage(c.get("secureHeadersNonce") ?? "", { account: c.var.account, tokens, grants: grantRows, created }));
}

tokenRoutes.get("/dashboard/tokens", pageAdmin, (c) => tokensPage(c, null));

tokenRoutes.post("/dashboard/tokens", formCsrf, pageCreator, formBody(newTokenForm), async (c) => {
  const now = Date.now();
  const problem = creationProblem(c, c.req.valid("form"), now);
  if (problem) return c.text(problem, 403);
  const result = await create(c, c.req.valid("form"), now);
  if (!result.ok) return c.text(result.message, 400);
  // Answered in place (no redirect): the secret is on this one response and stored nowhere.
  return tokensPage(c, result.value);
});

tokenRoutes.post("/dashboard/tokens/:id/revoke", formCsrf, pageAdmin, formBody(confirmedForm), async (c) => {
  const id = c.req.param("id");
  if (c.req.valid("form").confirmed !== "yes")
    return askFirst(c, {
      question: `Revoke token ${id}?`,
      consequence:
        "Agents and scripts using it stop working at once, and the dashboard sessions, live pages, OAuth grants and webhooks made with it end. A revoked token never works again.",
      action: `/dashboard/tokens/${id}/revoke`,
      confirm: "Revoke the token",
      back: "/dashboard/tokens",
    });
  const result = await revoke(c, id);
  if (!result.ok) return c.text(result.message, 404);
  return c.redirect("/dashboard/tokens", 303);
});

tokenRoutes.post("/dashboard/grants/:id/revoke", formCsrf, grantAdmin, formBody(confirmedForm), async (c) => {
  if (c.req.valid("form").confirmed !== "yes")
    return askFirst(c, {
      question: "Revoke this app's access?",
      consequence: "The app's access and refresh tokens stop working at once; it has to ask you again to connect.",
      action: `/dashboard/grants/${c.req.param("id")}/revoke`,
      confirm: "Revoke the app's access",
      back: "/dashboard/tokens",
    });
  await oauthApi(c.req.raw, c.env).revokeGrant(c.req.param("id"), c.var.account);
  return c.redirect("/dashboard/tokens", 303);
});
