/**
 * @module storage/migrations
 * Versioned, idempotent SQLite schemas for Durable Objects: `migrate` applies, in one
 * transaction, the migrations whose version is above the stored one. Never edit a shipped migration;
 * append a new one. docs/storage.md explains every table.
 */

export interface Migration {
  version: number;
  statements: string[];
}

export function migrate(storage: DurableObjectStorage, migrations: readonly Migration[]): void {
  // Every pending migration in one transaction: a new object (one per workflow) runs them all,
  // and one commit costs less than one per version. A failure leaves the stored version as it was.
  storage.transactionSync(() => {
    storage.sql.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
    const row = storage.sql.exec<{ version: number }>("SELECT max(version) AS version FROM schema_version").one();
    const current = row.version ?? 0;
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      for (const statement of migration.statements) storage.sql.exec(statement);
      storage.sql.exec("INSERT INTO schema_version (version) VALUES (?)", migration.version);
    }
  });
}
