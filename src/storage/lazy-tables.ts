/**
 * @module storage/lazy-tables
 * Tables created by their first write instead of with the object's schema. Every CREATE TABLE or
 * CREATE INDEX is rows written (sqlite_schema: two a table, one an index or an implicit key
 * index), billed once per object: a table that most objects never use (a workflow's reviewer
 * feedback, observed commands, overlaps, idempotency keys, …) costs nothing until one does.
 *
 * A read of a table that does not exist yet answers as an empty table would (the caller asks
 * `has` first and skips the query); a write calls `ensure` first, inside its transaction, so the
 * table and the write commit together. Objects migrated from before a table was lazy have it
 * already. A later migration that changes a lazy table must create it first where it is missing
 * (`CREATE TABLE IF NOT EXISTS` with the definition of the version before), since objects may not
 * have it.
 */
import { meter, type ObjectKind } from "../meter";

export class LazyTables<Name extends string> {
  /** What this instance knows of each table; forgotten when a write that may have created one rolls back. */
  private readonly known = new Map<Name, boolean>();

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly kind: ObjectKind,
    /** Each table's statements: the table, then its indexes (the current version's definition). */
    private readonly definitions: Readonly<Record<Name, readonly string[]>>,
  ) {}

  /** Whether the table exists (one lookup in sqlite_master per instance and table, then remembered). */
  has(name: Name): boolean {
    const known = this.known.get(name);
    if (known !== undefined) return known;
    const cursor = this.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name);
    const found = cursor.toArray().length > 0;
    if (meter.on) meter.statement(this.kind, cursor.rowsRead, cursor.rowsWritten, "schema");
    this.known.set(name, found);
    return found;
  }

  /** Creates the table and its indexes unless it exists; call inside the transaction of the write that needs it. */
  ensure(name: Name): void {
    if (this.has(name)) return;
    for (const statement of this.definitions[name]) {
      const cursor = this.storage.sql.exec(statement);
      cursor.toArray();
      if (meter.on) meter.statement(this.kind, cursor.rowsRead, cursor.rowsWritten, "schema");
    }
    this.known.set(name, true);
  }

  /** Creates every table not there yet (tests compare such an object with a migrated one). */
  ensureAll(): void {
    for (const name of Object.keys(this.definitions) as Name[]) this.ensure(name);
  }

  /** The transaction rolled back: a table it created is gone again, so each is looked up anew. */
  forgetUncommitted(): void {
    this.known.clear();
  }
}
