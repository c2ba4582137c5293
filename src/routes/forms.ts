/**
 * @module routes/forms
 * What the page routes share: the CSRF check every form passes, the dashboard session
 * requirement, the share-management request both the forms and the JSON API accept, and the
 * small helpers that turn a stored link into its URL.
 */
import type { Context } from "hono";
import { z } from "zod";
import { MAX_SHARE_SECONDS, type ShareInfo } from "../domain/share-status";
import { requireAccount } from "../http/require-account";
import type { AppEnv } from "../http/types";
import { isWorkflowId } from "../ids";
import { type Confirmation, renderConfirmPage } from "../pages/confirm";
import { workflowStub } from "../stubs";

type Ctx = Context<AppEnv>;

export const nonceOf = (c: Ctx) => c.get("secureHeadersNonce") ?? "";

export { formCsrf } from "../http/csrf";

/** The dashboard's pages and forms: a session cookie whose credential may do the action, or the sign-in page. */
export const dashboardReader = requireAccount({ bearer: false, session: true, otherwise: "login", action: "workflow.read" });
export const dashboardWriter = requireAccount({ bearer: false, session: true, otherwise: "login", action: "workflow.write" });
export const dashboardAdmin = requireAccount({ bearer: false, session: true, otherwise: "login", action: "settings.change" });

const SECONDS_RULE = `must be a whole number from 1 to ${MAX_SHARE_SECONDS}, or null for no expiry`;

/** {action, expires_in_seconds?}: JSON gives a number or null, the dashboard's form a string ("" = never). */
export const shareRequest = z.strictObject(
  {
    action: z.enum(["rotate", "revoke", "set_expiry"], { error: 'must be "rotate", "revoke" or "set_expiry"' }),
    expires_in_seconds: z
      .preprocess(
        (value) => (value === "" ? null : typeof value === "string" && /^\d{1,12}$/.test(value) ? Number(value) : value),
        z
          .number({ error: SECONDS_RULE })
          .int({ error: SECONDS_RULE })
          .min(1, { error: SECONDS_RULE })
          .max(MAX_SHARE_SECONDS, { error: SECONDS_RULE })
          .nullable(),
      )
      .optional(),
  },
  { error: 'must be a JSON object {"action": ..., "expires_in_seconds"?: ...}' },
);

/** The share forms of the dashboard and the owner view: the request, and `confirmed` once a revocation was confirmed. */
export const shareForm = shareRequest.extend({
  confirmed: z.literal("yes", { error: 'must be "yes" (the confirmation form sends it)' }).optional(),
});

/**
 * A revocation asks first (pages/confirm.ts): a share form whose action is "revoke" and which is
 * not the confirming one gets the question; null when the form may go ahead.
 */
export function confirmShareRevocation(c: Ctx, form: z.output<typeof shareForm>, back: string): Response | null {
  if (form.action !== "revoke" || form.confirmed === "yes") return null;
  const id = c.req.param("id") ?? "";
  return askFirst(c, {
    question: `Revoke the share link of workflow ${id}?`,
    consequence:
      "Anyone holding the link can no longer open the workflow, and pages open with it close. A new link can be made later; the old one never works again.",
    action: new URL(c.req.url).pathname,
    fields: { action: "revoke" },
    confirm: "Revoke the link",
    back,
  });
}

/** The confirmation page (pages/confirm.ts) in place of what a form asked for: nothing is done until its own form is sent. */
export function askFirst(c: Ctx, confirmation: Confirmation): Response {
  return c.html(String(renderConfirmPage(nonceOf(c), confirmation)));
}

/** A revocation form's field: "yes" from the confirmation page's form, absent from the first one. */
export const confirmedForm = z.object({
  confirmed: z.literal("yes", { error: 'must be "yes" (the confirmation form sends it)' }).optional(),
});

export function shareUrl(c: Ctx, info: ShareInfo): string | null {
  return info.token ? `${new URL(c.req.url).origin}/s/${info.token}` : null;
}

/** Runs a share form's action (dashboard row or owner view) for the signed-in owner: the refusal to show, or null when done. */
export async function applyShareForm(
  c: Ctx,
  request: z.output<typeof shareRequest> | z.output<typeof shareForm>,
): Promise<Response | null> {
  const id = c.req.param("id") ?? "";
  if (!isWorkflowId(id)) return c.text("no such workflow", 404);
  const result = await workflowStub(c.env, id).manageShare(c.var.account, request.action, request.expires_in_seconds ?? null);
  return result.ok ? null : c.text(result.message, result.code === "NOT_FOUND" ? 404 : 400);
}
