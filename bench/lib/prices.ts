/**
 * Cloudflare's published prices for what Waymark uses (Workers Paid plan, Standard usage model,
 * SQLite-backed Durable Objects), as read on the date below from the pages named in SOURCES; the
 * price bench prints them beside every figure. Included monthly allowances are left out: the
 * figures are the marginal price of a million tool calls on an account past them.
 */

export const PRICES = {
  read_on: "2026-11-29",
  sources: [
    "https://developers.cloudflare.com/workers/platform/pricing/ (Workers: requests, CPU time)",
    "https://developers.cloudflare.com/durable-objects/platform/pricing/ (Durable Objects: requests, duration, SQLite rows read and written, stored data; setAlarm is one row written)",
  ],
  /** Workers Standard: per million requests. */
  worker_request: 0.3,
  /** Workers Standard: per million CPU milliseconds. */
  worker_cpu_ms: 0.02,
  /** Durable Objects: per million requests (each RPC call, alarm invocation; WebSocket messages at 20:1). */
  object_request: 0.15,
  /** Durable Objects: per million GB-s of duration, billed for 128 MB per object while it is active. */
  object_gb_second: 12.5,
  object_memory_gb: 0.128,
  /** SQLite storage: per million rows read, per million rows written. */
  row_read: 0.001,
  row_written: 1.0,
  /** SQLite storage: per GB-month stored. */
  stored_gb_month: 0.2,
} as const;

/** What one tool call costs the deployment, on average over a mix. */
export interface CallCost {
  worker_requests: number;
  worker_cpu_ms: number;
  object_requests: number;
  /** Seconds objects were active (upper bound: their callers' waits, plus the time their own timers held them). */
  object_active_s: number;
  rows_read: number;
  rows_written: number;
  /** Bytes the call added to the objects' databases (billed each month they are kept). */
  stored_bytes: number;
}

/** Dollars per million calls, by item; `stored` is per month the data is kept. */
export function pricePerMillion(cost: CallCost): Record<string, number> {
  const p = PRICES;
  return {
    "Worker requests": cost.worker_requests * p.worker_request,
    "Worker CPU": cost.worker_cpu_ms * p.worker_cpu_ms,
    "Durable Object requests": cost.object_requests * p.object_request,
    "Durable Object duration": cost.object_active_s * p.object_memory_gb * p.object_gb_second,
    "SQLite rows read": cost.rows_read * p.row_read,
    "SQLite rows written": cost.rows_written * p.row_written,
  };
}

/** Dollars per month of keeping what a million calls stored. */
export function storagePerMillionPerMonth(cost: CallCost): number {
  return ((cost.stored_bytes * 1e6) / 1e9) * PRICES.stored_gb_month;
}
