/**
 * @module git-note
 * The record a task leaves in the repository itself: git notes under `refs/notes/waymark`
 * (docs/evidence.md, "The record in the repository"). This module is the format, shared by the
 * helper that writes and reads notes and anything else that reads them (`waymark ci`).
 *
 * A note is JSON Lines: one compact JSON object per line, each one task's entry about the commit
 * the note is attached to. Lines, not one document, because git itself joins notes: when a rewrite
 * copies two commits' notes onto one commit (`notes.rewriteMode` concatenate) or two clones' notes
 * are merged (`git notes merge -s cat_sort_uniq`), the result is still one entry a line. A line of
 * another type or a later version is kept as it is and skipped by readers of this version.
 *
 * An entry speaks of one commit (`commit`): its Agent Trace record is at that revision (its ranges
 * are line numbers there) and it says explicitly which lines of it no hook observed; every other
 * line of that commit is nobody's in this entry. The task's end commit carries the task's whole
 * record (as the Agent Trace export has it); each earlier commit of the task carries the same
 * record projected onto it. `line_hashes` (a short hash of each line of each file at `commit`) let
 * a reader place the ranges on a commit that a rewrite (amend, rebase) copied the note to, where
 * the original commit is gone. Entries written by `waymark notes carry` onto the commits a merge
 * made say where they were carried from (`carried`).
 *
 * Never file contents, never a secret: paths, line numbers, hashes, ids, and what the endpoint
 * already holds (the task's name, redacted at the helper and the edge).
 */
import { createHash } from "node:crypto";
import { array, FieldError, fullCommitId, type JsonObject, line, object, text } from "./json-fields";
import { parseTraceRecords, type TraceInput } from "./trace-blame";

/** Waymark's notes ref; the remote-tracking copies `waymark init` fetches live under refs/notes/remotes/<remote>/waymark. */
export const NOTES_REF = "refs/notes/waymark";
export const NOTE_TYPE = "waymark.task-note";
export const NOTE_VERSION = 1;
/** Characters of one line's hash in `line_hashes`: 6 bytes of its SHA-256, base64url. */
export const LINE_HASH_CHARS = 8;
/** Files longer than this carry no line hashes (a copy by rewrite can then place their ranges only through the original commit). */
export const LINE_HASHES_MAX_LINES = 20_000;
/** A note larger than this is not read (each entry is bounded by the wire's range limits; this bounds a note of many). */
export const NOTE_MAX_BYTES = 16 * 1024 * 1024;

/** Ranges of one file at the entry's commit (1-based, inclusive), each with its content hash as a record's ranges have it. */
export type PathRanges = { path: string; ranges: { start_line: number; end_line: number; content_hash?: string }[] };

/**
 * What complete_task answers about a completion (its `checkpoint`), for the note the helper writes:
 * the workflow, the task's name, when it completed, the chain once the completion was written
 * (events 1…events, ending on head) and the deployment's origin (added by the tool, not stored).
 */
export interface CompletionCheckpoint {
  workflow_id: string;
  task_name: string;
  completed_at: string;
  events: number;
  head: string;
  origin?: string;
}

/** Where the chain stood when the task completed: the export whose statement covers it can be checked against this. */
export interface NoteCheckpoint {
  /** Events in the workflow's log once the completion was written, and the chain's hash after the last of them. */
  events: number;
  head: string;
  completed_at: string;
}

export interface TaskNote {
  type: typeof NOTE_TYPE;
  version: typeof NOTE_VERSION;
  /** The commit this entry speaks of: `record.vcs.revision`, the commit it was written for. */
  commit: string;
  workflow_id: string;
  task_id: string;
  /** The deployment that recorded the task (an origin: scheme, host, port). */
  origin: string | null;
  /** The task's commits as recorded (newest first), its start and end commits. */
  task: { start_commit: string | null; end_commit: string; commits: string[] };
  /** The Agent Trace record at `commit` (agent ranges `ai`, ranges others wrote `unknown`). */
  record: JsonObject;
  /** Lines of `commit` in the task's change that no hook observed. */
  not_observed?: PathRanges[];
  /** Per file at `commit`: LINE_HASH_CHARS characters per line (lineHashes). */
  line_hashes?: { path: string; hashes: string }[];
  checkpoint?: NoteCheckpoint;
  /** Where the deployment's signed statement covering the checkpoint is: the workflow's JSON export. */
  statement?: { export: string };
  /**
   * Written by `waymark notes carry`: the commit whose lines these were (the branch head the step
   * was given), when, and, where the step could tell, the branch's commits this commit holds the
   * changes of (oldest first): the one it replays (a rebase merge, a cherry-pick) or all of them (a squash).
   */
  carried?: { from: string; at: string; commits?: string[] };
}

/** A note read: its entries of this version, and the lines a reader of this version leaves alone (with why). */
export interface ParsedNote {
  entries: ReadTaskNote[];
  skipped: { line: string; reason: string }[];
}

/** An entry as read, with its record's fields parsed for lookup. */
export interface ReadTaskNote extends TaskNote {
  trace: TraceInput;
}

/** The hash of each line of a content (its bytes without the newline), LINE_HASH_CHARS characters each. */
export function lineHashes(content: Buffer | Uint8Array): string {
  const bytes = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const hashes: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    hashes.push(createHash("sha256").update(bytes.subarray(start, end)).digest().subarray(0, 6).toString("base64url"));
    start = end + 1;
  }
  return hashes.join("");
}

/** `lineHashes` as one hash per element. */
export function splitLineHashes(hashes: string): string[] {
  const out: string[] = [];
  for (let at = 0; at + LINE_HASH_CHARS <= hashes.length; at += LINE_HASH_CHARS) out.push(hashes.slice(at, at + LINE_HASH_CHARS));
  return out;
}

/** Line hashes as a text of one hash a line: diffed (by git, in a scratch repository) as git diffs the lines they hash. */
export function lineHashesText(hashes: string): Buffer {
  const list = splitLineHashes(hashes);
  return Buffer.from(list.length === 0 ? "" : `${list.join("\n")}\n`);
}

/** The range content hash a record writes (`sha256:` and the first 16 hex digits of the SHA-256 of the lines' bytes). */
export function rangeContentHash(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex").slice(0, 16)}`;
}

/** Byte offsets of each line's start in a content, and its end. */
export function lineOffsets(content: Uint8Array): number[] {
  const starts = [0];
  for (let at = content.indexOf(0x0a); at >= 0 && at + 1 < content.length; at = content.indexOf(0x0a, at + 1)) starts.push(at + 1);
  starts.push(content.length);
  return starts;
}

/**
 * Runs of consecutive lines with the same writer (`who[i]` for line i + 1; null: no one's) as
 * ranges of `content`, each with the hash of its lines' bytes as the helper sends it (16 hex digits).
 */
export function lineRuns<T>(who: readonly (T | null)[], content: Uint8Array): { start: number; end: number; who: T; hash: string }[] {
  const runs: { start: number; end: number; who: T; hash: string }[] = [];
  const offsets = lineOffsets(content);
  let at = 0;
  while (at < who.length) {
    const writer = who[at] ?? null;
    let end = at;
    while (end + 1 < who.length && (who[end + 1] ?? null) === writer) end++;
    if (writer !== null) {
      const bytes = content.subarray(offsets[at], offsets[end + 1]);
      runs.push({ start: at + 1, end: end + 1, who: writer, hash: createHash("sha256").update(bytes).digest("hex").slice(0, 16) });
    }
    at = end + 1;
  }
  return runs;
}

/** Which entry an entry replaces: one per task per commit. */
const entryKey = (entry: Pick<TaskNote, "workflow_id" | "task_id" | "commit">) => `${entry.workflow_id}\0${entry.task_id}\0${entry.commit}`;

/** One entry as the line it is written as. */
export function noteLine(entry: TaskNote): string {
  return JSON.stringify(entry);
}

/**
 * A note's text with `entries` written in: an entry of the same task and commit is replaced, every
 * other line (other tasks', other versions') is kept as it was. Lines sorted, as `cat_sort_uniq` keeps them.
 */
export function mergeNote(existing: string | null, entries: readonly TaskNote[]): string {
  const replaced = new Set(entries.map(entryKey));
  const kept = (existing ?? "").split("\n").filter((candidate) => {
    if (candidate.trim() === "") return false;
    const key = keyOf(candidate);
    return key === null || !replaced.has(key);
  });
  return `${[...new Set([...kept, ...entries.map(noteLine)])].sort().join("\n")}\n`;
}

function keyOf(candidate: string): string | null {
  try {
    const value = JSON.parse(candidate) as Partial<TaskNote>;
    return value?.type === NOTE_TYPE &&
      typeof value.workflow_id === "string" &&
      typeof value.task_id === "string" &&
      typeof value.commit === "string"
      ? entryKey(value as TaskNote)
      : null;
  } catch {
    return null;
  }
}

/** Reads a note's text: every entry of this version, the rest skipped with the reason (a bad entry never hides the good ones). */
export function parseNote(text: string): ParsedNote {
  const parsed: ParsedNote = { entries: [], skipped: [] };
  for (const candidate of text.split("\n")) {
    if (candidate.trim() === "") continue;
    try {
      parsed.entries.push(readEntry(JSON.parse(candidate)));
    } catch (error) {
      const reason = error instanceof FieldError ? error.message : error instanceof SyntaxError ? "not JSON" : String(error);
      parsed.skipped.push({ line: candidate.slice(0, 200), reason });
    }
  }
  return parsed;
}

function pathRanges(value: unknown, field: string): PathRanges[] {
  return array(value, field).map((item, i) => {
    const entry = object(item, `${field}.${i}`);
    return {
      path: text(entry.path, `${field}.${i}.path`, 4096),
      ranges: array(entry.ranges, `${field}.${i}.ranges`).map((value, r) => {
        const at = `${field}.${i}.ranges.${r}`;
        const range = object(value, at);
        const start_line = line(range.start_line, `${at}.start_line`);
        const end_line = line(range.end_line, `${at}.end_line`);
        if (end_line < start_line) throw new FieldError(`${at}: must end at or after its start`);
        const hash = range.content_hash === undefined ? undefined : text(range.content_hash, `${at}.content_hash`, 200);
        return hash === undefined ? { start_line, end_line } : { start_line, end_line, content_hash: hash };
      }),
    };
  });
}

const ORIGIN = /^https?:\/\/[^/@\s]+$/;

function originOf(value: unknown): string {
  const origin = text(value, "origin", 2048);
  if (!ORIGIN.test(origin)) throw new FieldError("origin: must be an http(s) origin without credentials or path");
  return origin;
}

/** The entry's record, parsed for lookup; its errors named as fields of the entry. */
function traceOf(value: unknown): TraceInput {
  try {
    return parseTraceRecords(object(value, "record"))[0] as TraceInput;
  } catch (error) {
    if (error instanceof FieldError) throw error;
    throw new FieldError(`record: ${(error as Error).message.replace(/^record 0: /, "")}`);
  }
}

function readEntry(value: unknown): ReadTaskNote {
  const entry = object(value, "(entry)");
  if (entry.type !== NOTE_TYPE) throw new FieldError(`type: must be "${NOTE_TYPE}"`);
  if (entry.version !== NOTE_VERSION)
    throw new FieldError(`version: ${JSON.stringify(entry.version)} is not ${NOTE_VERSION} (a later format)`);
  const commit = fullCommitId(entry.commit, "commit");
  const trace = traceOf(entry.record);
  if (trace.vcs.revision !== commit) throw new FieldError("record.vcs.revision: must be the entry's commit");
  const task = object(entry.task, "task");
  const note: ReadTaskNote = {
    type: NOTE_TYPE,
    version: NOTE_VERSION,
    commit,
    workflow_id: text(entry.workflow_id, "workflow_id", 200),
    task_id: text(entry.task_id, "task_id", 200),
    origin: entry.origin === null ? null : originOf(entry.origin),
    task: {
      start_commit: task.start_commit === null ? null : fullCommitId(task.start_commit, "task.start_commit"),
      end_commit: fullCommitId(task.end_commit, "task.end_commit"),
      commits: array(task.commits, "task.commits").map((c, i) => fullCommitId(c, `task.commits.${i}`)),
    },
    record: entry.record as JsonObject,
    trace,
  };
  if (entry.not_observed !== undefined) note.not_observed = pathRanges(entry.not_observed, "not_observed");
  if (entry.line_hashes !== undefined) {
    note.line_hashes = array(entry.line_hashes, "line_hashes").map((item, i) => {
      const file = object(item, `line_hashes.${i}`);
      const hashes = file.hashes;
      if (typeof hashes !== "string" || hashes.length % LINE_HASH_CHARS !== 0 || !/^[A-Za-z0-9_-]*$/.test(hashes))
        throw new FieldError(`line_hashes.${i}.hashes: must be base64url, ${LINE_HASH_CHARS} characters a line`);
      return { path: text(file.path, `line_hashes.${i}.path`, 4096), hashes };
    });
  }
  if (entry.checkpoint !== undefined) {
    const checkpoint = object(entry.checkpoint, "checkpoint");
    const events = checkpoint.events;
    if (!Number.isSafeInteger(events) || (events as number) < 1) throw new FieldError("checkpoint.events: must be a whole number ≥ 1");
    if (typeof checkpoint.head !== "string" || !/^[0-9a-f]{64}$/.test(checkpoint.head))
      throw new FieldError("checkpoint.head: must be 64 lowercase hex digits");
    note.checkpoint = {
      events: events as number,
      head: checkpoint.head,
      completed_at: text(checkpoint.completed_at, "checkpoint.completed_at", 64),
    };
  }
  if (entry.statement !== undefined) {
    const statement = object(entry.statement, "statement");
    note.statement = { export: text(statement.export, "statement.export", 4096) };
  }
  if (entry.carried !== undefined) {
    const carried = object(entry.carried, "carried");
    note.carried = { from: fullCommitId(carried.from, "carried.from"), at: text(carried.at, "carried.at", 64) };
    if (carried.commits !== undefined)
      note.carried.commits = array(carried.commits, "carried.commits").map((c, i) => fullCommitId(c, `carried.commits.${i}`));
  }
  return note;
}
