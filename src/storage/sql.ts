/**
 * @module storage/sql
 * The `sql` tagged template every Durable Object's storage collaborators take: values become
 * bound parameters, never text, so no caller can build SQL from user input by accident.
 *
 * It also keeps the one storage failure a retry can never fix from looking like a passing one:
 * SQLite refuses any string, blob or row over 2 MB (bound parameters included). A bound value
 * over LIMITS.STORED_VALUE_BYTES is refused here, and SQLite's own refusal is rethrown, both as
 * PAYLOAD_TOO_LARGE naming the table, so a write says what was too large instead of failing
 * the same way on every retry. Every value the objects store is bounded well below it by
 * construction (src/limits.ts); this is the backstop.
 */
import { WaymarkError } from "../errors";
import { LIMITS } from "../limits";
import { meter, type ObjectKind } from "../meter";

export type SqlValue = string | number | null;
type Row = Record<string, SqlStorageValue>;

/**
 * SQL text a module defines once from its own constants (a subquery it reads through in several
 * statements): the one kind of value `sql` writes into the query instead of binding. Never built
 * from a value a request carries: nothing but a module's constants may construct one.
 */
export class SqlText {
  constructor(readonly text: string) {}
}

const encoder = new TextEncoder();

/** The table a statement writes or reads first, for messages and the meter ("events" of INSERT INTO events …). */
function tableOf(query: string): string {
  return /\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|FROM)\s+(\w+)/i.exec(query)?.[1] ?? "storage";
}

function tooLarge(query: string, what: string): WaymarkError {
  return new WaymarkError(
    "PAYLOAD_TOO_LARGE",
    `${tableOf(query)}: ${what}, over the ${LIMITS.STORED_VALUE_BYTES} bytes one stored value may take; the same call cannot succeed when retried`,
  );
}

/** Refuses a bound string over the stored-value bound (measured in UTF-8 only when its length could reach it). */
function checkValues(query: string, values: readonly SqlValue[]): void {
  for (const value of values) {
    if (typeof value !== "string" || value.length * 3 <= LIMITS.STORED_VALUE_BYTES) continue;
    const bytes = value.length <= LIMITS.STORED_VALUE_BYTES ? encoder.encode(value).length : value.length;
    if (bytes > LIMITS.STORED_VALUE_BYTES) throw tooLarge(query, `a value of ${bytes} bytes`);
  }
}

/** Whose storage this is, for the meter (src/meter.ts): the object's kind and id. */
export interface StorageOwner {
  kind: ObjectKind;
  id: string;
}

/**
 * Each call site's query text, joined once: a tagged template's strings array is the same object
 * on every call from one site, so a write's statements cost no string building each time.
 */
const queries = new WeakMap<TemplateStringsArray, string>();

function queryOf(strings: TemplateStringsArray): string {
  let query = queries.get(strings);
  if (query === undefined) {
    query = strings.join("?");
    queries.set(strings, query);
  }
  return query;
}

/** A query whose values include SqlText: that text written in its place, every other value still bound. */
function inlined(strings: TemplateStringsArray, values: readonly (SqlValue | SqlText)[]): { query: string; bound: SqlValue[] } {
  let query = strings[0] ?? "";
  const bound: SqlValue[] = [];
  values.forEach((value, n) => {
    if (value instanceof SqlText) query += value.text;
    else {
      query += "?";
      bound.push(value);
    }
    query += strings[n + 1] ?? "";
  });
  return { query, bound };
}

/** `beforeQuery` runs before every query (a lazily created schema makes sure it exists). */
export function sqlFor(storage: DurableObjectStorage, owner: StorageOwner, beforeQuery?: () => void) {
  return function sql<T extends Row = Row>(strings: TemplateStringsArray, ...given: (SqlValue | SqlText)[]): T[] {
    beforeQuery?.();
    const { query, bound: values } = given.some((value) => value instanceof SqlText)
      ? inlined(strings, given)
      : { query: queryOf(strings), bound: given as SqlValue[] };
    checkValues(query, values);
    try {
      const cursor = storage.sql.exec<T>(query, ...values);
      const rows = cursor.toArray();
      if (meter.on) {
        meter.statement(owner.kind, cursor.rowsRead, cursor.rowsWritten, tableOf(query));
        if (cursor.rowsWritten > 0) meter.databaseSize(owner.kind, owner.id, storage.sql.databaseSize);
      }
      return rows;
    } catch (error) {
      if (error instanceof Error && /SQLITE_TOOBIG|too big/i.test(error.message)) throw tooLarge(query, "a value or row");
      throw error;
    }
  };
}
export type Sql = ReturnType<typeof sqlFor>;
