/**
 * @module account/device-subscribers
 * The workflow objects that verify device signatures themselves (workflow/device-keys) from a
 * copy of this account's device keys, each until its copy's trust runs out: every approval and
 * revocation is pushed to them, so a revocation reaches the write path of every workflow that
 * could still accept the device's signature. A workflow subscribes each time it fetches a copy.
 */
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";

/** A subscription outlasts the copy's trust (LIMITS.DEVICE_KEYS_FRESH_MS) by this much, so no push can miss a copy still trusted. */
const MARGIN_MS = 60_000;

export class DeviceSubscribers {
  constructor(private readonly sql: Sql) {}

  subscribe(workflowId: string, now: number): void {
    const until = now + LIMITS.DEVICE_KEYS_FRESH_MS + MARGIN_MS;
    this.sql`INSERT INTO device_subscribers (workflow_id, until) VALUES (${workflowId}, ${until})
      ON CONFLICT (workflow_id) DO UPDATE SET until = excluded.until`;
  }

  /** The workflows whose copies are still trusted (expired subscriptions are removed). */
  current(now: number): string[] {
    this.sql`DELETE FROM device_subscribers WHERE until <= ${now}`;
    return this.sql<{ workflow_id: string }>`SELECT workflow_id FROM device_subscribers LIMIT ${LIMITS.ACCOUNT_WORKFLOWS}`.map(
      (row) => row.workflow_id,
    );
  }
}
