/**
 * @module lines/edit-log
 * The hooks' record of what the agent's edit tools did to each file's lines, per task, beside
 * the journal's other records (`<journal>/lines/`, in the user's cache, never in the repository):
 * one JSON line per edited file per tool call (`<task>.jsonl`), with the contents the edit names
 * in the line itself. The content before an edit is usually the one the edit before it left: a
 * helper that wrote that one names it by its SHA-256 instead (`before_sha`), and a reader takes
 * the path's previous version in the log only if it hashes so (else the content is gone: an edit
 * not followed, never a wrong version). No file is created per edit (on some file systems creating
 * and deleting many small files costs more than everything else an edit's record does).
 * complete_task replays them (./replay.ts) and forgets them; nothing of it leaves the machine.
 * Bounded: a task's record stops taking contents at EDIT_LOG_LIMITS.TASK_BYTES (later edits are
 * recorded as not followed, so their files are "not observed"); records of tasks never completed
 * are removed after 30 days. Records written by earlier helpers (contents in `blobs/` by their
 * SHA-256) are still read.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Agent } from "../agents/agent.js";
import type { PatchChunk } from "../agents/codex-patch.js";
import { Journal } from "../hooks/journal.js";
import type { CapturedEdit, Replacement } from "./capture.js";

export const EDIT_LOG_LIMITS = {
  /** Contents recorded for one task's edits; beyond, edits are recorded as not followed. */
  TASK_BYTES: 64 * 1024 * 1024,
  /** A task's record older than this (never completed) is removed. */
  MAX_AGE_MS: 30 * 24 * 3600 * 1000,
} as const;

/** One file's edit as the log keeps it. */
type Entry = {
  at: number;
  path: string;
  moved_from?: string;
  /** The content before and after the edit (null: the file was absent). */
  before_text?: string | null;
  after_text?: string | null;
  /** The content before the edit is the path's previous version in this log, whose SHA-256 this is. */
  before_sha?: string;
  /** Records of earlier helpers: contents by their SHA-256, in `blobs/`. */
  before?: string | null;
  after?: string | null;
  replacements?: Replacement[];
  chunks?: PatchChunk[];
  skipped?: string;
  /** The agent's version, when its payload names it (its module's `payloadVersion`). */
  version?: string;
};

/** One file's edit as replay reads it: repository-relative paths, contents resolved (`before`, `after`: the contents themselves). */
export type LoggedEdit = Omit<Entry, "moved_from" | "before_text" | "after_text" | "before_sha"> & { movedFrom?: string };

const OVER_BOUND = `the task's record of edited contents reached ${EDIT_LOG_LIMITS.TASK_BYTES / 1024 / 1024} MiB`;
const GONE = "the record of a content the agent wrote is gone";

const contentName = (content: string) => createHash("sha256").update(content).digest("hex");

/**
 * The SHA-256 of the last content this process recorded after an edit, per journal, task and path:
 * the next edit of that path whose content before is the same names it instead of repeating it.
 */
const lastWritten = new WeakMap<Journal, Map<string, string>>();

export class LineEditLog {
  readonly folder: string;

  constructor(private readonly journal: Journal) {
    this.folder = join(journal.folder, "lines");
  }

  private file(taskId: string, extension: "jsonl" | "bytes"): string {
    return join(this.folder, Journal.taskFileName(taskId, extension));
  }

  /**
   * Records what one tool call did to the lines of the files it edited, for every task open at
   * `at`; returns how many file edits were recorded.
   */
  async record(payload: Record<string, unknown>, agent: Agent, at: number, cwd: string): Promise<number> {
    const captured = agent.capturedEdits(payload);
    if (captured.length === 0) return 0;
    const tasks = (await this.journal.openTasks()).filter((task) => task.started_at <= at);
    if (tasks.length === 0) return 0;
    const version = agent.payloadVersion?.(payload);
    const edits: { edit: CapturedEdit; entry: Entry }[] = [];
    for (const edit of captured) {
      const path = await this.journal.relativePath(edit.path, cwd);
      if (path === null) continue;
      const movedFrom = edit.movedFrom === undefined ? undefined : await this.journal.relativePath(edit.movedFrom, cwd);
      edits.push({ edit, entry: this.entry(edit, path, movedFrom ?? undefined, at, version) });
    }
    if (edits.length === 0) return 0;
    this.journal.ensure("lines");
    for (const task of tasks) {
      const lines = this.withContents(task.task_id, edits)
        .map((entry) => `${JSON.stringify(entry)}\n`)
        .join("");
      this.journal.append(this.file(task.task_id, "jsonl"), lines);
    }
    return edits.length;
  }

  private entry(edit: CapturedEdit, path: string, movedFrom: string | undefined, at: number, version: string | undefined): Entry {
    const entry: Entry = { at, path };
    if (movedFrom !== undefined) entry.moved_from = movedFrom;
    if (edit.skipped !== undefined) entry.skipped = edit.skipped;
    else if (edit.replacements) entry.replacements = edit.replacements;
    else if (edit.chunks) entry.chunks = edit.chunks;
    if (version !== undefined) entry.version = version;
    return entry;
  }

  /**
   * The entries as a task's log takes them: with the contents they name, within the task's bound
   * (an edit whose contents would pass it becomes skipped); a content before an edit that this
   * process recorded as the path's last is named by its hash.
   */
  private withContents(taskId: string, edits: readonly { edit: CapturedEdit; entry: Entry }[]): Entry[] {
    const file = this.file(taskId, "jsonl");
    // What the file holds, and what a batch of spooled edits (../hooks/journal.ts) will add to it.
    let used = this.journal.pendingBytes(file);
    try {
      used += statSync(file).size;
    } catch {
      // No record yet.
    }
    let last = lastWritten.get(this.journal);
    if (!last) {
      last = new Map();
      lastWritten.set(this.journal, last);
    }
    const known = last;
    return edits.map(({ edit, entry }) => {
      const key = `${taskId}\0${entry.path}`;
      const previous = known.get(key);
      known.delete(key);
      if (entry.skipped !== undefined) return entry;
      const named: Entry = { ...entry };
      const before = edit.before === undefined || edit.before === null ? undefined : contentName(edit.before);
      const bytes = (before !== undefined && before === previous ? 0 : (edit.before?.length ?? 0)) + (edit.after?.length ?? 0);
      if (used + bytes > EDIT_LOG_LIMITS.TASK_BYTES) return { at: entry.at, path: entry.path, skipped: OVER_BOUND };
      used += bytes;
      if (edit.before !== undefined) {
        if (before !== undefined && before === previous) named.before_sha = before;
        else named.before_text = edit.before;
      }
      if (edit.after !== undefined) {
        named.after_text = edit.after;
        if (edit.after !== null) known.set(key, contentName(edit.after));
      }
      return named;
    });
  }

  /** The task's recorded edits in the order they were made (an unreadable line is skipped; a lost content is a skipped edit). */
  async edits(taskId: string): Promise<LoggedEdit[] | null> {
    let text: string;
    try {
      // Read synchronously, as the journal's other records are: one read through the thread pool is four of its jobs.
      text = readFileSync(this.file(taskId, "jsonl"), "utf8");
    } catch {
      return null;
    }
    const entries: Entry[] = [];
    for (const line of text.split("\n")) {
      if (line === "") continue;
      try {
        const entry = JSON.parse(line) as Entry;
        if (typeof entry.at === "number" && typeof entry.path === "string") entries.push(entry);
      } catch {
        // A line cut by a crash: the others still count.
      }
    }
    // In the order the edits were made (records drained from a spool may arrive late).
    const ordered = entries.map((entry, index) => ({ entry, index })).sort((a, b) => a.entry.at - b.entry.at || a.index - b.index);
    // Each path's last recorded version, which a content named by its hash refers to.
    const versions = new Map<string, string | null>();
    const edits: LoggedEdit[] = [];
    for (const { entry } of ordered) {
      const { moved_from, before, after, before_text, after_text, before_sha, ...rest } = entry;
      const edit: LoggedEdit = { ...rest };
      if (moved_from !== undefined) edit.movedFrom = moved_from;
      const contents: { before?: string | null; after?: string | null } = {};
      if (before_sha !== undefined) {
        const previous = versions.get(entry.path);
        if (typeof previous === "string" && contentName(previous) === before_sha) contents.before = previous;
        else edit.skipped = GONE;
      } else if (before_text !== undefined) contents.before = before_text;
      else if (before !== undefined) contents.before = before === null ? null : await this.legacyContent(before);
      if (after_text !== undefined) contents.after = after_text;
      else if (after !== undefined) contents.after = after === null ? null : await this.legacyContent(after);
      for (const side of ["before", "after"] as const) {
        if (!(side in contents)) continue;
        const content = contents[side];
        // A content an earlier helper stored, gone or cut short.
        if (content === undefined) edit.skipped = GONE;
        else edit[side] = content;
      }
      const latest = "after" in contents ? contents.after : contents.before;
      if (latest === undefined) versions.delete(entry.path);
      else versions.set(entry.path, latest);
      edits.push(edit);
    }
    return edits;
  }

  /** A content an earlier helper stored in `blobs/`, if it is there whole (it hashes to its name). */
  private async legacyContent(name: string): Promise<string | undefined> {
    const content = await readFile(join(this.folder, "blobs", name), "utf8").catch(() => null);
    return content !== null && contentName(content) === name ? content : undefined;
  }

  /**
   * Removes a completed task's record, and records left by tasks never completed for
   * EDIT_LOG_LIMITS.MAX_AGE_MS (with the contents of earlier helpers' records no record names).
   */
  async forget(taskId: string, now = Date.now()): Promise<void> {
    // Synchronously, each a few metadata operations: through the thread pool every one was a job and a
    // callback, about a dozen for each completion (the folder holds the open tasks' logs only).
    rmSync(this.file(taskId, "jsonl"), { force: true });
    rmSync(this.file(taskId, "bytes"), { force: true });
    const names = listed(this.folder);
    const legacy = names.includes("blobs");
    const kept = new Set<string>();
    for (const name of names) {
      if (!name.endsWith(".jsonl")) continue;
      const path = join(this.folder, name);
      const info = statSync(path, { throwIfNoEntry: false });
      if (!info) continue;
      if (now - info.mtimeMs > EDIT_LOG_LIMITS.MAX_AGE_MS) {
        rmSync(path, { force: true });
        rmSync(path.replace(/\.jsonl$/, ".bytes"), { force: true });
        continue;
      }
      if (!legacy) continue;
      for (const match of (await readFile(path, "utf8").catch(() => "")).matchAll(/"(?:before|after)":"([0-9a-f]{64})"/g)) {
        if (match[1]) kept.add(match[1]);
      }
    }
    if (!legacy) return;
    const blobs = join(this.folder, "blobs");
    const left = listed(blobs);
    for (const name of left) if (!kept.has(name)) rmSync(join(blobs, name), { force: true });
    if (left.every((name) => !kept.has(name))) rmSync(blobs, { recursive: true, force: true });
  }
}

/** A folder's names; none when it cannot be read (not made yet, or removed meanwhile). */
function listed(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch {
    return [];
  }
}
