/**
 * @module storage/migrations
 * Versioned, idempotent SQLite schemas for Durable Objects: `migrate` applies, in one
 * transaction, the migrations whose version is above the stored one. Never edit a shipped migration;
 * append a new one. docs/storage.md explains every table.
 */

import { meter, type ObjectKind } from "../meter";

export interface Migration {
  version: number;
  statements: string[];
}

/** A table rebuilt WITHOUT ROWID with the same columns in the same order: its rows copied, its old indexes dropped with it. */
export function rebuildWithoutRowid(table: string, columns: string): string[] {
  return [
    `CREATE TABLE ${table}_new (${columns}\n) WITHOUT ROWID`,
    `INSERT INTO ${table}_new SELECT * FROM ${table}`,
    `DROP TABLE ${table}`,
    `ALTER TABLE ${table}_new RENAME TO ${table}`,
  ];
}

/**
 * Where a schema keeps its version instead of a `schema_version` table of its own: a column of a
 * one-row table its schema creates anyway (the workflow's totals row), from migration `since` on.
 * A `schema_version` table is a table (two rows of sqlite_schema) and its row: three rows written
 * by every new object; the version in a row the schema writes anyway is none (the fresh script
 * writes it with that row). An object with a `schema_version` table (from before `since`) is read
 * there, moves its version to the row when it migrates past `since`, and drops the table.
 */
export interface VersionRow {
  table: string;
  column: string;
  since: number;
}

/**
 * `kind`: whose storage, for the meter (src/meter.ts): a new object's schema is rows written too.
 * `fresh`: the whole schema at the last migration's version, run instead of every migration when
 * the object has none yet (fewer statements and no table rebuilds: fewer rows written per object).
 * `versionRow`: where the version is kept, if not in a `schema_version` table.
 */
export function migrate(
  storage: DurableObjectStorage,
  migrations: readonly Migration[],
  kind: ObjectKind,
  fresh?: Migration,
  versionRow?: VersionRow,
): void {
  const exec = (query: string, ...values: (number | string)[]) => {
    const cursor = storage.sql.exec(query, ...values);
    const rows = cursor.toArray();
    if (meter.on) meter.statement(kind, cursor.rowsRead, cursor.rowsWritten, "schema");
    return rows;
  };
  // Every pending migration in one transaction: a new object (one per workflow) runs them all,
  // and one commit costs less than one per version. A failure leaves the stored version as it was.
  storage.transactionSync(() => {
    const names = exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('schema_version', ?)", versionRow?.table ?? "");
    const tables = new Set(names.map((row) => String(row.name)));
    const current = storedVersion(exec, tables, versionRow);
    let applied = current;
    const pending = current === 0 && fresh ? [fresh] : migrations;
    for (const migration of pending) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) exec(statement);
      applied = migration.version;
    }
    if (applied === current) return;
    if (versionRow && applied >= versionRow.since) {
      // The fresh script wrote it with the row already: then this writes nothing.
      exec(`UPDATE ${versionRow.table} SET ${versionRow.column} = ? WHERE ${versionRow.column} IS NOT ?`, applied, applied);
      if (tables.has("schema_version")) exec("DROP TABLE schema_version");
      return;
    }
    // The highest version applied is all a later start reads (max): one row, not one per version
    // (a new workflow's object runs every migration, and each row written is billed).
    exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    exec("INSERT INTO schema_version (version) VALUES (?)", applied);
  });
}

/** The version an object's schema is at: 0 when it has none yet. */
function storedVersion(exec: (query: string) => Record<string, SqlStorageValue>[], tables: Set<string>, versionRow?: VersionRow): number {
  if (tables.has("schema_version")) return Number(exec("SELECT max(version) AS version FROM schema_version")[0]?.version ?? 0);
  if (versionRow && tables.has(versionRow.table))
    return Number(exec(`SELECT ${versionRow.column} AS version FROM ${versionRow.table}`)[0]?.version ?? 0);
  return 0;
}

/**
 * A schema created by the first query rather than when the object starts: an object that is
 * only asked about (a made-up workflow id, probed through any read or write) keeps no storage at
 * all, so guessing ids cannot create databases, and answering such a probe costs a lookup, not a
 * schema. An object that already has a schema is migrated when it starts, as before.
 */
export class LazySchema {
  private ready = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly migrations: readonly Migration[],
    private readonly kind: ObjectKind,
    private readonly afterMigrate: () => void = () => {},
    private readonly fresh?: Migration,
    private readonly versionRow?: VersionRow,
  ) {}

  /** Called once when the object starts (inside blockConcurrencyWhile): migrates an existing schema only. */
  open(): void {
    const found = this.storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name IN ('schema_version', ?)", this.versionRow?.table ?? "")
      .toArray().length;
    if (found > 0) this.ensure();
  }

  /** Whether the object has a schema (anything was ever written); false costs no query. */
  exists(): boolean {
    return this.ready;
  }

  /** Creates or upgrades the schema if that has not happened yet. */
  ensure(): void {
    if (this.ready) return;
    migrate(this.storage, this.migrations, this.kind, this.fresh, this.versionRow);
    this.ready = true;
    this.afterMigrate();
  }
}
