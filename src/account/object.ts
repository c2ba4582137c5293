/**
 * @module account/object
 * One Durable Object per account: the index of its workflows (dashboard, get_workflow without an
 * id, resume by name), its memory, path index, sessions, managed tokens, settings and webhooks.
 * A facade over collaborators that take its `sql`; never the source of truth for a workflow.
 */
import { DurableObject } from "cloudflare:workers";
import { type ShareInfo, shareStatus } from "../domain/share-status";
import { roundCost, type WorkflowSummary } from "../domain/view";
import { fail, ok, type Result } from "../errors";
import type { Scope } from "../http/scopes";
import { LIMITS } from "../limits";
import { type Migration, migrate } from "../storage/migrations";
import { type Sql, sqlFor } from "../storage/sql";
import { MEMORY_MIGRATION_STATEMENTS, type MemoryDocument, type MemoryHit, MemoryIndex, type RelatedItem } from "./memory";
import { PATH_INDEX_MIGRATION_STATEMENTS, type PathEntry, type PathHit, PathIndex } from "./path-index";
import { DashboardSessions } from "./sessions";
import { ApiTokens, type CreatedToken, type NewToken, TOKEN_MIGRATION_STATEMENTS, type TokenInfo, type VerifiedToken } from "./tokens";
import {
  allowPrivateTargets,
  type Notification,
  type RegisteredWebhook,
  retryBaseMs,
  type Sender,
  WEBHOOK_FORMAT_MIGRATION_STATEMENTS,
  WEBHOOK_MIGRATION_STATEMENTS,
  type WebhookEvent,
  type WebhookFormat,
  type WebhookStatus,
  Webhooks,
  webhookUrlProblem,
} from "./webhooks";

/** What a workflow object pushes with its summary after a write. */
export interface WorkflowPush {
  documents?: MemoryDocument[];
  notifications?: Notification[];
  /** Paths the pushed events' tasks changed: the path index. */
  paths?: PathEntry[];
}

/** What an owner decides for the whole account. */
export interface AccountSettings {
  /** Whether start_workflow gives new workflows a share link (default true); links can always be made later. */
  share_new_workflows: boolean;
}

/** The dashboard's filters; every one optional. */
export interface DashboardQuery {
  /** Words, searched in the account's memory (names, goals, outcomes, decisions, issues). */
  text?: string;
  /** A file path: exact, or every path starting with it when `prefix`. */
  path?: string;
  prefix?: boolean;
  status?: WorkflowSummary["status"];
  needs_review?: boolean;
  /** 0-based page of LIMITS.DASHBOARD_PAGE rows, newest activity first. */
  page?: number;
}

/** Why a workflow matched a search: the best memory hit and the changed paths found. */
export interface DashboardMatch {
  text?: string;
  paths?: { path: string; task_id: string; task_name: string; status: string }[];
}

export interface DashboardPage {
  rows: (DashboardRow & { match?: DashboardMatch })[];
  /** Rows matching the filters, over all pages. */
  total: number;
  page: number;
  pages: number;
}

/** Usage over all the account's workflows. */
export interface AccountTotals {
  workflows: number;
  open_workflows: number;
  tasks: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  files_changed: number;
}

/** An open workflow that start_workflow found under the same name. */
export interface ResumeCandidate {
  workflow_id: string;
  name: string;
  created_at: string;
  updated_at: string;
  open_tasks: number;
}

/** The key two workflow names are compared by: trimmed, case-folded. */
export const nameKey = (name: string) => name.trim().toLowerCase();
/**
 * The key resume-by-name looks workflows up by: the name key and the repository fingerprint
 * (empty without one), so work from different repositories is never merged, and a client
 * without a fingerprint only resumes workflows that have none either. Names hold no control
 * characters, so the separator cannot be forged.
 */
export const resumeKey = (name: string, fingerprint: string | null | undefined) => `${nameKey(name)}\u0000${fingerprint ?? ""}`;

/** A dashboard row: the summary plus the state of the workflow's share link. */
export interface DashboardRow extends WorkflowSummary {
  share: Omit<ShareInfo, "token">;
}

/**
 * One object per account: the index of its workflows (for get_workflow without an
 * id and the dashboard). Workflow objects push their summary here after each write;
 * nothing here is the source of truth for a workflow's content.
 */
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
];

export class AccountObject extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly memory: MemoryIndex;
  private readonly webhooks: Webhooks;
  private readonly paths: PathIndex;
  /** How webhook requests leave; a test may substitute a recorder. */
  sender: Sender = (url, init) => fetch(url, init);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = sqlFor(ctx.storage);
    this.memory = new MemoryIndex(this.sql);
    this.webhooks = new Webhooks(this.sql, retryBaseMs(env));
    this.paths = new PathIndex(this.sql);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage, ACCOUNT_MIGRATIONS));
  }

  /**
   * The workflow object's push after a write: its summary, the memory documents its new
   * events changed and the webhook notifications they raise. Replays are harmless:
   * documents upsert by entity id, notifications are keyed by event.
   */
  async recordWorkflow(account: string, summary: WorkflowSummary, push: WorkflowPush = {}): Promise<void> {
    const s = summary;
    let queued = false;
    this.ctx.storage.transactionSync(() => {
      this.sql`INSERT INTO workflows (id, name, name_key, status, created_at, updated_at, open_tasks, tasks, reviews_needed,
          input_tokens, output_tokens, cost_usd, bytes_stored, files_changed)
        VALUES (${s.id}, ${s.name}, ${resumeKey(s.name, s.repository_fingerprint)}, ${s.status}, ${s.created_at}, ${s.updated_at}, ${s.open_tasks}, ${s.tasks},
          ${s.reviews_needed}, ${s.input_tokens}, ${s.output_tokens}, ${s.cost_usd}, ${s.bytes_stored ?? 0}, ${s.files_changed ?? 0})
        ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, status = excluded.status,
          updated_at = excluded.updated_at, open_tasks = excluded.open_tasks, tasks = excluded.tasks,
          reviews_needed = excluded.reviews_needed, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
          cost_usd = excluded.cost_usd, bytes_stored = excluded.bytes_stored, files_changed = excluded.files_changed`;
      if (push.documents) this.memory.upsert(push.documents);
      if (push.paths) this.paths.record(s.id, push.paths);
      if (push.notifications) queued = this.webhooks.enqueue(account, push.notifications, this.storedSettings().origin);
    });
    if (queued) await this.scheduleDelivery(Date.now());
  }

  /** The most recently updated open workflow of that repository whose name matches (trimmed, case-insensitive), if any. */
  async openWorkflowNamed(name: string, fingerprint: string | null = null): Promise<ResumeCandidate | null> {
    const row = this.sql<Record<string, SqlStorageValue>>`
      SELECT * FROM workflows WHERE name_key = ${resumeKey(name, fingerprint)} AND status = 'active' ORDER BY updated_at DESC LIMIT 1`[0];
    if (!row) return null;
    const s = summaryFromRow(row);
    return { workflow_id: s.id, name: s.name, created_at: s.created_at, updated_at: s.updated_at, open_tasks: s.open_tasks };
  }

  /** What the account's quotas count: workflows and the bytes they store. */
  async usage(): Promise<{ workflows: number; bytes_stored: number }> {
    const row = this.sql<{
      workflows: number;
      bytes: number | null;
    }>`SELECT count(*) AS workflows, sum(bytes_stored) AS bytes FROM workflows`[0];
    return { workflows: row?.workflows ?? 0, bytes_stored: row?.bytes ?? 0 };
  }

  async totals(): Promise<AccountTotals> {
    const row = this.sql<{
      workflows: number;
      open: number | null;
      tasks: number | null;
      input_tokens: number | null;
      output_tokens: number | null;
      cost_usd: number | null;
      files_changed: number | null;
    }>`SELECT count(*) AS workflows, sum(status = 'active') AS open, sum(tasks) AS tasks, sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd, sum(files_changed) AS files_changed FROM workflows`[0];
    return {
      workflows: row?.workflows ?? 0,
      open_workflows: row?.open ?? 0,
      tasks: row?.tasks ?? 0,
      input_tokens: row?.input_tokens ?? 0,
      output_tokens: row?.output_tokens ?? 0,
      cost_usd: roundCost(row?.cost_usd ?? 0),
      // Summed per workflow: a file two workflows changed counts twice.
      files_changed: row?.files_changed ?? 0,
    };
  }

  // ── Memory ────────────────────────────────────────────────────────────────

  async search(query: string, limit: number): Promise<{ match: "all" | "any"; results: MemoryHit[] }> {
    return this.memory.search(query, limit);
  }

  async related(input: { workflow_id: string; task_id: string; name: string; goal: string; areas: string[] }): Promise<RelatedItem[]> {
    return this.memory.related(input);
  }

  // ── Webhooks ──────────────────────────────────────────────────────────────

  async registerWebhook(url: string, events: WebhookEvent[], format: WebhookFormat = "json"): Promise<Result<RegisteredWebhook>> {
    const problem = webhookUrlProblem(url, allowPrivateTargets(this.env));
    if (problem) return fail("INPUT_VALIDATION_ERROR", problem);
    return this.webhooks.register(url, events, format);
  }

  async listWebhooks(): Promise<WebhookStatus[]> {
    return this.webhooks.list();
  }

  async deleteWebhook(id: string): Promise<Result<{ id: string; deleted: true }>> {
    return this.webhooks.remove(id) ? ok({ id, deleted: true }) : fail("NOT_FOUND", `id: no webhook ${id} in this account`);
  }

  /** Delivers what is due, then sleeps until the next retry. */
  async alarm(): Promise<void> {
    const next = await this.webhooks.deliverDue(this.sender);
    if (next !== null) await this.scheduleDelivery(next);
  }

  private async scheduleDelivery(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  async listWorkflows(options: { openOnly?: boolean; limit?: number } = {}): Promise<WorkflowSummary[]> {
    const limit = Math.min(Math.max(options.limit ?? 50, 1), 500);
    const rows = options.openOnly
      ? this.sql<Record<string, SqlStorageValue>>`SELECT * FROM workflows WHERE status = 'active' ORDER BY updated_at DESC LIMIT ${limit}`
      : this.sql<Record<string, SqlStorageValue>>`SELECT * FROM workflows ORDER BY updated_at DESC LIMIT ${limit}`;
    return rows.map(summaryFromRow);
  }

  // ── Share links (dashboard) ───────────────────────────────────────────────

  /** The workflow object pushes its link state after each change; a row is only updated, never created, here. */
  async recordShare(workflowId: string, share: ShareInfo): Promise<void> {
    this.sql`UPDATE workflows SET share_created_at = ${share.created_at}, share_expires_at = ${share.expires_at},
      share_revoked_at = ${share.revoked_at} WHERE id = ${workflowId}`;
  }

  // ── Dashboard sessions (src/account/sessions.ts) ─────────────────────────

  private readonly sessions = new DashboardSessions(this.ctx.storage);

  async startSession(expiresAt: number): Promise<string> {
    return this.sessions.start(expiresAt);
  }

  async sessionActive(id: string): Promise<boolean> {
    return this.sessions.active(id);
  }

  /** Ends the session, and closes the live owner pages it opened. */
  async endSession(id: string): Promise<void> {
    await this.sessions.end(id);
    const followed = this.sql<{ workflow_id: string }>`DELETE FROM session_follows WHERE session_id = ${id} RETURNING workflow_id`;
    await Promise.all(
      followed.map(async ({ workflow_id }) => {
        try {
          await this.env.WORKFLOW.get(this.env.WORKFLOW.idFromName(workflow_id)).closeOwnerSockets(id);
        } catch (error) {
          console.error("closing a signed-out live page failed", error);
        }
      }),
    );
  }

  /**
   * Whether `session` is open; if so, notes that it follows `workflowId` live (at most
   * OWNER_FOLLOWS per session: a socket that could not be closed at sign-out is refused).
   */
  async followAsOwner(session: string, workflowId: string): Promise<boolean> {
    if (!(await this.sessions.active(session))) return false;
    const known = this.sql`SELECT 1 FROM session_follows WHERE session_id = ${session} AND workflow_id = ${workflowId}`.length > 0;
    if (known) return true;
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM session_follows WHERE session_id = ${session}`[0]?.n ?? 0;
    if (count >= LIMITS.OWNER_FOLLOWS) return false;
    this.sql`INSERT INTO session_follows (session_id, workflow_id) VALUES (${session}, ${workflowId})`;
    return true;
  }

  // ── Managed API tokens (src/account/tokens.ts) ──────────────────────────

  // Built from ctx (set by super) rather than this.sql, which the constructor body assigns after field initializers run.
  private readonly tokens = new ApiTokens(sqlFor(this.ctx.storage));

  async createToken(account: string, input: NewToken): Promise<Result<CreatedToken>> {
    return this.tokens.create(account, input);
  }

  async listTokens(): Promise<TokenInfo[]> {
    return this.tokens.list();
  }

  async revokeToken(id: string): Promise<Result<TokenInfo>> {
    return this.tokens.revoke(id);
  }

  async verifyToken(id: string, hash: string): Promise<VerifiedToken | null> {
    return this.tokens.verify(id, hash);
  }

  async activeTokenScopes(id: string): Promise<Scope[] | null> {
    return this.tokens.activeScopes(id);
  }

  async touchToken(id: string): Promise<void> {
    this.tokens.touch(id);
  }

  async dashboardRows(limit = 200): Promise<DashboardRow[]> {
    const rows = this.sql<
      Record<string, SqlStorageValue>
    >`SELECT * FROM workflows ORDER BY updated_at DESC LIMIT ${Math.min(Math.max(limit, 1), 500)}`;
    return rows.map(dashboardRowOf);
  }

  // ── Owner view: search, filters, pages; settings ─────────────────────────

  /**
   * One page of the account's workflows, newest activity first. Text narrows to the workflows
   * the memory index finds (its best hits), a path to the workflows whose tasks changed it;
   * status and needs-review filter the rest in SQL.
   */
  async dashboardPage(query: DashboardQuery): Promise<DashboardPage> {
    const matches = new Map<string, DashboardMatch>();
    let ids: string[] | null = null;
    const narrow = (found: Map<string, DashboardMatch>) => {
      ids = ids === null ? [...found.keys()] : ids.filter((id) => found.has(id));
      for (const [id, match] of found) matches.set(id, { ...matches.get(id), ...match });
    };
    if (query.text?.trim()) {
      const found = new Map<string, DashboardMatch>();
      for (const hit of this.memory.search(query.text, LIMITS.SEARCH_RESULTS).results) {
        if (!found.has(hit.workflow_id)) found.set(hit.workflow_id, { text: hit.text });
      }
      narrow(found);
    }
    if (query.path) {
      const found = new Map<string, DashboardMatch>();
      for (const hit of this.paths.find(query.path, query.prefix === true, LIMITS.PATHS_PER_WORKFLOW)) {
        const match = found.get(hit.workflow_id) ?? { paths: [] };
        if ((match.paths?.length ?? 0) < 5)
          match.paths?.push({ path: hit.path, task_id: hit.task_id, task_name: hit.task_name, status: hit.status });
        found.set(hit.workflow_id, match);
      }
      narrow(found);
    }
    const idList: string | null = ids === null ? null : JSON.stringify(ids);
    const status = query.status ?? null;
    const review = query.needs_review ? 1 : 0;
    const size = LIMITS.DASHBOARD_PAGE;
    const total =
      this.sql<{ n: number }>`SELECT count(*) AS n FROM workflows WHERE (${status} IS NULL OR status = ${status})
        AND (${review} = 0 OR reviews_needed > 0) AND (${idList} IS NULL OR id IN (SELECT value FROM json_each(${idList})))`[0]?.n ?? 0;
    const pages = Math.max(1, Math.ceil(total / size));
    const page = Math.min(Math.max(Math.trunc(query.page ?? 0), 0), pages - 1);
    const rows = this.sql<Record<string, SqlStorageValue>>`SELECT * FROM workflows WHERE (${status} IS NULL OR status = ${status})
        AND (${review} = 0 OR reviews_needed > 0) AND (${idList} IS NULL OR id IN (SELECT value FROM json_each(${idList})))
        ORDER BY updated_at DESC, id DESC LIMIT ${size} OFFSET ${page * size}`;
    return {
      rows: rows.map((r) => {
        const row = dashboardRowOf(r);
        const match = matches.get(row.id);
        return match ? { ...row, match } : row;
      }),
      total,
      page,
      pages,
    };
  }

  /** Which tasks changed `path` (exactly, or anything under it when `prefix`), newest first. */
  async searchPaths(path: string, prefix: boolean, limit: number): Promise<PathHit[]> {
    return this.paths.find(path, prefix, Math.min(Math.max(Math.trunc(limit), 1), LIMITS.SEARCH_RESULTS));
  }

  async settings(): Promise<AccountSettings> {
    return { share_new_workflows: this.storedSettings().share_new_workflows };
  }

  async updateSettings(settings: AccountSettings): Promise<AccountSettings> {
    this.sql`INSERT INTO settings (id, share_new_workflows) VALUES (1, ${settings.share_new_workflows ? 1 : 0})
      ON CONFLICT (id) DO UPDATE SET share_new_workflows = excluded.share_new_workflows`;
    return this.settings();
  }

  /**
   * The settings start_workflow needs, and the deployment's public origin as the caller saw it
   * (kept for the owner URL in webhook payloads; written only when it changes).
   */
  async settingsForNewWorkflow(origin: string): Promise<AccountSettings> {
    this.recordOrigin(origin);
    return this.settings();
  }

  /** The dashboard records the origin it is served from at sign-in. */
  async recordOrigin(origin: string): Promise<void> {
    if (this.storedSettings().origin === origin) return;
    this.sql`INSERT INTO settings (id, origin) VALUES (1, ${origin}) ON CONFLICT (id) DO UPDATE SET origin = excluded.origin`;
  }

  private storedSettings(): AccountSettings & { origin: string | null } {
    const row = this.sql<{
      share_new_workflows: number;
      origin: string | null;
    }>`SELECT share_new_workflows, origin FROM settings WHERE id = 1`[0];
    return { share_new_workflows: (row?.share_new_workflows ?? 1) === 1, origin: row?.origin ?? null };
  }
}

function dashboardRowOf(r: Record<string, SqlStorageValue>): DashboardRow {
  const now = Date.now();
  const time = (value: SqlStorageValue | undefined) => (value === null || value === undefined ? null : String(value));
  const created = time(r.share_created_at);
  const expires = time(r.share_expires_at);
  const revoked = time(r.share_revoked_at);
  const status =
    created === null
      ? "none"
      : shareStatus({ revoked_at: revoked === null ? null : 1, expires_at: expires === null ? null : Date.parse(expires) }, now);
  return { ...summaryFromRow(r), share: { status, created_at: created, expires_at: expires, revoked_at: revoked } };
}

function summaryFromRow(r: Record<string, SqlStorageValue>): WorkflowSummary {
  return {
    id: String(r.id),
    name: String(r.name),
    status: String(r.status) as WorkflowSummary["status"],
    created_at: String(r.created_at),
    updated_at: String(r.updated_at),
    open_tasks: Number(r.open_tasks),
    tasks: Number(r.tasks),
    reviews_needed: Number(r.reviews_needed),
    input_tokens: Number(r.input_tokens ?? 0),
    output_tokens: Number(r.output_tokens ?? 0),
    cost_usd: Number(r.cost_usd ?? 0),
    bytes_stored: Number(r.bytes_stored ?? 0),
    files_changed: Number(r.files_changed ?? 0),
  };
}
