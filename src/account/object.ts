import { DurableObject } from "cloudflare:workers";
import { type ShareInfo, shareStatus } from "../domain/share-status";
import { roundCost, type WorkflowSummary } from "../domain/view";
import { fail, ok, type Result } from "../errors";
import { type Migration, migrate } from "../storage/migrations";
import { type Sql, sqlFor } from "../storage/sql";
import { MEMORY_MIGRATION_STATEMENTS, type MemoryDocument, type MemoryHit, MemoryIndex, type RelatedItem } from "./memory";
import { DashboardSessions } from "./sessions";
import {
  allowPrivateTargets,
  type Notification,
  type RegisteredWebhook,
  retryBaseMs,
  type Sender,
  WEBHOOK_MIGRATION_STATEMENTS,
  type WebhookEvent,
  type WebhookStatus,
  Webhooks,
  webhookUrlProblem,
} from "./webhooks";

/** What a workflow object pushes with its summary after a write. */
export interface WorkflowPush {
  documents?: MemoryDocument[];
  notifications?: Notification[];
}

/** Usage over all the account's workflows. */
export interface AccountTotals {
  workflows: number;
  open_workflows: number;
  tasks: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
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
  // Resume by name within one repository: name_key becomes resumeKey (name key, NUL, fingerprint).
  // Workflows indexed before carry no fingerprint.
  {
    version: 6,
    statements: ["UPDATE workflows SET name_key = name_key || char(0) WHERE name_key IS NOT NULL AND instr(name_key, char(0)) = 0"],
  },
];

export class AccountObject extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly memory: MemoryIndex;
  private readonly webhooks: Webhooks;
  /** How webhook requests leave; a test may substitute a recorder. */
  sender: Sender = (url, init) => fetch(url, init);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = sqlFor(ctx.storage);
    this.memory = new MemoryIndex(this.sql);
    this.webhooks = new Webhooks(this.sql, retryBaseMs(env));
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
          input_tokens, output_tokens, cost_usd, bytes_stored)
        VALUES (${s.id}, ${s.name}, ${resumeKey(s.name, s.repository_fingerprint)}, ${s.status}, ${s.created_at}, ${s.updated_at}, ${s.open_tasks}, ${s.tasks},
          ${s.reviews_needed}, ${s.input_tokens}, ${s.output_tokens}, ${s.cost_usd}, ${s.bytes_stored ?? 0})
        ON CONFLICT (id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, status = excluded.status,
          updated_at = excluded.updated_at, open_tasks = excluded.open_tasks, tasks = excluded.tasks,
          reviews_needed = excluded.reviews_needed, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
          cost_usd = excluded.cost_usd, bytes_stored = excluded.bytes_stored`;
      if (push.documents) this.memory.upsert(push.documents);
      if (push.notifications) queued = this.webhooks.enqueue(account, push.notifications);
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
    }>`SELECT count(*) AS workflows, sum(status = 'active') AS open, sum(tasks) AS tasks, sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd FROM workflows`[0];
    return {
      workflows: row?.workflows ?? 0,
      open_workflows: row?.open ?? 0,
      tasks: row?.tasks ?? 0,
      input_tokens: row?.input_tokens ?? 0,
      output_tokens: row?.output_tokens ?? 0,
      cost_usd: roundCost(row?.cost_usd ?? 0),
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

  async registerWebhook(url: string, events: WebhookEvent[]): Promise<Result<RegisteredWebhook>> {
    const problem = webhookUrlProblem(url, allowPrivateTargets(this.env));
    if (problem) return fail("INPUT_VALIDATION_ERROR", problem);
    return this.webhooks.register(url, events);
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

  async endSession(id: string): Promise<void> {
    await this.sessions.end(id);
  }

  async dashboardRows(limit = 200): Promise<DashboardRow[]> {
    const rows = this.sql<
      Record<string, SqlStorageValue>
    >`SELECT * FROM workflows ORDER BY updated_at DESC LIMIT ${Math.min(Math.max(limit, 1), 500)}`;
    const now = Date.now();
    const time = (value: SqlStorageValue) => (value === null ? null : String(value));
    return rows.map((r) => {
      const created = time(r.share_created_at ?? null);
      const expires = time(r.share_expires_at ?? null);
      const revoked = time(r.share_revoked_at ?? null);
      const status =
        created === null
          ? "none"
          : shareStatus({ revoked_at: revoked === null ? null : 1, expires_at: expires === null ? null : Date.parse(expires) }, now);
      return { ...summaryFromRow(r), share: { status, created_at: created, expires_at: expires, revoked_at: revoked } };
    });
  }
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
  };
}
