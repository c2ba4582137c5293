/**
 * @module account/path-index
 * Which task of which workflow touched a file: the account's index of changed paths, fed by
 * the workflow outbox push (completed and updated tasks carry their net file changes), for
 * the dashboard's and the REST API's search by exact path or path prefix.
 *
 * Paths are compared byte for byte (git paths are case-sensitive). A prefix search is a range
 * scan over the primary key, so it costs the matches, not the index size.
 */
import { encodePathBytes, isEscapedPath } from "@waymark/protocol/paths";
import type { PathEntry } from "../domain/path-entries";
import { LIMITS } from "../limits";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";

/** A match: the path, and the task that changed it. */
export interface PathHit extends PathEntry {
  workflow_id: string;
}

/** Past this many matches a prefix search walks the recency index (see PathIndex.startingWith). */
export const DENSE_PREFIX_MATCHES = 1000;

/** The largest code point: `prefix + MAX` is above every string that starts with `prefix`. */
const MAX_CODE_POINT = "\u{10FFFF}";
const utf8 = new TextEncoder();

/**
 * The escaped wire form of a name that starts with `prefix` but is not UTF-8 as a whole:
 * `src/` → `/src/` (`src/caf\xE9` travels as `/src/caf%E9`). Escaping is per byte, so escaping
 * the prefix's bytes followed by any invalid byte, then dropping that byte's `%XX`, gives it.
 */
export function escapedPrefix(prefix: string): string {
  return encodePathBytes(Uint8Array.from([...utf8.encode(prefix), 0xff])).slice(0, -"%FF".length);
}

type Row = Record<string, SqlStorageValue>;

export class PathIndex {
  constructor(private readonly sql: Sql) {}

  /**
   * Upserts a workflow's paths (replays are harmless), at most PATHS_PER_WORKFLOW per workflow:
   * the workflow's row counts them (`paths_indexed`; its summary is recorded first, in the same
   * transaction). Rows are written only for new paths and for the rare one whose status or task
   * name changed (each row written is billed): a task's paths pushed again, as a task.updated
   * event does, write nothing.
   */
  record(workflowId: string, entries: readonly PathEntry[]): void {
    if (entries.length === 0) return;
    const stored = this.sql<{ n: number }>`SELECT paths_indexed AS n FROM workflows WHERE id = ${workflowId}`[0]?.n ?? 0;
    // Every entry counts against the bound, as if each one were new (replays included).
    const batch = entries.slice(0, Math.max(0, LIMITS.PATHS_PER_WORKFLOW - stored));
    if (batch.length === 0) return;
    let added = 0;
    // A statement per chunk, not per path (a statement per path cost about 0.1 ms each, 12 ms for a
    // 100-file task); chunks keep each bound list far below SQLite's 2 MB per value.
    for (const chunk of jsonChunks(batch.map((e) => [e.path, e.task_id, e.task_name, e.status, e.at]))) {
      added += this.sql`
        INSERT INTO workflow_paths (path, workflow_id, task_id, task_name, status, at)
        SELECT value ->> 0, ${workflowId}, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(${chunk}) WHERE true
        ON CONFLICT (path, workflow_id, task_id) DO NOTHING RETURNING path`.length;
      this.sql`
        UPDATE workflow_paths AS p SET status = j.value ->> 3, task_name = j.value ->> 2
        FROM json_each(${chunk}) AS j
        WHERE p.path = j.value ->> 0 AND p.workflow_id = ${workflowId} AND p.task_id = j.value ->> 1
          AND (p.status IS NOT j.value ->> 3 OR p.task_name IS NOT j.value ->> 2)`;
    }
    if (added > 0) this.sql`UPDATE workflows SET paths_indexed = paths_indexed + ${added} WHERE id = ${workflowId}`;
  }

  /**
   * Tasks that changed `query` exactly, or, when `prefix` is set, any path starting with it
   * (`src/billing/` finds everything under that folder, names that are not UTF-8 included).
   * Newest first, at most `limit`.
   */
  find(query: string, prefix: boolean, limit: number): PathHit[] {
    if (!prefix) return this.exact(query, limit);
    return newestFirst([...this.startingWith(query, limit), ...this.escapedStartingWith(query, limit)], limit);
  }

  /**
   * Tasks that changed `path` or anything in the folder it names (`src/billing` finds
   * `src/billing/tax.ts`, not `src/billing.ts`); with `namePrefix`, any path starting with it.
   * Newest first, at most `limit`.
   */
  findUnder(path: string, namePrefix: boolean, limit: number): PathHit[] {
    if (namePrefix) return this.find(path, true, limit);
    return newestFirst([...this.exact(path, limit), ...this.find(`${path}/`, true, limit)], limit);
  }

  private exact(path: string, limit: number): PathHit[] {
    return this.sql<Row>`SELECT * FROM workflow_paths WHERE path = ${path} ORDER BY at DESC LIMIT ${limit}`.map(hitOf);
  }

  /**
   * Newest first among the paths starting with `prefix`. A narrow prefix is a range scan on the
   * primary key, its matches sorted: it costs the matches. A prefix matching more than
   * DENSE_PREFIX_MATCHES (or twenty times `limit`) rows walks the recency index instead and stops
   * at `limit`: matches are then common enough that the newest are met early, where sorting
   * them all would cost the whole range (`src/` over every workflow).
   */
  private startingWith(prefix: string, limit: number): PathHit[] {
    const end = prefix + MAX_CODE_POINT;
    const cap = Math.max(DENSE_PREFIX_MATCHES, limit * 20);
    const matches =
      this.sql<{ n: number }>`SELECT count(*) AS n FROM
      (SELECT 1 FROM workflow_paths WHERE path >= ${prefix} AND path < ${end} LIMIT ${cap + 1})`[0]?.n ?? 0;
    const rows =
      matches <= cap
        ? this.sql<Row>`SELECT * FROM workflow_paths WHERE path >= ${prefix} AND path < ${end} ORDER BY at DESC, path LIMIT ${limit}`
        : this.sql<Row>`SELECT * FROM workflow_paths INDEXED BY workflow_paths_recent
            WHERE path >= ${prefix} AND path < ${end} ORDER BY at DESC, path LIMIT ${limit}`;
    return rows.map(hitOf);
  }

  /** Names under a UTF-8 prefix that are not UTF-8 themselves live in the escaped range. */
  private escapedStartingWith(prefix: string, limit: number): PathHit[] {
    return isEscapedPath(prefix) ? [] : this.startingWith(escapedPrefix(prefix), limit);
  }
}

/** Hits of disjoint ranges as one list: newest first, then by path; at most `limit`. */
function newestFirst(hits: PathHit[], limit: number): PathHit[] {
  const order = (a: PathHit, b: PathHit) => (a.at !== b.at ? (a.at < b.at ? 1 : -1) : a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return hits.sort(order).slice(0, limit);
}

function hitOf(r: Row): PathHit {
  return {
    path: String(r.path),
    workflow_id: String(r.workflow_id),
    task_id: String(r.task_id),
    task_name: String(r.task_name),
    status: String(r.status),
    at: String(r.at),
  };
}
