import { DurableObject } from "cloudflare:workers";
import { type Migration, migrate } from "../workflow/schema";
import { type ShareInfo, shareStatus } from "../workflow/share";
import { type Sql, sqlFor } from "../workflow/sql";
import type { WorkflowSummary } from "../workflow/view";

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
];

export class AccountObject extends DurableObject<Env> {
  private readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = sqlFor(ctx.storage);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage, ACCOUNT_MIGRATIONS));
  }

  async recordWorkflow(_account: string, summary: WorkflowSummary): Promise<void> {
    const s = summary;
    this.sql`INSERT INTO workflows (id, name, status, created_at, updated_at, open_tasks, tasks, reviews_needed)
      VALUES (${s.id}, ${s.name}, ${s.status}, ${s.created_at}, ${s.updated_at}, ${s.open_tasks}, ${s.tasks}, ${s.reviews_needed})
      ON CONFLICT (id) DO UPDATE SET name = excluded.name, status = excluded.status, updated_at = excluded.updated_at,
        open_tasks = excluded.open_tasks, tasks = excluded.tasks, reviews_needed = excluded.reviews_needed`;
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
  };
}
