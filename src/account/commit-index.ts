/**
 * @module account/commit-index
 * Which task of which workflow made a commit: the account's index of recorded commits, fed by the
 * workflow outbox push (domain/commit-entries), for `GET /api/commits` (what `waymark ci` asks
 * about a pull request's range) and for mapping a pull-request review comment to its task.
 */
import type { CommitEntry } from "../domain/commit-entries";
import { LIMITS } from "../limits";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";

/** A match: the commit, and the task that made it. */
export interface CommitHit extends CommitEntry {
  workflow_id: string;
}

type Row = Record<string, SqlStorageValue>;

export class CommitIndex {
  constructor(private readonly sql: Sql) {}

  /** Upserts a workflow's commits (replays are harmless), at most COMMITS_PER_WORKFLOW per workflow. */
  record(workflowId: string, entries: readonly CommitEntry[]): void {
    if (entries.length === 0) return;
    const stored = this.sql<{ n: number }>`SELECT count(*) AS n FROM workflow_commits WHERE workflow_id = ${workflowId}`[0]?.n ?? 0;
    const batch = entries.slice(0, Math.max(0, LIMITS.COMMITS_PER_WORKFLOW - stored));
    for (const chunk of jsonChunks(batch.map((e) => [e.sha, e.task_id, e.task_name, e.at]))) {
      this.sql`
        INSERT INTO workflow_commits (sha, workflow_id, task_id, task_name, at)
        SELECT value ->> 0, ${workflowId}, value ->> 1, value ->> 2, value ->> 3 FROM json_each(${chunk}) WHERE true
        ON CONFLICT (sha, workflow_id, task_id) DO UPDATE SET task_name = excluded.task_name`;
    }
  }

  /** The tasks that made any of `shas` (full ids), newest first, at most `limit`. */
  find(shas: readonly string[], limit: number): CommitHit[] {
    if (shas.length === 0) return [];
    const hits: CommitHit[] = [];
    for (const chunk of jsonChunks(shas.map((sha) => [sha]))) {
      const rows = this.sql<Row>`SELECT c.* FROM workflow_commits c JOIN json_each(${chunk}) j ON c.sha = j.value ->> 0
        ORDER BY c.at DESC LIMIT ${limit}`;
      hits.push(...rows.map(hitOf));
    }
    return hits.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
  }
}

function hitOf(r: Row): CommitHit {
  return {
    sha: String(r.sha),
    workflow_id: String(r.workflow_id),
    task_id: String(r.task_id),
    task_name: String(r.task_name),
    at: String(r.at),
  };
}
