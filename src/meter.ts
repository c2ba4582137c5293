/**
 * @module meter
 * What a deployment is billed for, counted where it happens, when the deployment sets
 * WAYMARK_METER=1 (the bench's servers do; nothing else should): Worker requests, requests to
 * each kind of Durable Object (every RPC call on a stub, alarm and WebSocket message), rows read
 * and written as SQLite reports them for each statement (the cursor's rowsRead and rowsWritten,
 * which is what Cloudflare bills; each setAlarm counts as one row written, as billed), the wall
 * time each object call took as its caller saw it (an upper bound of the time the object was
 * active for it), and each object's database size. No object keeps a timer of its own (a timer
 * would keep it from hibernating: its duration billed meanwhile), so the callers' waits bound
 * the objects' active time.
 *
 * The counts live in the isolate's memory: under `wrangler dev` the Worker and every object run
 * in one isolate, so GET /meter (src/index.ts) reads them all. Off (the default), each
 * hook is one boolean test.
 */

export type ObjectKind = "workflow" | "account";

export interface ObjectCounts {
  /** RPC calls, alarm invocations and WebSocket messages received. */
  requests: number;
  /** RPC calls by method name. */
  methods: Record<string, number>;
  alarms: number;
  statements: number;
  rows_read: number;
  rows_written: number;
  /** Rows written by the table a statement names first ("schema" for a migration's statements, "alarm" for setAlarm). */
  written_by_table: Record<string, number>;
  /** Milliseconds the callers waited on this kind's RPC calls, summed. */
  call_ms: number;
}

export interface MeterReading {
  worker_requests: number;
  objects: Record<ObjectKind, ObjectCounts & { database_bytes: number; databases: number }>;
}

const empty = (): ObjectCounts => ({
  requests: 0,
  methods: {},
  alarms: 0,
  statements: 0,
  rows_read: 0,
  rows_written: 0,
  written_by_table: {},
  call_ms: 0,
});

class Meter {
  on = false;
  private workerRequests = 0;
  private readonly counts: Record<ObjectKind, ObjectCounts> = { workflow: empty(), account: empty() };
  /** Each object's last known database size, by kind and id. */
  private readonly sizes: Record<ObjectKind, Map<string, number>> = { workflow: new Map(), account: new Map() };

  /**
   * Turns metering on for this isolate when the deployment asks for it (the Worker on each request,
   * each object when it starts); never off again: the isolate serves one deployment.
   */
  enableFrom(env: { WAYMARK_METER?: string }): void {
    if (env.WAYMARK_METER === "1") this.on = true;
  }

  workerRequest(): void {
    this.workerRequests++;
  }

  request(kind: ObjectKind, what: "alarm" | "message" | { method: string }): void {
    const counts = this.counts[kind];
    counts.requests++;
    if (what === "alarm") counts.alarms++;
    if (typeof what === "object") counts.methods[what.method] = (counts.methods[what.method] ?? 0) + 1;
  }

  called(kind: ObjectKind, ms: number): void {
    this.counts[kind].call_ms += ms;
  }

  statement(kind: ObjectKind, rowsRead: number, rowsWritten: number, table: string): void {
    const counts = this.counts[kind];
    counts.statements++;
    counts.rows_read += rowsRead;
    counts.rows_written += rowsWritten;
    if (rowsWritten > 0) counts.written_by_table[table] = (counts.written_by_table[table] ?? 0) + rowsWritten;
  }

  databaseSize(kind: ObjectKind, id: string, bytes: number): void {
    this.sizes[kind].set(id, bytes);
  }

  read(): MeterReading {
    const of = (kind: ObjectKind) => ({
      ...this.counts[kind],
      methods: { ...this.counts[kind].methods },
      written_by_table: { ...this.counts[kind].written_by_table },
      database_bytes: [...this.sizes[kind].values()].reduce((sum, n) => sum + n, 0),
      databases: this.sizes[kind].size,
    });
    return { worker_requests: this.workerRequests, objects: { workflow: of("workflow"), account: of("account") } };
  }
}

/** The isolate's one meter. */
export const meter = new Meter();

/**
 * A Durable Object stub whose calls are counted (requests, the caller's wait) while metering is
 * on; the stub itself otherwise.
 */
export function meteredStub<T extends object>(kind: ObjectKind, stub: T): T {
  if (!meter.on) return stub;
  return new Proxy(stub, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function" || property === "then") return value;
      return (...args: unknown[]) => {
        meter.request(kind, { method: String(property) });
        const started = Date.now();
        const result: unknown = Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
        const done = () => meter.called(kind, Date.now() - started);
        Promise.resolve(result).then(done, done);
        return result;
      };
    },
  });
}
