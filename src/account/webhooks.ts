/**
 * @module account/webhooks
 * Webhooks: an account registers URLs that receive a signed POST when an issue needs human
 * review, a task asks for review (manual_review_needed, or an issue with requires_human_review),
 * a task fails, a workflow completes or a reviewer leaves feedback. Payloads carry the owner
 * view's URL. A webhook's `format` is "json" (the payload below) or "slack" (`{"text": …}`,
 * what Slack-compatible incoming webhooks accept). Deliveries wait in a bounded queue in the
 * AccountObject and are retried with exponential backoff from its alarm.
 *
 * Signature (Stripe-style, so a captured request cannot be replayed later with a new time):
 *   Waymark-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
 */

import { isSpecialPurposeHost } from "../domain/network";
import type { FeedbackView, IssueView, TaskView, WorkflowEvent, WorkflowHeader } from "../domain/view";
import { fail, ok, type Result } from "../errors";
import { randomToken } from "../ids";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

export const WEBHOOK_EVENTS = [
  "issue.needs_review",
  "task.failed",
  "workflow.completed",
  "task.review_requested",
  "feedback.created",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const WEBHOOK_FORMATS = ["json", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/** What happened, as the workflow object reports it; `key` makes a replayed push deliver nothing twice. */
export interface Notification {
  key: string;
  event: WebhookEvent;
  workflow: { id: string; name: string; status: string };
  task?: { id: string; name: string; status: string; summary: string | null };
  issue?: { id: string; task_id: string; type: string; description: string; resolution: string };
  /** task.review_requested: why the task or issue asks for a human. */
  review?: { reason: string };
  feedback?: Pick<FeedbackView, "id" | "target" | "target_id" | "verdict" | "body">;
}

export interface WebhookStatus {
  id: string;
  url: string;
  events: WebhookEvent[];
  format: WebhookFormat;
  created_at: string;
  /** When it stops delivering: the expiry of the credential that registered it, or when that credential was revoked; null: never. */
  expires_at: string | null;
  /** "ok" after a 2xx, "retrying" while a failed delivery waits, "failed" after the last attempt failed; null before any. */
  last_status: "ok" | "retrying" | "failed" | null;
  last_http_status: number | null;
  last_attempt_at: string | null;
  last_error: string | null;
  delivered: number;
  failed: number;
  pending: number;
}

export interface RegisteredWebhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  format: WebhookFormat;
  created_at: string;
  expires_at: string | null;
  /** Shown once, at registration. */
  secret: string;
}

export const WEBHOOK_MIGRATION_STATEMENTS = [
  `CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    events TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_status TEXT,
    last_http_status INTEGER,
    last_attempt_at INTEGER,
    last_error TEXT,
    delivered INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0
  )`,
  `CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL,
    source_key TEXT NOT NULL,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (webhook_id, source_key)
  )`,
  "CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at)",
];

/** Appended later: the body format each webhook chose. */
export const WEBHOOK_FORMAT_MIGRATION_STATEMENTS = ["ALTER TABLE webhooks ADD COLUMN format TEXT NOT NULL DEFAULT 'json'"];

/**
 * Appended later: the credential that registered each webhook (src/account/credentials.ts) and when
 * it stops. Webhooks registered before carry neither and deliver until deleted.
 */
export const WEBHOOK_CREDENTIAL_MIGRATION_STATEMENTS = [
  "ALTER TABLE webhooks ADD COLUMN credential TEXT",
  "ALTER TABLE webhooks ADD COLUMN expires_at INTEGER",
];

/** Who registers a webhook: it delivers only while this credential holds, and never past its expiry. */
export interface WebhookOwner {
  credential: string;
  expiresAt: number | null;
}

// ── Events → notifications (run by the workflow object) ───────────────────

export function notificationsFromEvents(events: readonly WorkflowEvent[], workflow: WorkflowHeader): Notification[] {
  const about = { id: workflow.id, name: workflow.name, status: workflow.status };
  const out: Notification[] = [];
  for (const event of events) {
    const key = `${workflow.id}:${event.seq}`;
    if (event.type === "issue.logged") {
      const issue = event.data as IssueView;
      if (!issue.requires_human_review) continue;
      const about_issue = {
        id: issue.id,
        task_id: issue.task_id,
        type: issue.type,
        description: issue.description,
        resolution: issue.resolution,
      };
      out.push({ key, event: "issue.needs_review", workflow: about, issue: about_issue });
      // One event raises two notifications: each needs its own key (deliveries are unique per webhook and key).
      out.push({
        key: `${key}:review`,
        event: "task.review_requested",
        workflow: about,
        issue: about_issue,
        review: { reason: issue.description },
      });
    } else if (event.type === "task.completed") {
      const task = event.data as TaskView;
      const aboutTask = { id: task.id, name: task.name, status: task.status, summary: task.outcome?.summary ?? null };
      if (task.status === "failed") out.push({ key, event: "task.failed", workflow: about, task: aboutTask });
      if (task.outcome?.manual_review_needed) {
        const reason = task.outcome.manual_review_reason || "manual review requested";
        out.push({ key: `${key}:review`, event: "task.review_requested", workflow: about, task: aboutTask, review: { reason } });
      }
    } else if (event.type === "feedback.created") {
      const f = event.data as FeedbackView;
      out.push({
        key,
        event: "feedback.created",
        workflow: about,
        feedback: { id: f.id, target: f.target, target_id: f.target_id, verdict: f.verdict, body: f.body },
      });
    } else if (event.type === "workflow.completed") {
      out.push({ key, event: "workflow.completed", workflow: about });
    }
  }
  return out;
}

// ── URL rules ─────────────────────────────────────────────────────────────

const PRIVATE_IPV4 = [
  /^10\./,
  /^127\./,
  /^0\./,
  /^169\.254\./,
  /^192\.168\./,
  /^172\.(1[6-9]|2\d|3[01])\./,
  /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./,
];

/** Hosts that name this machine or a private network: a webhook there could probe the deployment's surroundings. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal")) return true;
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return PRIVATE_IPV4.some((range) => range.test(host));
  if (host.includes(":")) {
    return host === "::" || host === "::1" || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || host.startsWith("::ffff:");
  }
  return false;
}

/** Why `url` cannot be a webhook target, or null. */
export function webhookUrlProblem(url: unknown, allowPrivate: boolean): string | null {
  if (typeof url !== "string" || url.length === 0) return "url: is required (an http(s) URL)";
  if (url.length > LIMITS.WEBHOOK_URL) return `url: must be at most ${LIMITS.WEBHOOK_URL} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url: must be an absolute http(s) URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "url: must use http or https";
  if (parsed.username || parsed.password) return "url: must not contain credentials";
  if (!allowPrivate && isSpecialPurposeHost(parsed.hostname)) {
    return "url: private, loopback and link-local hosts are refused (set WAYMARK_WEBHOOK_ALLOW_PRIVATE=true to allow them)";
  }
  return null;
}

export function webhookEventsProblem(events: unknown): string | null {
  if (events === undefined || events === null) return null;
  if (!Array.isArray(events) || events.length === 0) return `events: must be a non-empty array of: ${WEBHOOK_EVENTS.join(", ")}`;
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly unknown[]).includes(e));
  return unknown.length > 0 ? `events: unknown event(s) ${unknown.map(String).join(", ")}; accepted: ${WEBHOOK_EVENTS.join(", ")}` : null;
}

// ── Bodies ────────────────────────────────────────────────────────────────

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

function deliveryBody(
  format: WebhookFormat,
  envelope: { id: string; created_at: string; account: string },
  payload: Omit<Notification, "key">,
  ownerUrl: string | null,
): string {
  if (format === "slack") return JSON.stringify({ text: slackText(payload, ownerUrl) });
  return JSON.stringify({ ...envelope, ...payload, owner_url: ownerUrl });
}

// ── Signing ───────────────────────────────────────────────────────────────

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

export async function signWebhook(secret: string, unixSeconds: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${unixSeconds}.${body}`));
  return `t=${unixSeconds},v1=${hex(mac)}`;
}

// ── Queue ─────────────────────────────────────────────────────────────────

type WebhookRow = {
  id: string;
  url: string;
  secret: string;
  events: string;
  format: string;
  created_at: number;
  last_status: string | null;
  last_http_status: number | null;
  last_attempt_at: number | null;
  last_error: string | null;
  delivered: number;
  failed: number;
  credential: string | null;
  expires_at: number | null;
};
type DeliveryRow = { id: string; webhook_id: string; event: string; body: string; attempts: number };

/** Sends one request; the AccountObject uses fetch, tests substitute a recorder. */
export type Sender = (url: string, init: RequestInit) => Promise<Response>;

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const DELIVERIES_PER_ALARM = 20;

export class Webhooks {
  constructor(
    private readonly sql: Sql,
    private readonly retryBaseMs: number,
  ) {}

  register(url: string, events: WebhookEvent[], format: WebhookFormat, owner: WebhookOwner): Result<RegisteredWebhook> {
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM webhooks`[0]?.n ?? 0;
    if (count >= LIMITS.WEBHOOKS) {
      return fail("QUOTA_EXCEEDED", `webhooks: at most ${LIMITS.WEBHOOKS} per account (this account has ${count}); delete one first`);
    }
    const id = `wh_${randomToken(16)}`;
    const secret = `whsec_${randomToken(40)}`;
    const now = Date.now();
    this.sql`INSERT INTO webhooks (id, url, secret, events, format, created_at, credential, expires_at)
      VALUES (${id}, ${url}, ${secret}, ${JSON.stringify(events)}, ${format}, ${now}, ${owner.credential}, ${owner.expiresAt})`;
    return ok({ id, url, events, format, created_at: new Date(now).toISOString(), expires_at: isoOrNull(owner.expiresAt), secret });
  }

  list(): WebhookStatus[] {
    const pending = new Map(
      this.sql<{ webhook_id: string; n: number }>`SELECT webhook_id, count(*) AS n FROM webhook_deliveries GROUP BY webhook_id`.map((r) => [
        r.webhook_id,
        r.n,
      ]),
    );
    return this.sql<WebhookRow>`SELECT * FROM webhooks ORDER BY created_at, id`.map((w) => ({
      id: w.id,
      url: w.url,
      events: JSON.parse(w.events) as WebhookEvent[],
      format: w.format as WebhookFormat,
      created_at: new Date(w.created_at).toISOString(),
      expires_at: isoOrNull(w.expires_at),
      last_status: w.last_status as WebhookStatus["last_status"],
      last_http_status: w.last_http_status,
      last_attempt_at: isoOrNull(w.last_attempt_at),
      last_error: w.last_error,
      delivered: w.delivered,
      failed: w.failed,
      pending: pending.get(w.id) ?? 0,
    }));
  }

  /** The credential that registered these webhooks was revoked: they stop now (and stay listed as ended). */
  endCredential(credential: string, now = Date.now()): void {
    this.sql`UPDATE webhooks SET expires_at = ${now} WHERE credential = ${credential} AND (expires_at IS NULL OR expires_at > ${now})`;
  }

  remove(id: string): boolean {
    const found = this.sql<{ id: string }>`DELETE FROM webhooks WHERE id = ${id} RETURNING id`.length > 0;
    if (found) this.sql`DELETE FROM webhook_deliveries WHERE webhook_id = ${id}`;
    return found;
  }

  /**
   * Queues one delivery per subscribed webhook that still delivers (unexpired, and `credentialHolds`
   * for the credential that registered it); returns whether anything was queued (the caller sets
   * the alarm). `origin` is the deployment's public origin, for the owner view's URL.
   */
  enqueue(
    account: string,
    notifications: readonly Notification[],
    origin: string | null,
    credentialHolds: (credential: string) => boolean,
  ): boolean {
    if (notifications.length === 0) return false;
    const now = Date.now();
    const hooks = this.sql<{ id: string; events: string; format: string; credential: string | null }>`
      SELECT id, events, format, credential FROM webhooks WHERE expires_at IS NULL OR expires_at > ${now}`.filter(
      (hook) => hook.credential === null || credentialHolds(hook.credential),
    );
    let queued = false;
    for (const notification of notifications) {
      for (const hook of hooks) {
        if (!(JSON.parse(hook.events) as string[]).includes(notification.event)) continue;
        const id = `whd_${randomToken(16)}`;
        const { key: _key, ...payload } = notification;
        const ownerUrl = origin ? `${origin}/w/${payload.workflow.id}` : null;
        const body = deliveryBody(
          hook.format as WebhookFormat,
          { id, created_at: new Date(now).toISOString(), account },
          payload,
          ownerUrl,
        );
        const inserted = this.sql<{ id: string }>`
          INSERT INTO webhook_deliveries (id, webhook_id, source_key, event, body, next_attempt_at, created_at)
          VALUES (${id}, ${hook.id}, ${notification.key}, ${notification.event}, ${body}, ${now}, ${now})
          ON CONFLICT (webhook_id, source_key) DO NOTHING RETURNING id`;
        if (inserted.length > 0) queued = true;
      }
    }
    this.dropOverflow();
    return queued;
  }

  /** Bounded queue: beyond WEBHOOK_QUEUE pending deliveries the oldest are given up (and counted as failed). */
  private dropOverflow(): void {
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM webhook_deliveries`[0]?.n ?? 0;
    const excess = count - LIMITS.WEBHOOK_QUEUE;
    if (excess <= 0) return;
    const dropped = this.sql<{ webhook_id: string }>`
      DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries ORDER BY created_at, id LIMIT ${excess})
      RETURNING webhook_id`;
    for (const d of dropped) {
      this.sql`UPDATE webhooks SET failed = failed + 1, last_status = 'failed',
        last_error = ${`dropped: more than ${LIMITS.WEBHOOK_QUEUE} deliveries pending`} WHERE id = ${d.webhook_id}`;
    }
  }

  /** Attempts the due deliveries; returns when the next one is due (null: queue empty). */
  async deliverDue(send: Sender, now = Date.now()): Promise<number | null> {
    const due = this.sql<DeliveryRow>`
      SELECT id, webhook_id, event, body, attempts FROM webhook_deliveries WHERE next_attempt_at <= ${now}
      ORDER BY next_attempt_at, created_at LIMIT ${DELIVERIES_PER_ALARM}`;
    await Promise.all(due.map((d) => this.attempt(send, d)));
    return this.sql<{ at: number | null }>`SELECT min(next_attempt_at) AS at FROM webhook_deliveries`[0]?.at ?? null;
  }

  private async attempt(send: Sender, delivery: DeliveryRow): Promise<void> {
    const hook = this.sql<WebhookRow>`SELECT * FROM webhooks WHERE id = ${delivery.webhook_id}`[0];
    // Deleted, or its credential ended after the delivery was queued: nothing more leaves.
    if (!hook || (hook.expires_at !== null && hook.expires_at <= Date.now())) {
      this.sql`DELETE FROM webhook_deliveries WHERE id = ${delivery.id}`;
      return;
    }
    const attempts = delivery.attempts + 1;
    const signature = await signWebhook(hook.secret, Math.floor(Date.now() / 1000), delivery.body);
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await send(hook.url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "Waymark-Webhooks/1",
          "Waymark-Event": delivery.event,
          "Waymark-Delivery": delivery.id,
          "Waymark-Signature": signature,
        },
        body: delivery.body,
        redirect: "manual",
        signal: AbortSignal.timeout(LIMITS.WEBHOOK_TIMEOUT_MS),
      });
      status = response.status;
      await response.body?.cancel();
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (caught) {
      error = (caught instanceof Error ? `${caught.name}: ${caught.message}` : String(caught)).slice(0, LIMITS.WEBHOOK_ERROR);
    }
    const now = Date.now();
    // The hook may have been deleted while the request was in flight.
    if (!this.sql<{ id: string }>`SELECT id FROM webhooks WHERE id = ${hook.id}`[0]) return;
    if (error === null) {
      this.sql`DELETE FROM webhook_deliveries WHERE id = ${delivery.id}`;
      this.sql`UPDATE webhooks SET last_status = 'ok', last_http_status = ${status}, last_attempt_at = ${now}, last_error = NULL,
        delivered = delivered + 1 WHERE id = ${hook.id}`;
    } else if (attempts >= LIMITS.WEBHOOK_ATTEMPTS) {
      this.sql`DELETE FROM webhook_deliveries WHERE id = ${delivery.id}`;
      this.sql`UPDATE webhooks SET last_status = 'failed', last_http_status = ${status}, last_attempt_at = ${now},
        last_error = ${`${error} (gave up after ${attempts} attempts)`}, failed = failed + 1 WHERE id = ${hook.id}`;
    } else {
      const next = now + this.retryBaseMs * 2 ** (attempts - 1);
      this.sql`UPDATE webhook_deliveries SET attempts = ${attempts}, next_attempt_at = ${next} WHERE id = ${delivery.id}`;
      this.sql`UPDATE webhooks SET last_status = 'retrying', last_http_status = ${status}, last_attempt_at = ${now},
        last_error = ${`${error} (attempt ${attempts} of ${LIMITS.WEBHOOK_ATTEMPTS})`} WHERE id = ${hook.id}`;
    }
  }
}

/** The backoff base: WAYMARK_WEBHOOK_RETRY_BASE_MS when set (tests shorten it), else LIMITS.WEBHOOK_RETRY_BASE_MS. */
export function retryBaseMs(env: Env): number {
  const configured = Number(env.WAYMARK_WEBHOOK_RETRY_BASE_MS ?? "");
  return Number.isFinite(configured) && configured >= 10 ? configured : LIMITS.WEBHOOK_RETRY_BASE_MS;
}

export function allowPrivateTargets(env: Env): boolean {
  return env.WAYMARK_WEBHOOK_ALLOW_PRIVATE === "true";
}
