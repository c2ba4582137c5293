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

/**
 * A match: the commit asked about (full id), the id as the task recorded it (the commits a task made
 * are recorded abbreviated, as git's %h: a prefix of the full id), and the task that made it.
 */
export interface CommitHit extends CommitEntry {
  commit: string;
  workflow_id: string;
}

/** git's shortest abbreviation: recorded ids are at least this long. */
const SHORTEST = 7;

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

  /**
   * The tasks that made any of `shas` (full ids), newest first, at most `limit`: a recorded id
   * matches when it is the full id or a prefix of it (every prefix from SHORTEST digits is looked up
   * on the primary key, so the cost is the lookups, not the index's size).
   */
  find(shas: readonly string[], limit: number): CommitHit[] {
    const prefixes = new Map<string, string>();
    for (const sha of shas) for (let length = SHORTEST; length <= sha.length; length++) prefixes.set(sha.slice(0, length), sha);
    const hits: CommitHit[] = [];
    for (const chunk of jsonChunks([...prefixes.keys()])) {
      const rows = this.sql<Row>`SELECT c.* FROM json_each(${chunk}) j JOIN workflow_commits c ON c.sha = j.value
        ORDER BY c.at DESC LIMIT ${limit}`;
      for (const row of rows) hits.push({ ...hitOf(row), commit: prefixes.get(String(row.sha)) ?? String(row.sha) });
    }
    return hits.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0)).slice(0, limit);
  }
}

function hitOf(r: Row): Omit<CommitHit, "commit"> {
  return {
    sha: String(r.sha),
    workflow_id: String(r.workflow_id),
    task_id: String(r.task_id),
    task_name: String(r.task_name),
    at: String(r.at),
  };
}
