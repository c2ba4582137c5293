export type SqlValue = string | number | null;
type Row = Record<string, SqlStorageValue>;

/** `sql` tagged template bound to one object's storage: values become bound parameters, never text. */
export function sqlFor(storage: DurableObjectStorage) {
  return function sql<T extends Row = Row>(strings: TemplateStringsArray, ...values: SqlValue[]): T[] {
    return storage.sql.exec<T>(strings.join("?"), ...values).toArray();
  };
}
export type Sql = ReturnType<typeof sqlFor>;
