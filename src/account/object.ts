import { DurableObject } from "cloudflare:workers";
import { type Migration, migrate } from "../workflow/schema";
import { type Sql, sqlFor } from "../workflow/sql";
import type { WorkflowSummary } from "../workflow/view";

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
    return rows.map((r) => ({
      id: String(r.id),
      name: String(r.name),
      status: String(r.status) as WorkflowSummary["status"],
      created_at: String(r.created_at),
      updated_at: String(r.updated_at),
      open_tasks: Number(r.open_tasks),
      tasks: Number(r.tasks),
      reviews_needed: Number(r.reviews_needed),
    }));
  }
}
