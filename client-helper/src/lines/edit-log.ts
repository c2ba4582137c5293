/**
 * @module lines/edit-log
 * The hooks' record of what the agent's edit tools did to each file's lines, per task, beside
 * the journal's other records (`<journal>/lines/`, in the user's cache, never in the repository):
 * one JSON line per edited file per tool call (`<task>.jsonl`), and the contents the edits name,
 * stored once by their SHA-256 (`blobs/`: the content before an edit is usually the one the last
 * edit left, so it costs nothing more). complete_task replays them (./replay.ts) and forgets them;
 * nothing of it leaves the machine. Bounded: a task's stored contents stop at
 * EDIT_LOG_LIMITS.TASK_BYTES (later edits are recorded as not followed, so their files are "not
 * observed"); records of tasks never completed are removed after 30 days.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { appendFile, readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Agent } from "../agents/agent.js";
import type { PatchChunk } from "../agents/codex-patch.js";
import { Journal } from "../hooks/journal.js";
import type { CapturedEdit, Replacement } from "./capture.js";

export const EDIT_LOG_LIMITS = {
  /** Contents stored for one task's edits; beyond, edits are recorded as not followed. */
  TASK_BYTES: 64 * 1024 * 1024,
  /** A task's record older than this (never completed) is removed. */
  MAX_AGE_MS: 30 * 24 * 3600 * 1000,
} as const;

/** One file's edit as the log keeps it (contents by their blob name). */
type Entry = {
  at: number;
  path: string;
  moved_from?: string;
  before?: string | null;
  after?: string | null;
  replacements?: Replacement[];
  chunks?: PatchChunk[];
  skipped?: string;
  /** The agent's version, when its payload names it (its module's `payloadVersion`). */
  version?: string;
};

/** One file's edit as replay reads it: repository-relative paths, contents resolved. */
export type LoggedEdit = Omit<Entry, "moved_from"> & { movedFrom?: string };

const OVER_BOUND = `the task's record of edited contents reached ${EDIT_LOG_LIMITS.TASK_BYTES / 1024 / 1024} MiB`;
const GONE = "the record of a content the agent wrote is gone";

const contentName = (content: string) => createHash("sha256").update(content).digest("hex");

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
   * `at`; returns how many file edits were recorded. Written synchronously: a hook's run is short
   * and every round trip through the thread pool costs more than these writes.
   */
  async record(payload: Record<string, unknown>, agent: Agent, at: number, cwd: string): Promise<number> {
    const captured = agent.capturedEdits(payload);
    if (captured.length === 0) return 0;
    const tasks = (await this.journal.openTasks()).filter((task) => task.started_at <= at);
    if (tasks.length === 0) return 0;
    const version = agent.payloadVersion?.(payload);
    const entries: Entry[] = [];
    for (const edit of captured) {
      const path = await this.journal.relativePath(edit.path, cwd);
      if (path === null) continue;
      const movedFrom = edit.movedFrom === undefined ? undefined : await this.journal.relativePath(edit.movedFrom, cwd);
      entries.push(this.entry(edit, path, movedFrom ?? undefined, at, version));
    }
    if (entries.length === 0) return 0;
    mkdirSync(join(this.folder, "blobs"), { recursive: true, mode: 0o700 });
    for (const task of tasks) {
      const written = this.storeContents(task.task_id, captured, entries);
      const lines = written.map((entry) => `${JSON.stringify(entry)}\n`).join("");
      await appendFile(this.file(task.task_id, "jsonl"), lines, { mode: 0o600 });
    }
    return entries.length;
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
   * Stores the edits' contents for a task (each once), within the task's bound; the entries as
   * written, with contents named by blob (an edit whose contents would pass the bound becomes skipped).
   */
  private storeContents(taskId: string, captured: readonly CapturedEdit[], entries: readonly Entry[]): Entry[] {
    const counter = this.file(taskId, "bytes");
    let used = 0;
    try {
      used = Number(readFileSync(counter, "utf8")) || 0;
    } catch {
      used = 0;
    }
    const start = used;
    const out = entries.map((entry, index) => {
      const edit = captured[index] as CapturedEdit;
      if (entry.skipped !== undefined) return entry;
      const named: Entry = { ...entry };
      for (const side of ["before", "after"] as const) {
        const content = edit[side];
        if (content === undefined) continue;
        if (content === null) {
          named[side] = null;
          continue;
        }
        const name = contentName(content);
        const path = join(this.folder, "blobs", name);
        if (!existsSync(path)) {
          if (used + content.length > EDIT_LOG_LIMITS.TASK_BYTES) return { at: entry.at, path: entry.path, skipped: OVER_BOUND };
          writeAtomic(path, content);
          used += content.length;
        }
        named[side] = name;
      }
      return named;
    });
    if (used !== start) writeAtomic(counter, String(used));
    return out;
  }

  /** The task's recorded edits in the order they were made (an unreadable line is skipped; a lost content is a skipped edit). */
  async edits(taskId: string): Promise<LoggedEdit[] | null> {
    let text: string;
    try {
      text = await readFile(this.file(taskId, "jsonl"), "utf8");
    } catch {
      return null;
    }
    const edits: LoggedEdit[] = [];
    for (const line of text.split("\n")) {
      if (line === "") continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        continue;
      }
      if (typeof entry.at !== "number" || typeof entry.path !== "string") continue;
      const { moved_from, before, after, ...rest } = entry;
      const edit: LoggedEdit = { ...rest };
      if (moved_from !== undefined) edit.movedFrom = moved_from;
      for (const [side, name] of [
        ["before", before],
        ["after", after],
      ] as const) {
        if (name === undefined) continue;
        if (name === null) edit[side] = null;
        else {
          const content = await readFile(join(this.folder, "blobs", name), "utf8").catch(() => null);
          if (content === null) edit.skipped = GONE;
          else edit[side] = content;
        }
      }
      edits.push(edit);
    }
    // In the order the edits were made (records drained from a spool may arrive late).
    return edits
      .map((edit, index) => ({ edit, index }))
      .sort((a, b) => a.edit.at - b.edit.at || a.index - b.index)
      .map(({ edit }) => edit);
  }

  /**
   * Removes a completed task's record, the contents no other open task's record names, and
   * records left by tasks never completed for EDIT_LOG_LIMITS.MAX_AGE_MS.
   */
  async forget(taskId: string, now = Date.now()): Promise<void> {
    await rm(this.file(taskId, "jsonl"), { force: true });
    await rm(this.file(taskId, "bytes"), { force: true });
    const names = await readdir(this.folder).catch(() => [] as string[]);
    const kept = new Set<string>();
    for (const name of names) {
      if (!name.endsWith(".jsonl")) continue;
      const path = join(this.folder, name);
      const info = await stat(path).catch(() => null);
      if (!info) continue;
      if (now - info.mtimeMs > EDIT_LOG_LIMITS.MAX_AGE_MS) {
        await rm(path, { force: true });
        await rm(path.replace(/\.jsonl$/, ".bytes"), { force: true });
        continue;
      }
      for (const match of (await readFile(path, "utf8").catch(() => "")).matchAll(/"(?:before|after)":"([0-9a-f]{64})"/g)) {
        if (match[1]) kept.add(match[1]);
      }
    }
    const blobs = join(this.folder, "blobs");
    for (const name of await readdir(blobs).catch(() => [] as string[])) {
      if (!kept.has(name)) await rm(join(blobs, name), { force: true });
    }
  }
}

function writeAtomic(path: string, content: string): void {
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, content, { mode: 0o600 });
  renameSync(temp, path);
}
