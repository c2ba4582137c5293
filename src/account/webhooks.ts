/**
 * @module account/webhooks
 * An account's webhooks and their delivery queue: an account registers URLs (domain/webhook-url)
 * that receive a signed POST for the events they subscribe to (domain/webhook-events); each
 * notification the workflow objects push becomes one delivery per subscribed webhook, its body in
 * the webhook's format and signed (domain/webhook-payloads). Deliveries wait in a bounded queue in
 * the AccountObject and are retried with exponential backoff from its alarm.
 */
import type { Notification, WebhookEvent } from "../domain/webhook-events";
import { deliveryBody, signWebhook, type WebhookFormat } from "../domain/webhook-payloads";
import { fail, ok, type Result } from "../errors";
import { randomToken } from "../ids";
import { isoTime, isoTimeOrNull } from "../iso-time";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

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

/** Who registers a webhook: it delivers only while this credential holds, and never past its expiry. */
export interface WebhookOwner {
  credential: string;
  expiresAt: number | null;
}

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
    return ok({ id, url, events, format, created_at: isoTime(now), expires_at: isoTimeOrNull(owner.expiresAt), secret });
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
      created_at: isoTime(w.created_at),
      expires_at: isoTimeOrNull(w.expires_at),
      last_status: w.last_status as WebhookStatus["last_status"],
      last_http_status: w.last_http_status,
      last_attempt_at: isoTimeOrNull(w.last_attempt_at),
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
        const body = deliveryBody(hook.format as WebhookFormat, { id, created_at: isoTime(now), account }, payload, ownerUrl);
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
