/**
 * @module account/schema
 * SQLite schema of one AccountObject, applied in order by storage/migrations when the object
 * starts. Never edit a shipped migration; append a new one. docs/storage.md explains every table.
 */
import type { Migration } from "../storage/migrations";
import { MEMORY_MIGRATION_STATEMENTS } from "./memory";
import { PATH_INDEX_MIGRATION_STATEMENTS, PATH_RECENCY_MIGRATION_STATEMENTS } from "./path-index";
import { SESSION_MIGRATION_STATEMENTS } from "./sessions";
import { TOKEN_MIGRATION_STATEMENTS } from "./tokens";
import { WEBHOOK_CREDENTIAL_MIGRATION_STATEMENTS, WEBHOOK_FORMAT_MIGRATION_STATEMENTS, WEBHOOK_MIGRATION_STATEMENTS } from "./webhooks";

export const ACCOUNT_MIGRATIONS: Migration[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE workflows (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        open_tasks INTEGER NOT NULL,
        tasks INTEGER NOT NULL,
        reviews_needed INTEGER NOT NULL
      )`,
      "CREATE INDEX workflows_updated ON workflows(updated_at)",
    ],
  },
  // Share state per workflow, pushed by the workflow object, for the dashboard.
  {
    version: 2,
    statements: [
      "ALTER TABLE workflows ADD COLUMN share_created_at TEXT",
      "ALTER TABLE workflows ADD COLUMN share_expires_at TEXT",
      "ALTER TABLE workflows ADD COLUMN share_revoked_at TEXT",
    ],
  },
  // Resume by name (name_key = trimmed, case-folded name; backfilled here for ASCII,
  // rewritten with JavaScript's case folding by the next push), usage totals, memory.
  {
    version: 3,
    statements: [
      "ALTER TABLE workflows ADD COLUMN name_key TEXT",
      "UPDATE workflows SET name_key = lower(trim(name))",
      "CREATE INDEX workflows_name_key ON workflows(name_key, status)",
      "ALTER TABLE workflows ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE workflows ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE workflows ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0",
      ...MEMORY_MIGRATION_STATEMENTS,
    ],
  },
  // Webhooks and their delivery queue.
  { version: 4, statements: WEBHOOK_MIGRATION_STATEMENTS },
  // Bytes each workflow stores, pushed with its summary: the account's storage quota.
  { version: 5, statements: ["ALTER TABLE workflows ADD COLUMN bytes_stored INTEGER NOT NULL DEFAULT 0"] },
  // Managed API tokens (src/account/tokens.ts).
  { version: 6, statements: TOKEN_MIGRATION_STATEMENTS },
  // Owner view: files changed per workflow, the path index, account settings (one row; the
  // public origin is recorded for links in webhooks), and each webhook's body format.
  {
    version: 7,
    statements: [
      "ALTER TABLE workflows ADD COLUMN files_changed INTEGER NOT NULL DEFAULT 0",
      ...PATH_INDEX_MIGRATION_STATEMENTS,
      `CREATE TABLE settings (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        share_new_workflows INTEGER NOT NULL DEFAULT 1,
        origin TEXT
      )`,
      ...WEBHOOK_FORMAT_MIGRATION_STATEMENTS,
      // Workflows whose live owner page a session opened: closed at sign-out.
      "CREATE TABLE session_follows (session_id TEXT NOT NULL, workflow_id TEXT NOT NULL, PRIMARY KEY (session_id, workflow_id))",
    ],
  },
  // Resume by name within one repository: name_key becomes resumeKey (name key, NUL, fingerprint).
  // Workflows indexed before carry no fingerprint.
  {
    version: 8,
    statements: ["UPDATE workflows SET name_key = name_key || char(0) WHERE name_key IS NOT NULL AND instr(name_key, char(0)) = 0"],
  },
  // Path search newest first without sorting every match of a broad prefix.
  { version: 9, statements: PATH_RECENCY_MIGRATION_STATEMENTS },
  // Access that follows its source: dashboard sessions in a table, each with the credential it was
  // opened with (capped per credential); each webhook with the credential that registered it.
  { version: 10, statements: [...SESSION_MIGRATION_STATEMENTS, ...WEBHOOK_CREDENTIAL_MIGRATION_STATEMENTS] },
];
