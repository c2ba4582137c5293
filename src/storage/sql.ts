/**
 * @module storage/sql
 * The `sql` tagged template every Durable Object's storage collaborators take: values become
 * bound parameters, never text, so no caller can build SQL from user input by accident.
 */

export type SqlValue = string | number | null;
type Row = Record<string, SqlStorageValue>;

/** `beforeQuery` runs before every query (a lazily created schema makes sure it exists). */
export function sqlFor(storage: DurableObjectStorage, beforeQuery?: () => void) {
  return function sql<T extends Row = Row>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] {
    beforeQuery?.();
    return storage.sql.exec<T>(strings.join("?"), ...values).toArray();
  };
}
export type Sql = ReturnType<typeof sqlFor>;
