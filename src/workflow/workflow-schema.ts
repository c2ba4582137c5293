/**
 * @module workflow/workflow-schema
 * SQLite schema of one WorkflowObject (one Durable Object per workflow), applied by
 * storage/migrations. Never edit a shipped migration; append a new one. docs/storage.md
 * explains every table.
 */
import { type Migration, rebuildWithoutRowid, type VersionRow } from "../storage/migrations";
import {
  FEEDBACK_AUTHOR_STATEMENTS,
  FEEDBACK_LOCATION_STATEMENTS,
  FEEDBACK_MIGRATION_STATEMENTS,
  FEEDBACK_REQUESTED_VERDICT_STATEMENT,
  FEEDBACK_UNDELIVERED,
  RECOUNT_REVIEW_ITEMS,
  RECOUNT_REVIEWS_NEEDED,
} from "./feedback";
import { FILE_CHANGES_SELECT, FILE_PAGE_COLUMNS } from "./task-files";
import type { WorkflowLazyTable } from "./workflow-tables";

/** The log tables' columns since v24 (WITHOUT ROWID, keyed in the order they are read). */
const DECISIONS = `
  id TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  category TEXT NOT NULL,
  question TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '[]',
  chosen TEXT NOT NULL,
  reasoning TEXT NOT NULL,
  trade_offs TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (created_at, id)`;
const ISSUES = `
  id TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  type TEXT NOT NULL,
  description TEXT NOT NULL,
  resolution TEXT NOT NULL,
  requires_human_review INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (created_at, id)`;
/** The issues that ask for human review, in the table's order: the others have no entry (a partial index). */
const ISSUES_REVIEW = "CREATE INDEX issues_review ON issues(created_at, id) WHERE requires_human_review = 1";
const MILESTONES = `
  id TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  message TEXT NOT NULL,
  progress REAL,
  metadata TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (created_at, id)`;

/** The log tables: one shape of key, each with its task index. */
const LOG_TABLES = ["decisions", "issues", "milestones"] as const;

/**
 * Since v27 a log entry is in its task's index (`in_task_index = 1`, a partial index) only when it
 * was written more than LIMITS.LOG_WINDOW_EVENTS events after its task started (or its task started
 * before v27): the others are found by the table's key, in the window of their task's start
 * (workflow/task-logs). An entry out of the index is a row written fewer.
 */
const IN_TASK_INDEX = "in_task_index INTEGER NOT NULL DEFAULT 1";
const taskIndex = (table: string) => `CREATE INDEX ${table}_task ON ${table}(task_id) WHERE in_task_index = 1`;

/**
 * The three logs as one table since v31 (workflow/task-logs): a table and its indexes were rows of
 * sqlite_schema in every new workflow's schema, three times over. Keyed by kind first, each kind
 * is the range of the key its own table was, read in the same (created_at, id) order; each kind's
 * columns are NULL in the others' rows, and its required ones are checked as NOT NULL was.
 */
const LOG_ENTRIES = `CREATE TABLE log_entries (
  kind TEXT NOT NULL CHECK (kind IN ('decisions', 'issues', 'milestones')),
  created_at INTEGER NOT NULL,
  id TEXT NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  ${IN_TASK_INDEX},
  category TEXT, question TEXT, options TEXT, chosen TEXT, reasoning TEXT, trade_offs TEXT,
  type TEXT, description TEXT, resolution TEXT, requires_human_review INTEGER,
  message TEXT, progress REAL, metadata TEXT,
  PRIMARY KEY (kind, created_at, id),
  CHECK (kind != 'decisions' OR (category IS NOT NULL AND question IS NOT NULL AND options IS NOT NULL AND chosen IS NOT NULL
    AND reasoning IS NOT NULL)),
  CHECK (kind != 'issues' OR (type IS NOT NULL AND description IS NOT NULL AND resolution IS NOT NULL
    AND requires_human_review IS NOT NULL)),
  CHECK (kind != 'milestones' OR message IS NOT NULL)
) WITHOUT ROWID`;
/** A kind's entries of a task past its log window (partial, as each table's task index was since v27); the key follows the task id. */
const LOG_ENTRIES_TASK = "CREATE INDEX log_entries_task ON log_entries(kind, task_id) WHERE in_task_index = 1";
/** The issues that ask for human review, in creation order (issues_review's entries; the other entries have none). */
const LOG_ENTRIES_REVIEW = "CREATE INDEX log_entries_review ON log_entries(created_at, id) WHERE requires_human_review = 1";
/** Each log table's own columns, as v31 copies them into log_entries. */
const LOG_COLUMNS = {
  decisions: "category, question, options, chosen, reasoning, trade_offs",
  issues: "type, description, resolution, requires_human_review",
  milestones: "message, progress, metadata",
} as const;

/** The workflow this object holds (one row) since v24: WITHOUT ROWID, its key the table. */
const WORKFLOW = `
  id TEXT PRIMARY KEY,
  account TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  plan TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'active',
  outcome TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  updated_at INTEGER NOT NULL,
  repository TEXT`;

/** Buckets of the changed paths' hashes (v24): `n` hashes of 32 characters each in `hashes`; the workflow row's `path_hashes` since v30. */
const CHANGED_PATH_SETS = "CREATE TABLE changed_path_sets (bucket INTEGER PRIMARY KEY, n INTEGER NOT NULL, hashes TEXT NOT NULL)";

/**
 * The tasks' columns at v27, as every migration added them. Since v28 the table is WITHOUT ROWID,
 * keyed by id: a task's row is found by its key, with no key index beside it (a row written fewer
 * per task), and every index entry holds the id instead of a rowid.
 */
const TASKS = `
  id TEXT PRIMARY KEY,
  parent_id TEXT REFERENCES tasks(id),
  name TEXT NOT NULL,
  goal TEXT NOT NULL,
  areas TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'in_progress',
  snapshot_type TEXT NOT NULL,
  snapshot_head TEXT,
  snapshot_meta TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER,
  duration_seconds INTEGER,
  outcome TEXT,
  metadata TEXT,
  files_changed TEXT,
  verification TEXT,
  input_tokens INTEGER, output_tokens INTEGER, model TEXT, cost_usd REAL,
  repository TEXT, metrics_source TEXT, price_table_date TEXT,
  files_count INTEGER, files_listed INTEGER,
  commands_observed INTEGER, commands_omitted INTEGER, last_edit_at INTEGER,
  start_signature TEXT, metrics_device TEXT,
  durability TEXT,
  review_facts TEXT, started_by TEXT, completed_by TEXT,
  files_unlisted_unexpected INTEGER,
  start_seq INTEGER`;

/** A task's children in start order (the timeline pages them; v9); it starts with `parent_id`, so the parent needs no index of its own (v24). */
const TASKS_SIBLINGS = "CREATE INDEX tasks_siblings ON tasks(parent_id, started_at, id)";
/** Completed tasks in completion order (overlap candidates, resume) and open tasks in start order (v24). */
const TASKS_DONE = "CREATE INDEX tasks_done ON tasks(completed_at) WHERE completed_at IS NOT NULL";
const TASKS_OPEN = "CREATE INDEX tasks_open ON tasks(started_at) WHERE status = 'in_progress'";

/** The copy of the account's device keys (migration 21's table; created on first use by v25; a column of totals since v27). */
const DEVICE_KEYS = `CREATE TABLE device_keys (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL,
  devices TEXT NOT NULL,
  fresh_until INTEGER NOT NULL
)`;
/** Device-signed payloads in parts (migration 16's table, unchanged since; created on first use now). */
const DEVICE_SIGNED = `CREATE TABLE device_signed (
  seq INTEGER NOT NULL,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  part INTEGER NOT NULL,
  text TEXT NOT NULL
)`;

/** Tables keyed by their primary key alone since v24 (WITHOUT ROWID): one row written per insert, not two. */
const SNAPSHOT_ENTRIES = `
  task_id TEXT NOT NULL REFERENCES tasks(id),
  path TEXT NOT NULL,
  head_mode TEXT, head_blob TEXT,
  worktree_mode TEXT, worktree_blob TEXT,
  PRIMARY KEY (task_id, path)`;
const TASK_OVERLAPS = `
  task_id TEXT NOT NULL REFERENCES tasks(id),
  ord INTEGER NOT NULL,
  path TEXT NOT NULL,
  other_task_id TEXT NOT NULL,
  same_change INTEGER NOT NULL,
  other_workflow_id TEXT,
  PRIMARY KEY (task_id, ord),
  UNIQUE (task_id, path, other_task_id)`;
const TASK_COMMANDS = `
  task_id TEXT NOT NULL REFERENCES tasks(id),
  ord INTEGER NOT NULL,
  command TEXT NOT NULL,
  truncated INTEGER NOT NULL,
  at INTEGER NOT NULL,
  exit_code INTEGER,
  duration_ms INTEGER,
  kinds TEXT NOT NULL,
  PRIMARY KEY (task_id, ord)`;
const IDEMPOTENCY = `
  key TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  result TEXT NOT NULL,
  created_at INTEGER NOT NULL`;

/**
 * A completed task's files, a page per row (v24): `files` is a JSON array of the files `first_ord`
 * to `last_ord`, each an array of FILE_PAGE_COLUMNS in that order (workflow/task-files writes
 * them), under the value limit (a statement chunk). One row written per page, not one per file.
 */
const FILE_PAGES = `CREATE TABLE file_pages (
  task_id TEXT NOT NULL,
  first_ord INTEGER NOT NULL,
  last_ord INTEGER NOT NULL,
  files TEXT NOT NULL,
  PRIMARY KEY (task_id, first_ord)
) WITHOUT ROWID`;
/** The files as one row each, as file_changes was a table before v24: a view from v24 to v28 (workflow/task-files FILE_CHANGES since). */
const FILE_CHANGES_VIEW = `CREATE VIEW file_changes AS ${FILE_CHANGES_SELECT}`;

/** The workflow row's share link since v31 (workflow/share): all NULL until a link is made; the token's hash, never the token. */
const SHARE_COLUMNS = [
  "share_token_hash TEXT",
  "share_salt TEXT",
  "share_created_at INTEGER",
  "share_expires_at INTEGER",
  "share_revoked_at INTEGER",
] as const;
/** The schema's version since v31: a column of the totals row, which every workflow has (storage/migrations VersionRow). */
const SCHEMA_VERSION_COLUMN = "schema_version INTEGER NOT NULL DEFAULT 0";
const VERSION = 31;
export const WORKFLOW_VERSION_ROW: VersionRow = { table: "totals", column: "schema_version", since: 31 };

export const WORKFLOW_MIGRATIONS: Migration[] = [
  {
    version: 1,
    statements: [
      // Exactly one row: the workflow this object holds.
      `CREATE TABLE workflow (
        id TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT,
        plan TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL DEFAULT 'active',
        outcome TEXT,
        created_at INTEGER NOT NULL,
        completed_at INTEGER,
        updated_at INTEGER NOT NULL
      )`,
      `CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        parent_id TEXT REFERENCES tasks(id),
        name TEXT NOT NULL,
        goal TEXT NOT NULL,
        areas TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL DEFAULT 'in_progress',
        snapshot_type TEXT NOT NULL,
        snapshot_head TEXT,
        snapshot_meta TEXT,
        started_at INTEGER NOT NULL,
        completed_at INTEGER,
        duration_seconds INTEGER,
        outcome TEXT,
        metadata TEXT,
        files_changed TEXT,
        verification TEXT
      )`,
      "CREATE INDEX tasks_parent ON tasks(parent_id)",
      // What the helper saw dirty or untracked at start_task; one row per path.
      `CREATE TABLE snapshot_entries (
        task_id TEXT NOT NULL REFERENCES tasks(id),
        path TEXT NOT NULL,
        head_mode TEXT, head_blob TEXT,
        worktree_mode TEXT, worktree_blob TEXT,
        PRIMARY KEY (task_id, path)
      )`,
      // The net change per path, as attributed at complete_task.
      `CREATE TABLE file_changes (
        task_id TEXT NOT NULL REFERENCES tasks(id),
        path TEXT NOT NULL,
        status TEXT NOT NULL,
        before_mode TEXT, before_blob TEXT,
        after_mode TEXT, after_blob TEXT,
        committed INTEGER NOT NULL,
        in_scope INTEGER NOT NULL,
        PRIMARY KEY (task_id, path)
      )`,
      `CREATE TABLE decisions (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id),
        category TEXT NOT NULL,
        question TEXT NOT NULL,
        options TEXT NOT NULL DEFAULT '[]',
        chosen TEXT NOT NULL,
        reasoning TEXT NOT NULL,
        trade_offs TEXT,
        created_at INTEGER NOT NULL
      )`,
      `CREATE TABLE issues (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id),
        type TEXT NOT NULL,
        description TEXT NOT NULL,
        resolution TEXT NOT NULL,
        requires_human_review INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
      )`,
      `CREATE TABLE milestones (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL REFERENCES tasks(id),
        message TEXT NOT NULL,
        progress REAL,
        metadata TEXT,
        created_at INTEGER NOT NULL
      )`,
      "CREATE INDEX decisions_task ON decisions(task_id)",
      "CREATE INDEX issues_task ON issues(task_id)",
      "CREATE INDEX milestones_task ON milestones(task_id)",
      // Append-only. seq is gap-free: rows are never deleted and every insert
      // happens inside the transaction of the write it records.
      `CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        task_id TEXT,
        data TEXT NOT NULL
      )`,
      // Results of mutating calls by idempotency key: a retry gets the first answer.
      `CREATE TABLE idempotency (
        key TEXT PRIMARY KEY,
        tool TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at INTEGER NOT NULL
      )`,
    ],
  },
  // Share links: the current link's hash, salt, expiry and revocation.
  // At most one row: the current link of this workflow. Only the salt and the token's hash are kept.
  {
    version: 2,
    statements: [
      `CREATE TABLE share_link (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token_hash TEXT NOT NULL,
        salt TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER
      )`,
    ],
  },
  // Usage per task, as the agent reports it at complete_task; NULL when not reported.
  {
    version: 3,
    statements: [
      "ALTER TABLE tasks ADD COLUMN input_tokens INTEGER",
      "ALTER TABLE tasks ADD COLUMN output_tokens INTEGER",
      "ALTER TABLE tasks ADD COLUMN model TEXT",
      "ALTER TABLE tasks ADD COLUMN cost_usd REAL",
    ],
  },
  // Outbox position: the last event the account index acknowledged. Events after it are pushed
  // again (idempotently) until the account takes them, so a failed push loses nothing.
  {
    version: 4,
    statements: ["CREATE TABLE account_sync (id INTEGER PRIMARY KEY CHECK (id = 1), synced_seq INTEGER NOT NULL)"],
  },
  // Totals kept up to date inside each write's transaction, so no write or read recomputes
  // them over the whole workflow; changed_paths makes "distinct files changed" incremental.
  // events and bytes_stored feed the per-workflow quotas. Backfilled from existing rows.
  {
    version: 5,
    statements: [
      `CREATE TABLE totals (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        tasks INTEGER NOT NULL DEFAULT 0,
        open_tasks INTEGER NOT NULL DEFAULT 0,
        duration_seconds INTEGER NOT NULL DEFAULT 0,
        files_changed INTEGER NOT NULL DEFAULT 0,
        decisions INTEGER NOT NULL DEFAULT 0,
        issues INTEGER NOT NULL DEFAULT 0,
        reviews_needed INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd REAL NOT NULL DEFAULT 0,
        events INTEGER NOT NULL DEFAULT 0,
        bytes_stored INTEGER NOT NULL DEFAULT 0
      )`,
      "CREATE TABLE changed_paths (path TEXT PRIMARY KEY)",
      "INSERT INTO changed_paths (path) SELECT DISTINCT path FROM file_changes",
      `INSERT INTO totals (id, tasks, open_tasks, duration_seconds, files_changed, decisions, issues, reviews_needed,
          input_tokens, output_tokens, cost_usd, events, bytes_stored)
        SELECT 1,
          (SELECT count(*) FROM tasks),
          (SELECT count(*) FROM tasks WHERE status = 'in_progress'),
          (SELECT coalesce(sum(duration_seconds), 0) FROM tasks WHERE parent_id IS NULL),
          (SELECT count(*) FROM changed_paths),
          (SELECT count(*) FROM decisions),
          (SELECT count(*) FROM issues),
          (SELECT coalesce(sum(requires_human_review), 0) FROM issues)
            + (SELECT count(*) FROM tasks WHERE json_extract(outcome, '$.manual_review_needed') = 1),
          (SELECT coalesce(sum(input_tokens), 0) FROM tasks),
          (SELECT coalesce(sum(output_tokens), 0) FROM tasks),
          (SELECT coalesce(sum(cost_usd), 0) FROM tasks),
          (SELECT count(*) FROM events),
          (SELECT coalesce(sum(length(data)), 0) FROM events)`,
      "CREATE INDEX tasks_completed ON tasks(completed_at)",
      "CREATE INDEX tasks_status ON tasks(status, started_at)",
      "CREATE INDEX idempotency_created ON idempotency(created_at)",
    ],
  },
  // The event log's hash chain: each event's hash covers the previous one (@waymark/protocol/chain).
  // Events written before this version are chained when the object next starts.
  { version: 6, statements: ["ALTER TABLE events ADD COLUMN hash TEXT"] },
  // Reviewer feedback from the owner view, and when each item reached the agent.
  { version: 7, statements: FEEDBACK_MIGRATION_STATEMENTS },
  // Provenance and repository identity (domain/provenance): the repository the helper reported
  // for the workflow and each task (JSON), and where each task's usage figures came from.
  // NULL on rows written before: shown as "not recorded".
  {
    version: 8,
    statements: [
      "ALTER TABLE workflow ADD COLUMN repository TEXT",
      "ALTER TABLE tasks ADD COLUMN repository TEXT",
      "ALTER TABLE tasks ADD COLUMN metrics_source TEXT",
      "ALTER TABLE tasks ADD COLUMN price_table_date TEXT",
    ],
  },
  // Paged reads (workflow/reader): the timeline walks siblings in start order, and the JSON
  // export pages every array in the whole view's order, each page an index range scan.
  {
    version: 9,
    statements: [
      "CREATE INDEX tasks_siblings ON tasks(parent_id, started_at, id)",
      "CREATE INDEX tasks_started ON tasks(started_at, id)",
      "CREATE INDEX decisions_created ON decisions(created_at, id)",
      "CREATE INDEX issues_created ON issues(created_at, id)",
      "CREATE INDEX milestones_created ON milestones(created_at, id)",
    ],
  },
  // An approving verdict settles a review item (workflow/feedback): reviews needed recounted once.
  { version: 10, statements: [RECOUNT_REVIEWS_NEEDED] },
  // The workflow's updated_at is the time of the agent's last write, and every agent write
  // appends an event at its own time: the event sets it, so no write spends a statement on it.
  // A reviewer's feedback is not the agent's work and leaves it as it was.
  {
    version: 11,
    statements: [
      `CREATE TRIGGER workflow_updated_at AFTER INSERT ON events WHEN NEW.type <> 'feedback.created'
        BEGIN UPDATE workflow SET updated_at = NEW.at; END`,
    ],
  },
  // A task's files stay rows, never one value (SQLite refuses any value over 2 MB): each
  // file_changes row carries its place in path order and its mark in every list (rename partner,
  // line counts, touched by the agent's tools); overlaps with concurrent tasks get rows of their
  // own; tasks keep how many files they changed and how many of the first a single value lists.
  // Tasks completed before keep their whole lists as JSON (files_count NULL) and are read as before.
  {
    version: 12,
    statements: [
      "ALTER TABLE file_changes ADD COLUMN ord INTEGER",
      "ALTER TABLE file_changes ADD COLUMN renamed_to TEXT",
      "ALTER TABLE file_changes ADD COLUMN lines_added INTEGER",
      "ALTER TABLE file_changes ADD COLUMN lines_removed INTEGER",
      "ALTER TABLE file_changes ADD COLUMN lines_binary INTEGER",
      "ALTER TABLE file_changes ADD COLUMN agent_edit INTEGER",
      "CREATE INDEX file_changes_order ON file_changes(task_id, ord)",
      `CREATE TABLE task_overlaps (
        task_id TEXT NOT NULL REFERENCES tasks(id),
        ord INTEGER NOT NULL,
        path TEXT NOT NULL,
        other_task_id TEXT NOT NULL,
        same_change INTEGER NOT NULL,
        other_workflow_id TEXT,
        PRIMARY KEY (task_id, ord),
        UNIQUE (task_id, path, other_task_id)
      )`,
      "ALTER TABLE tasks ADD COLUMN files_count INTEGER",
      "ALTER TABLE tasks ADD COLUMN files_listed INTEGER",
    ],
  },
  // Line attribution: of a file's added lines, how many the agent's edit tools wrote, others
  // wrote, and no hook observed (NULL: not attributed), and the ranges of its end content with
  // their writers and content hashes (JSON, at most WIRE_LIMITS.LINE_RANGES_PER_FILE: the Agent
  // Trace export reads them, no view carries them).
  {
    version: 13,
    statements: [
      "ALTER TABLE file_changes ADD COLUMN lines_agent INTEGER",
      "ALTER TABLE file_changes ADD COLUMN lines_others INTEGER",
      "ALTER TABLE file_changes ADD COLUMN lines_not_observed INTEGER",
      "ALTER TABLE file_changes ADD COLUMN line_ranges TEXT",
    ],
  },
  // Evidence (workflow/task-commands): the shell commands the helper's hooks observed during a
  // task, one row each in time order (command line redacted and bounded, never output); on the
  // task, whether they were observed at all (NULL: not observed), how many more were observed
  // than sent, and the agent's last edit through its edit tools.
  {
    version: 14,
    statements: [
      `CREATE TABLE task_commands (
        task_id TEXT NOT NULL REFERENCES tasks(id),
        ord INTEGER NOT NULL,
        command TEXT NOT NULL,
        truncated INTEGER NOT NULL,
        at INTEGER NOT NULL,
        exit_code INTEGER,
        duration_ms INTEGER,
        kinds TEXT NOT NULL,
        PRIMARY KEY (task_id, ord)
      )`,
      "ALTER TABLE tasks ADD COLUMN commands_observed INTEGER",
      "ALTER TABLE tasks ADD COLUMN commands_omitted INTEGER",
      "ALTER TABLE tasks ADD COLUMN last_edit_at INTEGER",
    ],
  },
  // Device signatures (domain/provenance): which approved device signed a task's start snapshot
  // and with which nonce (JSON StartSignature; its completion must name it), and the device whose
  // signature covered its usage (JSON DeviceRef). NULL: not signed, or recorded before.
  {
    version: 15,
    statements: ["ALTER TABLE tasks ADD COLUMN start_signature TEXT", "ALTER TABLE tasks ADD COLUMN metrics_device TEXT"],
  },
  // Device-signed payloads kept whole (workflow/device-signed): each accepted signature's message,
  // data and signature as canonical JSON, in parts under the value limit, with the event of the
  // write that kept it; the JSON export carries them for `waymark verify`.
  {
    version: 16,
    statements: [DEVICE_SIGNED],
  },
  // Who posted each feedback item and where (workflow/feedback.ts); NULL: recorded before.
  { version: 17, statements: FEEDBACK_AUTHOR_STATEMENTS },
  // Where a pull-request review comment was left (file, line, commit), from GitHub (workflow/feedback.ts); NULL: not on code.
  { version: 18, statements: FEEDBACK_LOCATION_STATEMENTS },
  // Earlier tasks' lines a completion's helper found still present or gone (JSON LineDurability[],
  // at most WIRE_LIMITS.DURABILITY_OBSERVATIONS; docs/insights.md); NULL: none reported.
  { version: 19, statements: ["ALTER TABLE tasks ADD COLUMN durability TEXT"] },
  // Review items (@waymark/protocol/review-counts): a completed task's part in the review counts,
  // kept as JSON when it completes (NULL: open, or completed before; read from its view then); the
  // credentials that started and completed each task (never shown: a verdict from a page session
  // signed in with one of them is recorded as a comment); the verdict a feedback item asked for
  // when it was recorded as a comment. Reviews needed now count failed tasks and tasks outside
  // their areas too: recounted once.
  {
    version: 20,
    statements: [
      "ALTER TABLE tasks ADD COLUMN review_facts TEXT",
      "ALTER TABLE tasks ADD COLUMN started_by TEXT",
      "ALTER TABLE tasks ADD COLUMN completed_by TEXT",
      FEEDBACK_REQUESTED_VERDICT_STATEMENT,
      RECOUNT_REVIEW_ITEMS,
    ],
  },
  // A copy of the account's device keys (workflow/device-keys): device signatures are verified
  // here, without a call to the account; trusted until fresh_until, changes pushed meanwhile.
  {
    version: 21,
    statements: [DEVICE_KEYS],
  },
  // Fewer rows written per write (each is billed): the outbox position and the time of the
  // agent's last write ride on the totals row every write updates anyway (workflow/totals), instead
  // of a row and a trigger of their own; changed_paths keeps each path once, without a rowid beside it.
  {
    version: 22,
    statements: [
      "ALTER TABLE totals ADD COLUMN synced_seq INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE totals ADD COLUMN updated_at INTEGER",
      `UPDATE totals SET synced_seq = coalesce((SELECT synced_seq FROM account_sync WHERE id = 1), 0),
        updated_at = (SELECT updated_at FROM workflow LIMIT 1)`,
      "DROP TABLE account_sync",
      "DROP TRIGGER workflow_updated_at",
      "CREATE TABLE changed_paths_v22 (path TEXT PRIMARY KEY) WITHOUT ROWID",
      "INSERT INTO changed_paths_v22 (path) SELECT path FROM changed_paths",
      "DROP TABLE changed_paths",
      "ALTER TABLE changed_paths_v22 RENAME TO changed_paths",
    ],
  },
  // A task's file rows keyed by (task, place in path order), without a rowid or an index beside
  // them: one row written per file instead of three (each is billed). A task's files are read in
  // that order or by position, and looked up by path within the task (rows read are cheap);
  // files of tasks completed before v12 (no place) get theirs in path order.
  {
    version: 23,
    statements: [
      `CREATE TABLE file_changes_v23 (
        task_id TEXT NOT NULL,
        ord INTEGER NOT NULL,
        path TEXT NOT NULL,
        status TEXT NOT NULL,
        before_mode TEXT, before_blob TEXT,
        after_mode TEXT, after_blob TEXT,
        committed INTEGER NOT NULL,
        in_scope INTEGER NOT NULL,
        renamed_to TEXT,
        lines_added INTEGER, lines_removed INTEGER, lines_binary INTEGER,
        agent_edit INTEGER,
        lines_agent INTEGER, lines_others INTEGER, lines_not_observed INTEGER,
        line_ranges TEXT,
        PRIMARY KEY (task_id, ord)
      ) WITHOUT ROWID`,
      `INSERT INTO file_changes_v23 SELECT task_id, coalesce(ord, row_number() OVER (PARTITION BY task_id ORDER BY path) - 1), path, status,
        before_mode, before_blob, after_mode, after_blob, committed, in_scope, renamed_to, lines_added, lines_removed, lines_binary,
        agent_edit, lines_agent, lines_others, lines_not_observed, line_ranges FROM file_changes`,
      "DROP TABLE file_changes",
      "ALTER TABLE file_changes_v23 RENAME TO file_changes",
    ],
  },
  // Fewer rows written per log entry and task (each is billed): a decision, issue or milestone is
  // kept in the order every read pages it (created_at, id) without a rowid or an id index beside
  // it, and its task's entries through one index; the index on a task's parent alone goes, as the
  // siblings index starts with it. A log entry is looked up by id only for a reviewer's feedback,
  // which reads its workflow's entries of that kind (rows read cost a thousandth of rows written).
  {
    version: 24,
    statements: [
      "DROP INDEX tasks_parent",
      ...rebuildWithoutRowid("workflow", WORKFLOW),
      ...rebuildWithoutRowid("decisions", DECISIONS),
      "CREATE INDEX decisions_task ON decisions(task_id)",
      ...rebuildWithoutRowid("issues", ISSUES),
      "CREATE INDEX issues_task ON issues(task_id)",
      ...rebuildWithoutRowid("milestones", MILESTONES),
      "CREATE INDEX milestones_task ON milestones(task_id)",
      FILE_PAGES,
      // Pages of at most about 256 Ki characters of paths and line ranges (a statement chunk's size).
      `INSERT INTO file_pages (task_id, first_ord, last_ord, files)
        SELECT task_id, min(ord), max(ord), json_group_array(json(file) ORDER BY ord) FROM (
          SELECT task_id, ord, json_array(${FILE_PAGE_COLUMNS.join(", ")}) AS file,
            sum(length(path) + coalesce(length(line_ranges), 0) + 200) OVER (PARTITION BY task_id ORDER BY ord) / 262144 AS page
          FROM file_changes
        ) GROUP BY task_id, page`,
      "DROP TABLE file_changes",
      FILE_CHANGES_VIEW,
      ...rebuildWithoutRowid("snapshot_entries", SNAPSHOT_ENTRIES),
      ...rebuildWithoutRowid("task_overlaps", TASK_OVERLAPS),
      ...rebuildWithoutRowid("task_commands", TASK_COMMANDS),
      ...rebuildWithoutRowid("idempotency", IDEMPOTENCY),
      "CREATE INDEX idempotency_created ON idempotency(created_at)",
      // The running totals ride on each write's last event (never exported); the totals row holds
      // them as of its `seq` (every event so far here), and is newer than the events only when a
      // write appended none. A later migration that recounts a total updates the row and sets
      // its seq to the last event's.
      // Open and completed tasks through partial indexes: a task is in the first while it runs and
      // in the second once it completes, one index row each instead of two kept all along.
      "DROP INDEX tasks_completed",
      "DROP INDEX tasks_status",
      TASKS_DONE,
      TASKS_OPEN,
      // How many of a task's files past the ones its view lists are outside its areas, counted when
      // it completes (NULL before: counted from its files when read).
      "ALTER TABLE tasks ADD COLUMN files_unlisted_unexpected INTEGER",
      // The paths tasks changed, hashed in a few rows (workflow/changed-paths); those recorded
      // before stay in changed_paths, one row each, and are looked up there.
      CHANGED_PATH_SETS,
      "ALTER TABLE events ADD COLUMN totals TEXT",
      "ALTER TABLE totals ADD COLUMN seq INTEGER NOT NULL DEFAULT 0",
      "UPDATE totals SET seq = coalesce((SELECT max(seq) FROM events), 0)",
    ],
  },
  // Indexes no read needs enough to pay a row written on every insert: the tasks in start order
  // (only the JSON export pages all tasks so; it sorts the task ids, at most TASKS_PER_WORKFLOW,
  // per page instead), the open tasks (two rows a task: its start and completion; the object keeps
  // their ids in memory, read by one scan per instance: workflow/records) and the idempotency keys
  // by age (read by the hourly sweep, which scans them).
  // A device-signed payload of one part rides on its event's row (`signed`) instead of a row of
  // its own (workflow/device-signed); those kept before stay in device_signed and read as before.
  // Since v25 a new workflow also creates the tables most never use on first use (WORKFLOW_LAZY_TABLES).
  {
    version: 25,
    statements: [
      "DROP INDEX tasks_started",
      "DROP INDEX tasks_open",
      "DROP INDEX idempotency_created",
      "ALTER TABLE events ADD COLUMN signed TEXT",
    ],
  },
  // The issues that ask for human review, in creation order: the resume lists them first, the
  // head counts them and the review counts read them, each without reading every issue. Only such
  // an issue gets an entry (a row written per flagged issue; none for the others).
  { version: 26, statements: [ISSUES_REVIEW] },
  // A task's log entries written soon after its start are found by the log table's key, in the
  // window from its start to the time of the LOG_WINDOW_EVENTS-th event after it, not through the
  // task index: the index keeps only later entries (a row written fewer per entry). Entries kept
  // before stay in the index (their tasks have no start seq), so nothing moves.
  // The device keys' copy moves to a column of the totals row, which every workflow has: its table
  // was two rows of sqlite_schema for each workflow a paired device signs in (created first where
  // it is missing, as a lazy table may be, so the copy's statement and the drop always run).
  {
    version: 27,
    statements: [
      "ALTER TABLE tasks ADD COLUMN start_seq INTEGER",
      ...["decisions", "issues", "milestones"].flatMap((table) => [
        `ALTER TABLE ${table} ADD COLUMN ${IN_TASK_INDEX}`,
        `DROP INDEX ${table}_task`,
        taskIndex(table),
      ]),
      "ALTER TABLE totals ADD COLUMN device_keys TEXT",
      DEVICE_KEYS.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"),
      `UPDATE totals SET device_keys = (SELECT json_object('generation', generation, 'devices', json(devices), 'fresh_until', fresh_until)
        FROM device_keys WHERE id = 1)`,
      "DROP TABLE device_keys",
    ],
  },
  // A task's row keyed by its id, without a rowid (v28): its start writes the row and its siblings
  // entry, not a key index entry beside them (a row written fewer per task). The export's task
  // pages read rows by id after picking them from the siblings index, as they read them by rowid.
  // Other tables' rows refer to tasks, and foreign keys are enforced (they cannot be turned off
  // inside the migration's transaction, and a rename would carry the references to the old table):
  // dropping the table deletes its rows first, which leaves those references without their task
  // until the rows are inserted again under the same name. So the check waits for the commit
  // (defer_foreign_keys, off again after it), the rows are copied aside and go back into the new
  // `tasks`, which settles every reference. Each row deleted and inserted looks its references up
  // in every table that refers to tasks: the log tables' task indexes are partial (v27), which such
  // a lookup cannot use, so a full index on each stands in while the migration runs, and the new
  // table has its indexes before its rows (a task's subtasks are found through tasks_siblings).
  // Without them it reads every entry and task for every task: 62 million rows, 2.3 s, at 5,000
  // tasks of one entry each.
  {
    version: 28,
    statements: [
      "PRAGMA defer_foreign_keys = ON",
      ...LOG_TABLES.map((table) => `CREATE INDEX ${table}_task_v28 ON ${table}(task_id)`),
      "CREATE TABLE tasks_v27 AS SELECT * FROM tasks",
      "DROP TABLE tasks",
      `CREATE TABLE tasks (${TASKS}\n) WITHOUT ROWID`,
      TASKS_DONE,
      TASKS_SIBLINGS,
      "INSERT INTO tasks SELECT * FROM tasks_v27",
      "DROP TABLE tasks_v27",
      ...LOG_TABLES.map((table) => `DROP INDEX ${table}_task_v28`),
    ],
  },
  // The view over the file pages goes: every read names the same select in its FROM
  // (workflow/task-files FILE_CHANGES), which SQLite reads as it read the view; a view was two
  // rows of sqlite_schema in every new workflow's schema.
  { version: 29, statements: ["DROP VIEW file_changes"] },
  // The packed set of changed paths moves to the workflow row (workflow/changed-paths), which every
  // workflow has and only start_workflow and complete_workflow write: its table was two rows of
  // sqlite_schema in every new workflow's schema. A set of one bucket moves (every set packed since
  // v24); a set an older build split into several buckets (past what one value should hold) stays,
  // read there and never written again, and the table with it (created on first use since v30: a
  // new workflow never creates it).
  {
    version: 30,
    statements: [
      "ALTER TABLE workflow ADD COLUMN path_hashes TEXT",
      `UPDATE workflow SET path_hashes = (SELECT hashes FROM changed_path_sets WHERE bucket = 0)
        WHERE NOT EXISTS (SELECT 1 FROM changed_path_sets WHERE bucket != 0)`,
      "DELETE FROM changed_path_sets WHERE NOT EXISTS (SELECT 1 FROM changed_path_sets WHERE bucket != 0)",
    ],
  },
  // The schema's version moves to the totals row (WORKFLOW_VERSION_ROW; storage/migrations drops
  // `schema_version` once it is there), and the share link to columns of the workflow row: each
  // table was two rows of sqlite_schema and its row in every new workflow's schema (a workflow's
  // link is written with its start when the account shares new workflows, the default), where a
  // column of a row written anyway is none, and the link's first write one update.
  // The three log tables become one (LOG_ENTRIES), every entry copied with its kind: three tables
  // and four indexes were eleven rows of every new workflow's schema, one table and two indexes are
  // four. Each kind stays a range of the key in the order it is read; the entries in their task's
  // index (in_task_index) stay in it.
  {
    version: 31,
    statements: [
      `ALTER TABLE totals ADD COLUMN ${SCHEMA_VERSION_COLUMN}`,
      ...SHARE_COLUMNS.map((column) => `ALTER TABLE workflow ADD COLUMN ${column}`),
      `UPDATE workflow SET (share_token_hash, share_salt, share_created_at, share_expires_at, share_revoked_at) =
        (SELECT token_hash, salt, created_at, expires_at, revoked_at FROM share_link WHERE id = 1)
        WHERE EXISTS (SELECT 1 FROM share_link WHERE id = 1)`,
      "DROP TABLE share_link",
      LOG_ENTRIES,
      ...LOG_TABLES.flatMap((table) => [
        `INSERT INTO log_entries (kind, created_at, id, task_id, in_task_index, ${LOG_COLUMNS[table]})
          SELECT '${table}', created_at, id, task_id, in_task_index, ${LOG_COLUMNS[table]} FROM ${table}`,
        `DROP TABLE ${table}`,
      ]),
      LOG_ENTRIES_TASK,
      LOG_ENTRIES_REVIEW,
    ],
  },
];

/**
 * Tables a new workflow creates on first use (storage/lazy-tables), each with its indexes, at the
 * current version: most workflows never write some of them (a reviewer's feedback, a dirty start,
 * overlapping tasks, observed commands, idempotency keys, more than PACKED_MAX changed paths), and
 * each CREATE is rows written. Objects migrated from before they were lazy have them all.
 * `changed_path_sets` is only ever read (a set an older build split in buckets, kept since v30): no
 * write creates it, a new workflow never has it.
 */
export const WORKFLOW_LAZY_TABLES = {
  snapshot_entries: [`CREATE TABLE snapshot_entries (${SNAPSHOT_ENTRIES}\n) WITHOUT ROWID`],
  task_overlaps: [`CREATE TABLE task_overlaps (${TASK_OVERLAPS}\n) WITHOUT ROWID`],
  task_commands: [`CREATE TABLE task_commands (${TASK_COMMANDS}\n) WITHOUT ROWID`],
  idempotency: [`CREATE TABLE idempotency (${IDEMPOTENCY}\n) WITHOUT ROWID`],
  changed_paths: ["CREATE TABLE changed_paths (path TEXT PRIMARY KEY) WITHOUT ROWID"],
  changed_path_sets: [CHANGED_PATH_SETS],
  device_signed: [DEVICE_SIGNED],
  feedback: [
    `CREATE TABLE feedback (
      id TEXT PRIMARY KEY,
      target TEXT NOT NULL,
      target_id TEXT NOT NULL,
      verdict TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      delivered_at INTEGER,
      author TEXT, channel TEXT, location TEXT, requested_verdict TEXT
    )`,
    FEEDBACK_UNDELIVERED,
  ],
} as const satisfies Record<WorkflowLazyTable, readonly string[]>;

/**
 * A new workflow's whole schema at the last migration's version, created in one go instead of
 * replaying every migration (table rebuilds included): each statement a new object runs is rows
 * written, and it runs once per workflow. Existing objects keep migrating one version at a time;
 * test/workflow/schema.test.ts proves a migrated object and a new one end with the same tables,
 * columns, keys and indexes (once the new one's lazy tables exist). A new migration changes this
 * script too, in the same commit. The tables of WORKFLOW_LAZY_TABLES are left out: each is created
 * by the first write that needs it.
 */
export const WORKFLOW_SCHEMA: Migration = {
  version: VERSION,
  statements: [
    `CREATE TABLE workflow (${WORKFLOW},\n  path_hashes TEXT,\n  ${SHARE_COLUMNS.join(",\n  ")}\n) WITHOUT ROWID`,
    `CREATE TABLE tasks (${TASKS}\n) WITHOUT ROWID`,
    TASKS_DONE,
    TASKS_SIBLINGS,
    FILE_PAGES,
    LOG_ENTRIES,
    LOG_ENTRIES_TASK,
    LOG_ENTRIES_REVIEW,
    `CREATE TABLE events (
      seq INTEGER PRIMARY KEY,
      at INTEGER NOT NULL,
      type TEXT NOT NULL,
      task_id TEXT,
      data TEXT NOT NULL,
      hash TEXT,
      totals TEXT,
      signed TEXT
    )`,
    `CREATE TABLE totals (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      tasks INTEGER NOT NULL DEFAULT 0,
      open_tasks INTEGER NOT NULL DEFAULT 0,
      duration_seconds INTEGER NOT NULL DEFAULT 0,
      files_changed INTEGER NOT NULL DEFAULT 0,
      decisions INTEGER NOT NULL DEFAULT 0,
      issues INTEGER NOT NULL DEFAULT 0,
      reviews_needed INTEGER NOT NULL DEFAULT 0,
      input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      cost_usd REAL NOT NULL DEFAULT 0,
      events INTEGER NOT NULL DEFAULT 0,
      bytes_stored INTEGER NOT NULL DEFAULT 0,
      synced_seq INTEGER NOT NULL DEFAULT 0,
      updated_at INTEGER,
      seq INTEGER NOT NULL DEFAULT 0,
      device_keys TEXT,
      ${SCHEMA_VERSION_COLUMN}
    )`,
    // The schema's version with the row (WORKFLOW_VERSION_ROW): no table of its own.
    `INSERT INTO totals (id, schema_version) VALUES (1, ${VERSION})`,
  ],
};
