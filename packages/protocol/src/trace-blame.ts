/**
 * @module trace-blame
 * Who wrote each line of a file, from `git blame` and Agent Trace records (`waymark blame`): the
 * spec's own lookup (§6.5): blame names the commit that last touched the line and its number
 * there; the record made at that commit gives the range holding that number. A commit made during
 * a task but before its end commit has no record of its own: its line numbers are carried to the
 * end commit by the diff between the two (`diffHunks`, `carryLine`), then looked up the same way.
 *
 * Records come from a file or an endpoint: they are read leniently (any Agent Trace record, with
 * or without Waymark's `dev.waymark` metadata) and only the fields used here are checked.
 */
import { z } from "zod";

const contributorSchema = z.object({ type: z.string().max(32), model_id: z.string().max(250).optional() });
const recordSchema = z.object({
  vcs: z.object({ type: z.string(), revision: z.string().regex(/^[0-9a-f]{7,64}$/, "must be a hex commit id") }),
  tool: z.object({ name: z.string().max(200), version: z.string().max(200).optional() }).optional(),
  files: z.array(
    z.object({
      path: z.string().min(1).max(4096),
      conversations: z.array(
        z.object({
          url: z.string().max(4096).optional(),
          contributor: contributorSchema.optional(),
          ranges: z.array(
            z.object({ start_line: z.number().int().min(1), end_line: z.number().int().min(1), contributor: contributorSchema.optional() }),
          ),
        }),
      ),
    }),
  ),
  metadata: z
    .object({
      "dev.waymark": z
        .object({
          workflow_id: z.string().max(200).optional(),
          task_id: z.string().max(200).optional(),
          task_name: z.string().max(2000).optional(),
          agent: z.string().max(200).optional(),
          commits: z
            .array(z.string().regex(/^[0-9a-f]{7,64}$/))
            .max(10_000)
            .optional(),
          ranges_omitted: z.array(z.string()).optional(),
        })
        .optional(),
    })
    .optional(),
});
type TraceInput = z.infer<typeof recordSchema>;

/** An export's records (a JSON array, or one record); the error names the record and field that is wrong. */
export function parseTraceRecords(json: unknown): TraceInput[] {
  const list = Array.isArray(json) ? json : [json];
  return list.map((item, index) => {
    const parsed = recordSchema.safeParse(item);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0];
    throw new Error(`record ${index}: ${issue ? `${issue.path.join(".") || "(record)"}: ${issue.message}` : "not an Agent Trace record"}`);
  });
}

/** Who last wrote a line: the agent's edit tools, something else, nobody observed, or no record holds its commit. */
export type LineWho = "agent" | "others" | "not_observed" | "not_recorded";

export interface LineAuthorship {
  who: LineWho;
  /** The record's task (Waymark's metadata) or conversation link. */
  workflow_id?: string;
  task_id?: string;
  task?: string;
  url?: string;
  model_id?: string;
  agent?: string;
}

const NOT_RECORDED: LineAuthorship = { who: "not_recorded" };

/** A file's ranges in one record, sorted, each with who wrote it. */
type FileRanges = { starts: number[]; ends: number[]; who: LineAuthorship[] };

export interface IndexedRecord {
  revision: string;
  files: Map<string, FileRanges>;
  /** Files whose ranges the record left out (too many to send): their lines are not recorded. */
  omitted: Set<string>;
  base: LineAuthorship;
  commits: readonly string[];
}

/** A hex commit id and a full one name the same commit (a record may hold abbreviated ids). */
const sameCommit = (short: string, full: string) => full.startsWith(short) || short.startsWith(full);

function indexRecord(record: TraceInput): IndexedRecord {
  const meta = record.metadata?.["dev.waymark"];
  const base: LineAuthorship = { who: "not_observed" };
  if (meta?.workflow_id) base.workflow_id = meta.workflow_id;
  if (meta?.task_id) base.task_id = meta.task_id;
  if (meta?.task_name) base.task = meta.task_name;
  const agent = meta?.agent ?? record.tool?.name;
  if (agent) base.agent = agent;
  const files = new Map<string, FileRanges>();
  for (const file of record.files) {
    const entries: { start: number; end: number; who: LineAuthorship }[] = [];
    for (const conversation of file.conversations) {
      for (const range of conversation.ranges) {
        const contributor = range.contributor ?? conversation.contributor;
        const who: LineAuthorship = { ...base, who: contributor?.type === "ai" ? "agent" : "others" };
        if (conversation.url) who.url = conversation.url;
        if (contributor?.type === "ai" && contributor.model_id) who.model_id = contributor.model_id;
        entries.push({ start: range.start_line, end: Math.max(range.start_line, range.end_line), who });
      }
    }
    entries.sort((a, b) => a.start - b.start);
    const ranges = files.get(file.path) ?? { starts: [], ends: [], who: [] };
    for (const entry of entries) {
      ranges.starts.push(entry.start);
      ranges.ends.push(entry.end);
      ranges.who.push(entry.who);
    }
    files.set(file.path, ranges);
  }
  // A record of another tool, without a task: its files' other lines are simply not in it.
  if (!meta) base.who = "not_recorded";
  return { revision: record.vcs.revision, files, omitted: new Set(meta?.ranges_omitted ?? []), base, commits: meta?.commits ?? [] };
}

function lookup(ranges: FileRanges | undefined, line: number): LineAuthorship | null {
  if (!ranges) return null;
  // The last range starting at or before the line (binary search), if it reaches the line.
  let low = 0;
  let high = ranges.starts.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if ((ranges.starts[mid] as number) <= line) {
      found = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found >= 0 && (ranges.ends[found] as number) >= line ? (ranges.who[found] as LineAuthorship) : null;
}

/** Where a commit's lines are looked up: records made at it, or records of tasks it was made during (at their end commit). */
export type CommitRecords = { at: IndexedRecord[] } | { during: IndexedRecord[] } | null;

export class TraceIndex {
  private readonly records: IndexedRecord[];
  private readonly byCommit = new Map<string, CommitRecords>();

  constructor(records: readonly TraceInput[]) {
    this.records = records.map(indexRecord);
  }

  get size(): number {
    return this.records.length;
  }

  /** The records that speak of `commit` (a full id, as `git blame` prints it). */
  recordsOf(commit: string): CommitRecords {
    const known = this.byCommit.get(commit);
    if (known !== undefined) return known;
    const at = this.records.filter((record) => sameCommit(record.revision, commit));
    const during = at.length > 0 ? [] : this.records.filter((record) => record.commits.some((made) => sameCommit(made, commit)));
    const found: CommitRecords = at.length > 0 ? { at } : during.length > 0 ? { during } : null;
    this.byCommit.set(commit, found);
    return found;
  }

  /** Who wrote line `line` of `path` as the records made at that revision number it; a record holding the line in a range wins. */
  static attribute(records: readonly IndexedRecord[], path: string, line: number | null): LineAuthorship {
    if (line !== null) {
      for (const record of records) {
        const who = lookup(record.files.get(path), line);
        if (who) return who;
      }
    }
    const record = records.find((r) => r.files.has(path) || r.omitted.has(path)) ?? records[0];
    if (!record) return NOT_RECORDED;
    return record.omitted.has(path) ? { ...record.base, who: "not_recorded" } : record.base;
  }
}

/** `@@ -a,b +c,d @@` hunks of a `git diff -U0`: old start and count, new start and count. */
export type Hunk = [number, number, number, number];

export function diffHunks(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  for (const match of diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    hunks.push([Number(match[1]), Number(match[2] ?? 1), Number(match[3]), Number(match[4] ?? 1)]);
  }
  return hunks;
}

/** Line `line` of the old side carried to the new side through the hunks; null when a hunk removed it. */
export function carryLine(hunks: readonly Hunk[], line: number): number | null {
  let offset = 0;
  for (const [oldStart, oldCount, , newCount] of hunks) {
    // With -U0 a pure insertion's old start is the line before it.
    const first = oldCount === 0 ? oldStart + 1 : oldStart;
    if (line < first) break;
    if (oldCount > 0 && line < oldStart + oldCount) return null;
    offset += newCount - oldCount;
  }
  return line + offset;
}
