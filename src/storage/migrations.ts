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
 * `kind`: whose storage, for the meter (src/meter.ts): a new object's schema is rows written too.
 * `fresh`: the whole schema at the last migration's version, run instead of every migration when
 * the object has none yet (fewer statements and no table rebuilds: fewer rows written per object).
 */
export function migrate(storage: DurableObjectStorage, migrations: readonly Migration[], kind: ObjectKind, fresh?: Migration): void {
  const exec = (query: string, ...values: number[]) => {
    const cursor = storage.sql.exec(query, ...values);
    const rows = cursor.toArray();
    if (meter.on) meter.statement(kind, cursor.rowsRead, cursor.rowsWritten, "schema");
    return rows;
  };
  // Every pending migration in one transaction: a new object (one per workflow) runs them all,
  // and one commit costs less than one per version. A failure leaves the stored version as it was.
  storage.transactionSync(() => {
    exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    const current = Number(exec("SELECT max(version) AS version FROM schema_version")[0]?.version ?? 0);
    let applied = current;
    const pending = current === 0 && fresh ? [fresh] : migrations;
    for (const migration of pending) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) exec(statement);
      applied = migration.version;
    }
    // The highest version applied is all a later start reads (max): one row, not one per version
    // (a new workflow's object runs every migration, and each row written is billed).
    if (applied > current) exec("INSERT INTO schema_version (version) VALUES (?)", applied);
  });
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
  ) {}

  /** Called once when the object starts (inside blockConcurrencyWhile): migrates an existing schema only. */
  open(): void {
    const found = this.storage.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").toArray().length;
    if (found > 0) this.ensure();
  }

  /** Whether the object has a schema (anything was ever written); false costs no query. */
  exists(): boolean {
    return this.ready;
  }

  /** Creates or upgrades the schema if that has not happened yet. */
  ensure(): void {
    if (this.ready) return;
    migrate(this.storage, this.migrations, this.kind, this.fresh);
    this.ready = true;
    this.afterMigrate();
  }
}
