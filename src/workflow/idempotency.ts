/**
 * @module workflow/idempotency
 * Results of mutating calls by idempotency key: a retry with the same key and the same input
 * gets the first answer; the same key with other input is a CONFLICT. Records expire after
 * LIMITS.IDEMPOTENCY_TTL_MS, so storage does not grow with every call ever made.
 */
import { sha256Hex } from "../crypto";
import { fail, ok, type Result } from "../errors";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import type { WorkflowTables } from "./workflow-tables";

/** Same input → same hash: decides whether a reused key is a retry or a mistake. */
export async function requestHash(tool: string, input: object): Promise<string> {
  const { idempotency_key: _key, ...rest } = input as Record<string, unknown>;
  return sha256Hex(`${tool}\n${JSON.stringify(rest)}`);
}

/** How often expired records are swept (at most), per object instance. */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export class IdempotencyRecords {
  private lastSweep = 0;

  /** `tables`: the idempotency table is created by the first keyed write. */
  constructor(
    private readonly sql: Sql,
    private readonly tables: WorkflowTables,
  ) {}

  /** The stored result of this request, a CONFLICT when the key served another request, or null. */
  replay<T>(tool: string, key: string | undefined, hash: string, now = Date.now()): Result<T> | null {
    if (key === undefined || !this.tables.has("idempotency")) return null;
    const row = this.sql<{ tool: string; request_hash: string; result: string }>`
      SELECT tool, request_hash, result FROM idempotency WHERE key = ${key} AND created_at > ${now - LIMITS.IDEMPOTENCY_TTL_MS}`[0];
    if (!row) return null;
    if (row.tool !== tool || row.request_hash !== hash) {
      return fail("CONFLICT", `idempotency_key: "${key}" was already used for a different ${row.tool} request`);
    }
    return ok(JSON.parse(row.result) as T);
  }

  record(tool: string, key: string | undefined, hash: string, result: unknown, now = Date.now()): void {
    if (key === undefined) return;
    this.tables.ensure("idempotency");
    this
      .sql`INSERT INTO idempotency (key, tool, request_hash, result, created_at) VALUES (${key}, ${tool}, ${hash}, ${JSON.stringify(result)}, ${now})
      ON CONFLICT (key) DO UPDATE SET tool = excluded.tool, request_hash = excluded.request_hash, result = excluded.result, created_at = excluded.created_at`;
    if (now - this.lastSweep > SWEEP_EVERY_MS) {
      this.lastSweep = now;
      this.sql`DELETE FROM idempotency WHERE created_at <= ${now - LIMITS.IDEMPOTENCY_TTL_MS}`;
    }
  }
}
