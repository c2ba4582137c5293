/**
 * @module account/account-schema
 * SQLite schema of one AccountObject, applied in order by storage/migrations when the object
 * starts. Never edit a shipped migration; append a new one. docs/storage.md explains every table.
 */
import { type Migration, rebuildWithoutRowid } from "../storage/migrations";

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
      // Memory: the full-text index of past work (account/memory).
      `CREATE TABLE memory_docs (
        rowid INTEGER PRIMARY KEY,
        entity_id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        task_id TEXT,
        text TEXT NOT NULL,
        at TEXT NOT NULL
      )`,
      "CREATE INDEX memory_docs_kind ON memory_docs(kind)",
      // rowid = memory_docs.rowid. Porter stemming so "migrating" finds "migration"; accents folded.
      "CREATE VIRTUAL TABLE memory_fts USING fts5(title, body, context, tokenize = 'porter unicode61 remove_diacritics 2')",
    ],
  },
  // Webhooks and their delivery queue.
  {
    version: 4,
    statements: [
      `CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        secret TEXT NOT NULL,
        events TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_status TEXT,
        last_http_status INTEGER,
        last_attempt_at INTEGER,
        last_error TEXT,
        delivered INTEGER NOT NULL DEFAULT 0,
        failed INTEGER NOT NULL DEFAULT 0
      )`,
      `CREATE TABLE webhook_deliveries (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        source_key TEXT NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (webhook_id, source_key)
      )`,
      "CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at)",
    ],
  },
  // Bytes each workflow stores, pushed with its summary: the account's storage quota.
  { version: 5, statements: ["ALTER TABLE workflows ADD COLUMN bytes_stored INTEGER NOT NULL DEFAULT 0"] },
  // Managed API tokens (src/account/tokens.ts).
  {
    version: 6,
    statements: [
      `CREATE TABLE api_tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        scopes TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        last_used_at TEXT,
        revoked_at TEXT
      )`,
    ],
  },
  // Owner view: files changed per workflow, the path index, account settings (one row; the
  // public origin is recorded for links in webhooks), and each webhook's body format.
  {
    version: 7,
    statements: [
      "ALTER TABLE workflows ADD COLUMN files_changed INTEGER NOT NULL DEFAULT 0",
      `CREATE TABLE workflow_paths (
        path TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_name TEXT NOT NULL,
        status TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (path, workflow_id, task_id)
      )`,
      "CREATE INDEX workflow_paths_workflow ON workflow_paths(workflow_id)",
      `CREATE TABLE settings (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        share_new_workflows INTEGER NOT NULL DEFAULT 1,
        origin TEXT
      )`,
      // The body format each webhook chose.
      "ALTER TABLE webhooks ADD COLUMN format TEXT NOT NULL DEFAULT 'json'",
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
  { version: 9, statements: ["CREATE INDEX workflow_paths_recent ON workflow_paths(at DESC, path)"] },
  // Access that follows its source (src/domain/credentials.ts): dashboard sessions in a table, each
  // with the credential it was opened with (capped per credential, src/account/sessions.ts; sessions
  // kept in the key-value store before are dropped at the next sign-in); each webhook with the
  // credential that registered it and when it stops (webhooks registered before have neither).
  {
    version: 10,
    statements: [
      `CREATE TABLE dashboard_sessions (
        id TEXT PRIMARY KEY,
        credential TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      )`,
      "CREATE INDEX dashboard_sessions_credential ON dashboard_sessions(credential, expires_at)",
      "CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at)",
      "ALTER TABLE webhooks ADD COLUMN credential TEXT",
      "ALTER TABLE webhooks ADD COLUMN expires_at INTEGER",
    ],
  },
  // The repository each workflow started in (remote, branch, fingerprint), so the dashboard tells
  // apart workflows of one name from different repositories; rows pushed before stay null until
  // their workflow's next write pushes its summary again.
  {
    version: 11,
    statements: [
      "ALTER TABLE workflows ADD COLUMN repository_remote TEXT",
      "ALTER TABLE workflows ADD COLUMN repository_branch TEXT",
      "ALTER TABLE workflows ADD COLUMN repository_fingerprint TEXT",
    ],
  },
  // Devices whose helpers sign (account/devices), and pairing requests waiting for the owner
  // (the code only as a hash; expires_at in ms).
  {
    version: 12,
    statements: [
      `CREATE TABLE devices (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        public_key TEXT NOT NULL UNIQUE,
        fingerprint TEXT NOT NULL,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      )`,
      `CREATE TABLE device_pairings (
        code_hash TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        name TEXT NOT NULL,
        requested_at TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      )`,
    ],
  },
  // Each pairing request with the credential that asked (bounded per credential; a revoked token's
  // requests go with it); requests made before have none and expire within ten minutes.
  {
    version: 13,
    statements: [
      "ALTER TABLE device_pairings ADD COLUMN credential TEXT",
      "CREATE INDEX device_pairings_credential ON device_pairings(credential, expires_at)",
    ],
  },
  // The commit index (account/commit-index): which task made which commit, for `waymark ci` and
  // for mapping a pull-request review to its task. GitHub's webhook receiver (account/github-receiver):
  // its one secret per account, and the delivery ids it has answered (idempotency, kept a week).
  {
    version: 14,
    statements: [
      `CREATE TABLE workflow_commits (
        sha TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_name TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (sha, workflow_id, task_id)
      )`,
      "CREATE INDEX workflow_commits_workflow ON workflow_commits(workflow_id)",
      `CREATE TABLE github_receiver (
        id TEXT PRIMARY KEY,
        secret TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        credential TEXT NOT NULL,
        last_delivery_at INTEGER,
        last_result TEXT
      )`,
      `CREATE TABLE github_deliveries (
        delivery_id TEXT PRIMARY KEY,
        received_at INTEGER NOT NULL,
        result TEXT NOT NULL
      )`,
      "CREATE INDEX github_deliveries_received ON github_deliveries(received_at)",
    ],
  },
  // Insights (account/insights, docs/insights.md): per completed top-level task its facts and what it
  // adds to the rollups; people's verdicts on tasks; durability observed by later tasks' helpers; the
  // rollups, one vector of sums per day, week and month and agent × model × repository group (the
  // figures of any period are summed from them, never from the tasks); the groups kept apart (bounded per account); each repository's last reported remote;
  // the layout version of the sums (a new layout rebuilds the rollups from the task rows).
  {
    version: 15,
    statements: [
      `CREATE TABLE insight_tasks (
        task_id TEXT PRIMARY KEY,
        workflow_id TEXT NOT NULL,
        day TEXT NOT NULL,
        agent TEXT NOT NULL,
        model TEXT NOT NULL,
        repository TEXT NOT NULL,
        completed_at INTEGER NOT NULL,
        fact TEXT NOT NULL,
        contribution TEXT NOT NULL
      )`,
      "CREATE INDEX insight_tasks_workflow ON insight_tasks(workflow_id)",
      `CREATE TABLE insight_verdicts (
        feedback_id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        verdict TEXT NOT NULL,
        at INTEGER NOT NULL
      )`,
      "CREATE INDEX insight_verdicts_task ON insight_verdicts(task_id, at)",
      // What a later task's helper observed of a task's lines (one row per reporting task).
      `CREATE TABLE insight_durability (
        task_id TEXT NOT NULL,
        reported_by TEXT NOT NULL,
        at INTEGER NOT NULL,
        recorded INTEGER NOT NULL,
        present INTEGER NOT NULL,
        kind TEXT NOT NULL,
        commit_id TEXT,
        PRIMARY KEY (task_id, reported_by)
      )`,
      // kind: day, week or month; start: the bucket's first day (domain/insight-buckets).
      `CREATE TABLE insight_buckets (
        kind TEXT NOT NULL,
        start TEXT NOT NULL,
        agent TEXT NOT NULL,
        model TEXT NOT NULL,
        repository TEXT NOT NULL,
        sums TEXT NOT NULL,
        PRIMARY KEY (kind, start, agent, model, repository)
      )`,
      `CREATE TABLE insight_groups (
        agent TEXT NOT NULL,
        model TEXT NOT NULL,
        repository TEXT NOT NULL,
        PRIMARY KEY (agent, model, repository)
      )`,
      "CREATE TABLE insight_repositories (fingerprint TEXT PRIMARY KEY, remote TEXT, at TEXT NOT NULL)",
      "CREATE TABLE insight_state (id INTEGER PRIMARY KEY CHECK (id = 1), measures_version INTEGER NOT NULL)",
    ],
  },
  // The workflow objects that keep a copy of the devices' keys (account/device-subscribers) and
  // until when: every approval and revocation is pushed to them.
  {
    version: 16,
    statements: ["CREATE TABLE device_subscribers (workflow_id TEXT PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID"],
  },
  // The path index without a rowid beside its key, and without its index by workflow (which only
  // counted a workflow's paths against their bound: the workflow's row counts them now): each path
  // a task changed is two rows written fewer (each is billed).
  {
    version: 17,
    statements: [
      "ALTER TABLE workflows ADD COLUMN paths_indexed INTEGER NOT NULL DEFAULT 0",
      "UPDATE workflows SET paths_indexed = (SELECT count(*) FROM workflow_paths WHERE workflow_id = workflows.id)",
      `CREATE TABLE workflow_paths_v17 (
        path TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        task_name TEXT NOT NULL,
        status TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (path, workflow_id, task_id)
      ) WITHOUT ROWID`,
      "INSERT INTO workflow_paths_v17 SELECT path, workflow_id, task_id, task_name, status, at FROM workflow_paths",
      "DROP TABLE workflow_paths",
      "ALTER TABLE workflow_paths_v17 RENAME TO workflow_paths",
      "CREATE INDEX workflow_paths_recent ON workflow_paths(at DESC, path)",
    ],
  },
  // Rows written per push, cut. The path index packed: one row per task completion (its paths as JSON, in parts of bounded
  // size) instead of two rows written per path (the row and its recency index); a lookup scans the
  // newest sets (account/path-index). And the workflows' summaries without their index on
  // updated_at: every push moved the row's entry in it (a second row written per push), while the
  // lists that sort by it read at most ACCOUNT_WORKFLOWS rows (reads cost a thousandth of a write).
  {
    version: 18,
    statements: [
      `CREATE TABLE path_sets (
        at TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        part INTEGER NOT NULL,
        task_name TEXT NOT NULL,
        paths TEXT NOT NULL,
        PRIMARY KEY (at, workflow_id, task_id, part)
      ) WITHOUT ROWID`,
      // 200 paths of at most PATH_BYTES each per part: under the 2 MB a stored value may take.
      `INSERT INTO path_sets (at, workflow_id, task_id, part, task_name, paths)
        SELECT at, workflow_id, task_id, part, max(task_name), json_group_array(json_array(path, status))
        FROM (SELECT *, (row_number() OVER (PARTITION BY at, workflow_id, task_id ORDER BY path) - 1) / 200 AS part FROM workflow_paths)
        GROUP BY at, workflow_id, task_id, part`,
      "DROP TABLE workflow_paths",
      "DROP INDEX workflows_updated",
      // Memory documents keyed by their entity id (no rowid, no unique index, no index by kind, which
      // no query read alone): the FTS entry names its document's entity, and the document its FTS
      // rowid (its place: related work ranks the newest). A new document is two rows written, not four.
      "CREATE VIRTUAL TABLE memory_fts_v18 USING fts5(title, body, context, entity_id UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')",
      `INSERT INTO memory_fts_v18 (rowid, title, body, context, entity_id)
        SELECT f.rowid, f.title, f.body, f.context, d.entity_id FROM memory_fts f JOIN memory_docs d ON d.rowid = f.rowid`,
      `CREATE TABLE memory_docs_v18 (
        entity_id TEXT PRIMARY KEY,
        doc INTEGER NOT NULL,
        kind TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        task_id TEXT,
        text TEXT NOT NULL,
        at TEXT NOT NULL
      ) WITHOUT ROWID`,
      "INSERT INTO memory_docs_v18 SELECT entity_id, rowid, kind, workflow_id, task_id, text, at FROM memory_docs",
      "DROP TABLE memory_fts",
      "DROP TABLE memory_docs",
      "ALTER TABLE memory_fts_v18 RENAME TO memory_fts",
      "ALTER TABLE memory_docs_v18 RENAME TO memory_docs",
      // The Insights tables keyed by their key alone, without a rowid beside it (one row written per
      // insert instead of two), and the tasks without their index by workflow, which no query reads.
      // Columns in the order v15 created them: the rows are copied as they are.
      ...rebuildWithoutRowid(
        "insight_tasks",
        `task_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, day TEXT NOT NULL, agent TEXT NOT NULL, model TEXT NOT NULL,
        repository TEXT NOT NULL, completed_at INTEGER NOT NULL, fact TEXT NOT NULL, contribution TEXT NOT NULL`,
      ),
      ...rebuildWithoutRowid(
        "insight_buckets",
        `kind TEXT NOT NULL, start TEXT NOT NULL, agent TEXT NOT NULL, model TEXT NOT NULL, repository TEXT NOT NULL,
        sums TEXT NOT NULL, PRIMARY KEY (kind, start, agent, model, repository)`,
      ),
      ...rebuildWithoutRowid(
        "insight_groups",
        "agent TEXT NOT NULL, model TEXT NOT NULL, repository TEXT NOT NULL, PRIMARY KEY (agent, model, repository)",
      ),
      ...rebuildWithoutRowid("insight_repositories", "fingerprint TEXT PRIMARY KEY, remote TEXT, at TEXT NOT NULL"),
    ],
  },
  // Memory in one FTS table: each document's entity id (an indexed column of its own, `ref`, that
  // searches leave out) and its result columns (unindexed) live in its FTS entry, so a new or
  // changed document is one row written instead of two. A document is found by its id through
  // the index (`ref` matched as a phrase, then compared exactly); its rowid keeps its place.
  {
    version: 19,
    statements: [
      `CREATE VIRTUAL TABLE memory_fts_v19 USING fts5(title, body, context, ref, kind UNINDEXED, workflow_id UNINDEXED, task_id UNINDEXED,
        text UNINDEXED, at UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')`,
      `INSERT INTO memory_fts_v19 (rowid, title, body, context, ref, kind, workflow_id, task_id, text, at)
        SELECT f.rowid, f.title, f.body, f.context, d.entity_id, d.kind, d.workflow_id, d.task_id, d.text, d.at
        FROM memory_fts f JOIN memory_docs d ON d.entity_id = f.entity_id`,
      "DROP TABLE memory_fts",
      "DROP TABLE memory_docs",
      "ALTER TABLE memory_fts_v19 RENAME TO memory_fts",
    ],
  },
  {
    version: 20,
    statements: [
      // The Insights rollups without week buckets (domain/insight-buckets STORED_KINDS): a week's
      // trend point is summed from its days, which every account already holds, so the week rows are
      // read by nothing and go; each completed task then writes two buckets instead of three.
      "DELETE FROM insight_buckets WHERE kind = 'week'",
      // The workflows' summaries keyed by their id alone, without a rowid beside it: a new workflow's
      // row is two rows written (the row, its resume-key entry) instead of three. Columns in the order
      // v1 to v18 gave them: the rows are copied as they are.
      ...rebuildWithoutRowid(
        "workflows",
        `id TEXT PRIMARY KEY, name TEXT NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        open_tasks INTEGER NOT NULL, tasks INTEGER NOT NULL, reviews_needed INTEGER NOT NULL, share_created_at TEXT,
        share_expires_at TEXT, share_revoked_at TEXT, name_key TEXT, input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL NOT NULL DEFAULT 0, bytes_stored INTEGER NOT NULL DEFAULT 0,
        files_changed INTEGER NOT NULL DEFAULT 0, repository_remote TEXT, repository_branch TEXT, repository_fingerprint TEXT,
        paths_indexed INTEGER NOT NULL DEFAULT 0`,
      ),
      "CREATE INDEX workflows_name_key ON workflows(name_key, status)",
    ],
  },
  // The resume-by-name index holds open workflows only (resume reads nothing else): a workflow's
  // completion takes its entry out, one row written (its summary's; moving the entry within an index
  // on (name_key, status) wrote two), and a new workflow's row is two rows written as before.
  {
    version: 21,
    statements: ["DROP INDEX workflows_name_key", "CREATE INDEX workflows_name_key ON workflows(name_key) WHERE status = 'active'"],
  },
];
