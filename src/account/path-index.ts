/**
 * @module account/path-index
 * Which task of which workflow touched a file: the account's index of changed paths, fed by
 * the workflow outbox push (completed and updated tasks carry their net file changes), for
 * the dashboard's and the REST API's search by exact path or path prefix.
 *
 * Packed: one `path_sets` row per task completion holds its paths (`[[path, status], …]` in
 * JSON, cut into parts of at most STATEMENT_CHUNK_BYTES), keyed by (time, workflow, task). A row
 * per path cost two rows written per file (the row and its recency index), about 40 per 20-file
 * completion; a set costs one. Rows written are billed a thousand times rows read, so a lookup
 * scans the sets instead of seeking: newest first along the key, a page at a time, each set's
 * text first tested with `instr` (a byte search, no JSON parsed) and only candidates expanded,
 * stopping once a page has filled the limit, and never past the newest PATH_SETS_SCANNED sets or
 * PATH_SETS_SCANNED_BYTES bytes of them (a lookup then says older sets were not searched).
 *
 * Paths are compared byte for byte (git paths are case-sensitive), in their wire form.
 */
import { encodePathBytes, isEscapedPath } from "@waymark/protocol/paths";
import type { PathEntry } from "../domain/path-entries";
import { LIMITS } from "../limits";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";

/** A match: the path, and the task that changed it. */
/** A lookup's hits, and whether it read every set (false: it stopped at LIMITS.PATH_SETS_SCANNED sets or PATH_SETS_SCANNED_BYTES bytes, older sets unread). */
export interface PathSearch {
  hits: PathHit[];
  searched_all: boolean;
}

export interface PathHit extends PathEntry {
  workflow_id: string;
}

/** Sets a lookup reads per statement, newest first. */
export const PATH_SETS_PAGE = 500;

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

/** What a lookup matches: a path exactly (`to` null) or every path in [`from`, `to`). */
interface PathRange {
  from: string;
  to: string | null;
}

/** A set's entries as stored: [path, status]. */
type Packed = [string, string];

/**
 * Text every set holding a path that starts with `start` contains: `["` then the path's JSON
 * form. JSON escapes one character at a time, so a path's prefix is a prefix of its JSON form;
 * a path with a character JSON escapes gets no such text ("" matches every set): its sets are
 * all expanded and compared, as the exact comparison decides anyway.
 */
function needleOf(start: string): string {
  return /["\\\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff]/.test(start) ? "" : `["${start}`;
}

type SetRow = { part: number; paths: string };
/** A set part's key: time, workflow, task, part. */
type SetKey = [string, string, string, number];

export class PathIndex {
  constructor(private readonly sql: Sql) {}

  /**
   * Records a push's paths (replays are harmless), at most PATHS_PER_WORKFLOW per workflow, and
   * answers how many were new (the caller adds them to the workflow's `paths_indexed`, with its
   * summary). Entries are grouped into the set of their task and time; a set pushed again (a
   * task.updated event carries all its paths) writes nothing unless a path is new (appended as a
   * part of its own) or its status or task name changed (that part rewritten).
   */
  record(workflowId: string, entries: readonly PathEntry[]): number {
    if (entries.length === 0) return 0;
    const stored = this.sql<{ n: number }>`SELECT paths_indexed AS n FROM workflows WHERE id = ${workflowId}`[0]?.n ?? 0;
    // Every entry counts against the bound, as if each one were new (replays included).
    const batch = entries.slice(0, Math.max(0, LIMITS.PATHS_PER_WORKFLOW - stored));
    const groups = new Map<string, PathEntry[]>();
    for (const e of batch) {
      const key = JSON.stringify([e.at, e.task_id]);
      const group = groups.get(key);
      if (group) group.push(e);
      else groups.set(key, [e]);
    }
    let added = 0;
    for (const group of groups.values()) added += this.recordSet(workflowId, group);
    return added;
  }

  /** One task's paths at one time: new ones appended as a part, changed ones rewritten in place. */
  private recordSet(workflowId: string, entries: readonly PathEntry[]): number {
    const first = entries[0] as PathEntry;
    const { at, task_id: taskId } = first;
    const taskName = entries[entries.length - 1]?.task_name ?? first.task_name;
    const parts = this.sql<SetRow & { task_name: string }>`SELECT part, paths, task_name FROM path_sets
      WHERE at = ${at} AND workflow_id = ${workflowId} AND task_id = ${taskId}`;
    // Where each stored path is: its part and its place in that part.
    const where = new Map<string, [number, Packed]>();
    const contents = new Map<number, Packed[]>();
    for (const row of parts) {
      const packed = JSON.parse(row.paths) as Packed[];
      contents.set(row.part, packed);
      for (const item of packed) where.set(item[0], [row.part, item]);
    }
    const renamed = parts.some((row) => row.task_name !== taskName);
    const changedParts = new Set<number>(renamed ? parts.map((row) => row.part) : []);
    const fresh = new Map<string, string>();
    for (const e of entries) {
      const stored = where.get(e.path);
      if (stored === undefined) fresh.set(e.path, e.status);
      else if (stored[1][1] !== e.status) {
        stored[1][1] = e.status;
        changedParts.add(stored[0]);
      }
    }
    for (const part of changedParts) {
      this.sql`UPDATE path_sets SET paths = ${JSON.stringify(contents.get(part))}, task_name = ${taskName}
        WHERE at = ${at} AND workflow_id = ${workflowId} AND task_id = ${taskId} AND part = ${part}`;
    }
    if (fresh.size === 0) return 0;
    let part = parts.reduce((max, row) => Math.max(max, row.part + 1), 0);
    const sorted = [...fresh].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    // Each part stays far below the 2 MB a stored value may take.
    for (const chunk of jsonChunks(sorted)) {
      this.sql`INSERT INTO path_sets (at, workflow_id, task_id, part, task_name, paths)
        VALUES (${at}, ${workflowId}, ${taskId}, ${part}, ${taskName}, ${chunk})`;
      part++;
    }
    return fresh.size;
  }

  /**
   * Tasks that changed `query` exactly, or, when `prefix` is set, any path starting with it
   * (`src/billing/` finds everything under that folder, names that are not UTF-8 included).
   * Newest first, at most `limit`.
   */
  find(query: string, prefix: boolean, limit: number): PathHit[] {
    return this.search(query, prefix, limit).hits;
  }

  /** As `find`, saying whether every set was searched or the scan stopped at its bound with older ones unread. */
  search(query: string, prefix: boolean, limit: number): PathSearch {
    return this.scan(prefix ? prefixRanges(query) : [{ from: query, to: null }], limit);
  }

  /**
   * Tasks that changed `path` or anything in the folder it names (`src/billing` finds
   * `src/billing/tax.ts`, not `src/billing.ts`); with `namePrefix`, any path starting with it.
   * Newest first, at most `limit`.
   */
  findUnder(path: string, namePrefix: boolean, limit: number): PathHit[] {
    if (namePrefix) return this.find(path, true, limit);
    return this.scan([{ from: path, to: null }, ...prefixRanges(`${path}/`)], limit).hits;
  }

  /**
   * The newest `limit` hits of `ranges`: the sets newest first, PATH_SETS_PAGE per statement,
   * until the hits so far fill the limit with ones newer than every later set, or
   * PATH_SETS_SCANNED sets (or PATH_SETS_SCANNED_BYTES bytes of them) were read. Within a page only the sets whose text holds a range's needle are parsed.
   */
  private scan(ranges: readonly PathRange[], limit: number): PathSearch {
    const terms = JSON.stringify(ranges.map((r) => [r.from, r.to]));
    // At most three ranges (a path, its folder, the folder's escaped names); NULL needles match nothing.
    const [n1, n2, n3] = [...new Set(ranges.map((r) => needleOf(r.from)))];
    const hits: PathHit[] = [];
    let after: SetKey | null = null;
    let bytes = 0;
    for (let scanned = 0; scanned < LIMITS.PATH_SETS_SCANNED; scanned += PATH_SETS_PAGE) {
      const page = Math.min(PATH_SETS_PAGE, LIMITS.PATH_SETS_SCANNED - scanned);
      const [a, w, t, p]: SetKey = after ?? [MAX_CODE_POINT, "", "", 0];
      type SetHead = { at: string; workflow_id: string; task_id: string; part: number; bytes: number };
      const keys: SetHead[] = this.sql<SetHead>`
        SELECT at, workflow_id, task_id, part, octet_length(paths) AS bytes FROM path_sets
        WHERE (at, workflow_id, task_id, part) < (${a}, ${w}, ${t}, ${p})
        ORDER BY at DESC, workflow_id DESC, task_id DESC, part DESC LIMIT ${page}`;
      // The page ends early where the sets read so far pass the bytes a lookup may read (their sizes known without reading them).
      let within = 0;
      while (within < keys.length && bytes <= LIMITS.PATH_SETS_SCANNED_BYTES) bytes += (keys[within++] as SetHead).bytes;
      const spent = bytes > LIMITS.PATH_SETS_SCANNED_BYTES;
      const last: SetHead | undefined = keys[within - 1];
      if (!last) return { hits: newestFirst(hits, limit), searched_all: true };
      const rows = this.sql<Row>`
        SELECT s.at, s.workflow_id, s.task_id, s.task_name, j.value ->> 0 AS path, j.value ->> 1 AS status
        FROM path_sets AS s, json_each(s.paths) AS j
        WHERE (s.at, s.workflow_id, s.task_id, s.part) < (${a}, ${w}, ${t}, ${p})
          AND (s.at, s.workflow_id, s.task_id, s.part) >= (${last.at}, ${last.workflow_id}, ${last.task_id}, ${last.part})
          AND (instr(s.paths, ${n1 ?? null}) OR instr(s.paths, ${n2 ?? null}) OR instr(s.paths, ${n3 ?? null}))
          AND EXISTS (SELECT 1 FROM json_each(${terms}) AS r WHERE CASE WHEN r.value ->> 1 IS NULL
            THEN j.value ->> 0 = r.value ->> 0 ELSE j.value ->> 0 >= r.value ->> 0 AND j.value ->> 0 < r.value ->> 1 END)`;
      hits.push(...rows.map(hitOf));
      if (!spent && keys.length < page) return { hits: newestFirst(hits, limit), searched_all: true };
      after = [last.at, last.workflow_id, last.task_id, last.part];
      // Later pages hold sets no newer than this page's last: done once the limit-th hit is newer
      // still (a hit of the same time could still sort before it by path).
      const kept = newestFirst(hits, limit);
      if (kept.length === limit && (kept[limit - 1] as PathHit).at > last.at) return { hits: kept, searched_all: true };
      if (spent) break;
    }
    // Stopped at a bound (sets or characters read): older sets, if any, were not read.
    const more =
      after !== null &&
      this
        .sql`SELECT 1 FROM path_sets WHERE (at, workflow_id, task_id, part) < (${after[0]}, ${after[1]}, ${after[2]}, ${after[3]}) LIMIT 1`
        .length > 0;
    return { hits: newestFirst(hits, limit), searched_all: !more };
  }
}

/** A prefix's ranges: its UTF-8 names and, unless it is escaped itself, the escaped names under it. */
function prefixRanges(prefix: string): PathRange[] {
  const ranges = [{ from: prefix, to: prefix + MAX_CODE_POINT }];
  if (!isEscapedPath(prefix)) {
    const escaped = escapedPrefix(prefix);
    ranges.push({ from: escaped, to: escaped + MAX_CODE_POINT });
  }
  return ranges;
}

type Row = Record<string, SqlStorageValue>;

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
