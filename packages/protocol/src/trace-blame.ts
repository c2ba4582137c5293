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
import { array, commitId, FieldError, line, object, optionalText, text } from "./json-fields";

/** The fields of a record this module reads (any other field is ignored). */
interface TraceContributorInput {
  type: string;
  model_id?: string;
}
export interface TraceInput {
  vcs: { revision: string };
  tool?: { name: string };
  files: {
    path: string;
    conversations: {
      url?: string;
      contributor?: TraceContributorInput;
      ranges: { start_line: number; end_line: number; content_hash?: string; contributor?: TraceContributorInput }[];
    }[];
  }[];
  metadata?: {
    "dev.waymark"?: {
      workflow_id?: string;
      task_id?: string;
      task_name?: string;
      agent?: string;
      commits?: string[];
      ranges_omitted?: string[];
    };
  };
}

function contributor(value: unknown, field: string): TraceContributorInput | undefined {
  if (value === undefined) return undefined;
  const c = object(value, field);
  const out: TraceContributorInput = { type: text(c.type, `${field}.type`, 32) };
  const model = optionalText(c.model_id, `${field}.model_id`, 250);
  if (model !== undefined) out.model_id = model;
  return out;
}

/** Checked by hand (./json-fields says why). */
function readRecord(value: unknown): TraceInput {
  const record = object(value, "(record)");
  const vcs = object(record.vcs, "vcs");
  const out: TraceInput = { vcs: { revision: commitId(vcs.revision, "vcs.revision") }, files: [] };
  if (record.tool !== undefined) out.tool = { name: text(object(record.tool, "tool").name, "tool.name", 200) };
  array(record.files, "files").forEach((fileValue, f) => {
    const file = object(fileValue, `files.${f}`);
    const conversations = array(file.conversations, `files.${f}.conversations`).map((conversationValue, c) => {
      const at = `files.${f}.conversations.${c}`;
      const conversation = object(conversationValue, at);
      const ranges = array(conversation.ranges, `${at}.ranges`).map((rangeValue, r) => {
        const range = object(rangeValue, `${at}.ranges.${r}`);
        const entry: TraceInput["files"][number]["conversations"][number]["ranges"][number] = {
          start_line: line(range.start_line, `${at}.ranges.${r}.start_line`),
          end_line: line(range.end_line, `${at}.ranges.${r}.end_line`),
        };
        const hash = optionalText(range.content_hash, `${at}.ranges.${r}.content_hash`, 200);
        if (hash !== undefined) entry.content_hash = hash;
        const who = contributor(range.contributor, `${at}.ranges.${r}.contributor`);
        if (who) entry.contributor = who;
        return entry;
      });
      const entry: TraceInput["files"][number]["conversations"][number] = { ranges };
      const url = optionalText(conversation.url, `${at}.url`, 4096);
      if (url !== undefined) entry.url = url;
      const who = contributor(conversation.contributor, `${at}.contributor`);
      if (who) entry.contributor = who;
      return entry;
    });
    out.files.push({ path: text(file.path, `files.${f}.path`, 4096), conversations });
  });
  const meta = record.metadata === undefined ? undefined : object(record.metadata, "metadata")["dev.waymark"];
  if (meta !== undefined) {
    const m = object(meta, "metadata.dev.waymark");
    const waymark: NonNullable<NonNullable<TraceInput["metadata"]>["dev.waymark"]> = {};
    for (const key of ["workflow_id", "task_id", "agent"] as const) {
      const value = optionalText(m[key], `metadata.dev.waymark.${key}`, 200);
      if (value !== undefined) waymark[key] = value;
    }
    const name = optionalText(m.task_name, "metadata.dev.waymark.task_name", 2000);
    if (name !== undefined) waymark.task_name = name;
    if (m.commits !== undefined)
      waymark.commits = array(m.commits, "metadata.dev.waymark.commits").map((c, i) => commitId(c, `metadata.dev.waymark.commits.${i}`));
    if (m.ranges_omitted !== undefined)
      waymark.ranges_omitted = array(m.ranges_omitted, "metadata.dev.waymark.ranges_omitted").map((p, i) =>
        text(p, `metadata.dev.waymark.ranges_omitted.${i}`, 4096),
      );
    out.metadata = { "dev.waymark": waymark };
  }
  return out;
}

/** An export's records (a JSON array, or one record); the error names the record and field that is wrong. */
export function parseTraceRecords(json: unknown): TraceInput[] {
  const list = Array.isArray(json) ? json : [json];
  return list.map((item, index) => {
    try {
      return readRecord(item);
    } catch (error) {
      if (error instanceof FieldError) throw new Error(`record ${index}: ${error.message}`);
      throw error;
    }
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

/** Ranges of a file that no hook observed (a note entry names them; an export's record only counts them). */
export type UnobservedRanges = readonly { path: string; ranges: readonly { start_line: number; end_line: number }[] }[];

function indexRecord(record: TraceInput, unobserved: UnobservedRanges = []): IndexedRecord {
  const meta = record.metadata?.["dev.waymark"];
  const base: LineAuthorship = { who: "not_observed" };
  if (meta?.workflow_id) base.workflow_id = meta.workflow_id;
  if (meta?.task_id) base.task_id = meta.task_id;
  if (meta?.task_name) base.task = meta.task_name;
  const agent = meta?.agent ?? record.tool?.name;
  if (agent) base.agent = agent;
  const byPath = new Map<string, { start: number; end: number; who: LineAuthorship }[]>();
  const add = (path: string, start: number, end: number, who: LineAuthorship) => {
    const list = byPath.get(path) ?? [];
    list.push({ start, end: Math.max(start, end), who });
    byPath.set(path, list);
  };
  for (const file of record.files) {
    for (const conversation of file.conversations) {
      for (const range of conversation.ranges) {
        const contributor = range.contributor ?? conversation.contributor;
        const who: LineAuthorship = { ...base, who: contributor?.type === "ai" ? "agent" : "others" };
        if (conversation.url) who.url = conversation.url;
        if (contributor?.type === "ai" && contributor.model_id) who.model_id = contributor.model_id;
        add(file.path, range.start_line, range.end_line, who);
      }
    }
  }
  for (const file of unobserved)
    for (const range of file.ranges) add(file.path, range.start_line, range.end_line, { ...base, who: "not_observed" });
  const files = new Map<string, FileRanges>();
  for (const [path, entries] of byPath) {
    entries.sort((a, b) => a.start - b.start);
    files.set(path, { starts: entries.map((e) => e.start), ends: entries.map((e) => e.end), who: entries.map((e) => e.who) });
  }
  // A record of another tool, without a task: its files' other lines are simply not in it.
  if (!meta) base.who = "not_recorded";
  return { revision: record.vcs.revision, files, omitted: new Set(meta?.ranges_omitted ?? []), base, commits: meta?.commits ?? [] };
}

/**
 * A note entry (@waymark/protocol/git-note) ready for lookup: its record's ranges and the ranges it
 * says no hook observed. Unlike an export's record, an entry names every line of its commit that
 * is the task's, so any other line is nobody's here (lookupEntry answers null).
 */
export function indexNoteEntry(record: TraceInput, unobserved: UnobservedRanges = []): IndexedRecord {
  const indexed = indexRecord(record, unobserved);
  return { ...indexed, base: { ...indexed.base, who: "not_recorded" } };
}

/** Who wrote line `line` of `path` at the entry's commit, or null when the entry does not hold it. */
export function lookupEntry(entry: IndexedRecord, path: string, line: number): LineAuthorship | null {
  return lookup(entry.files.get(path), line);
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

  /** Records by the full commit ids they name (an abbreviated id is matched by prefix, in `abbreviated`). */
  private readonly at = new Map<string, IndexedRecord[]>();
  private readonly during = new Map<string, IndexedRecord[]>();
  private readonly abbreviated: IndexedRecord[] = [];

  constructor(records: readonly TraceInput[]) {
    this.records = records.map((record) => indexRecord(record));
    const add = (map: Map<string, IndexedRecord[]>, commit: string, record: IndexedRecord) => {
      const list = map.get(commit);
      if (list) list.push(record);
      else map.set(commit, [record]);
    };
    for (const record of this.records) {
      if (record.revision.length < 40 || record.commits.some((commit) => commit.length < 40)) this.abbreviated.push(record);
      add(this.at, record.revision, record);
      for (const commit of record.commits) if (commit !== record.revision) add(this.during, commit, record);
    }
  }

  get size(): number {
    return this.records.length;
  }

  /** The records that speak of `commit` (a full id, as `git blame` prints it). */
  recordsOf(commit: string): CommitRecords {
    const known = this.byCommit.get(commit);
    if (known !== undefined) return known;
    const at = [
      ...(this.at.get(commit) ?? []),
      ...this.abbreviated.filter((r) => r.revision.length < 40 && sameCommit(r.revision, commit)),
    ];
    const during =
      at.length > 0
        ? []
        : [
            ...(this.during.get(commit) ?? []),
            ...this.abbreviated.filter((r) => r.commits.some((made) => made.length < 40 && sameCommit(made, commit))),
          ];
    const found: CommitRecords = at.length > 0 ? { at } : during.length > 0 ? { during } : null;
    this.byCommit.set(commit, found);
    return found;
  }

  /** The pairs (commit made during a task, the task's end commit) whose diff carries `path`'s line numbers to the end. */
  carriedPairs(path: string): [string, string][] {
    const pairs: [string, string][] = [];
    for (const record of this.records) {
      if (!record.files.has(path)) continue;
      for (const commit of record.commits) if (!sameCommit(commit, record.revision)) pairs.push([commit, record.revision]);
    }
    return pairs;
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
