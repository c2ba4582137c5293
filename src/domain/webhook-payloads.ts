/**
 * @module domain/webhook-payloads
 * What one webhook delivery carries: its body in the webhook's format — "json" (the envelope and
 * the notification, with the owner view's URL) or "slack" (`{"text": …}`, what Slack-compatible
 * incoming webhooks accept) — and its signature, Stripe-style, so a captured request cannot be
 * replayed later with a new time:
 *   Waymark-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 */
import { hex, hmacSha256 } from "../crypto";
import type { Notification } from "./webhook-events";

export const WEBHOOK_FORMATS = ["json", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** The one-line summary a Slack-compatible body carries (Slack's mrkdwn: `<url|label>` links, &, <, > escaped). */
export function slackText(payload: Omit<Notification, "key">, ownerUrl: string | null): string {
  const esc = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const name = esc(payload.workflow.name);
  const workflow = ownerUrl ? `<${ownerUrl}|${name}>` : name;
  const clipped = (text: string) => esc(text.length > 300 ? `${text.slice(0, 299)}…` : text);
  switch (payload.event) {
    case "issue.needs_review":
      return `Issue needs review in ${workflow}: ${clipped(payload.issue?.description ?? "")}`;
    case "task.review_requested":
      return `Review requested in ${workflow}${payload.task ? ` for task ${esc(payload.task.name)}` : ""}: ${clipped(payload.review?.reason ?? "")}`;
    case "task.failed":
      return `Task failed in ${workflow}: ${esc(payload.task?.name ?? "")}${payload.task?.summary ? ` — ${clipped(payload.task.summary)}` : ""}`;
    case "feedback.created":
      return `Feedback (${payload.feedback?.verdict.replace("_", " ")}) on ${workflow}: ${clipped(payload.feedback?.body ?? "")}`;
    case "workflow.completed":
      return `Workflow ${workflow} completed (${esc(payload.workflow.status)})`;
  }
}

export function deliveryBody(
  format: WebhookFormat,
  envelope: { id: string; created_at: string; account: string },
  payload: Omit<Notification, "key">,
  ownerUrl: string | null,
): string {
  if (format === "slack") return JSON.stringify({ text: slackText(payload, ownerUrl) });
  return JSON.stringify({ ...envelope, ...payload, owner_url: ownerUrl });
}

export async function signWebhook(secret: string, unixSeconds: number, body: string): Promise<string> {
  return `t=${unixSeconds},v1=${hex(await hmacSha256(secret, `${unixSeconds}.${body}`))}`;
}
