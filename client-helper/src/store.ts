/**
 * @module store
 * Per-task state that must survive a helper restart between start_task and complete_task,
 * and the marks that let every helper process on this machine see the other tasks open on
 * the same working tree (another agent, another workflow). It lives in the user's cache dir,
 * never inside their repository.
 */

import { randomUUID } from "node:crypto";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ConcurrentTask } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { checksumScanFromJson } from "./checksum.js";
import type { LocalChecksumSnapshot, LocalSnapshot } from "./local.js";
import { nameHash } from "./name-hash.js";
import { treeKey } from "./tree-key.js";

export type TaskRecord = {
  task_id: string;
  /** The project directory the snapshot was taken in. */
  dir: string;
  snapshot: LocalSnapshot | null;
  /** Reused on every complete_task retry until one succeeds, so the edge counts it once. */
  idempotency_key?: string;
  /** The nonce of this device's signature on the start snapshot: the completion's signature names it. */
  start_nonce?: string;
};

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, "waymark");
}

const hash = nameHash;

/** A task never completed (the agent gave up, the workflow was abandoned) leaves its record this long. */
export const RECORD_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
const TEMP_MAX_AGE_MS = 24 * 3600 * 1000;

/** Removes records older than RECORD_MAX_AGE_MS and temp files of interrupted writes; returns how many went. */
export async function pruneCache(root: string, now = Date.now()): Promise<number> {
  let removed = 0;
  const folders = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const folder of folders) {
    if (!folder.isDirectory()) continue;
    const dir = join(root, folder.name);
    for (const name of await readdir(dir).catch(() => [])) {
      const maxAge = name.endsWith(".tmp") ? TEMP_MAX_AGE_MS : name.endsWith(".json") ? RECORD_MAX_AGE_MS : null;
      if (maxAge === null) continue;
      const info = await stat(join(dir, name)).catch(() => null);
      if (info && now - info.mtimeMs > maxAge) {
        await rm(join(dir, name), { force: true });
        removed++;
      }
    }
  }
  return removed;
}

/**
 * The last checksum scan of a directory outside git, kept so that the next `waymark snapshot` of
 * it hashes only the files whose stat data moved (git's rule for its index: mtime, ctime, inode,
 * size and mode, racily clean files re-hashed). One file per directory, replaced by every scan.
 */
function scanCacheFile(dir: string, root: string): string {
  return join(root, "scans", `${hash(dir).slice(0, 40)}.json`);
}

/** The cached scan of `dir`, or null (none, unreadable, or not a scan of that directory). */
export async function readScanCache(dir: string, root: string = cacheRoot()): Promise<LocalChecksumSnapshot | null> {
  try {
    const scan = checksumScanFromJson(JSON.parse(await readFile(scanCacheFile(dir, root), "utf8")));
    return typeof scan !== "string" && scan.root === dir ? scan : null;
  } catch {
    return null;
  }
}

/**
 * Writes a scan of `dir` to the cache piece by piece (the same JSON the CLI prints), in place
 * once complete. A cache that cannot be written is no failure: the next scan hashes everything.
 */
export function scanCacheWriter(dir: string, root: string = cacheRoot()): { write(bytes: Buffer): void; commit(): void } {
  const target = scanCacheFile(dir, root);
  const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
  let fd: number | null = null;
  try {
    mkdirSync(join(root, "scans"), { recursive: true, mode: 0o700 });
    fd = openSync(temp, "w", 0o600);
  } catch {
    fd = null;
  }
  const abandon = () => {
    if (fd !== null) closeSync(fd);
    fd = null;
    rmSync(temp, { force: true });
  };
  return {
    write(bytes) {
      if (fd === null) return;
      try {
        writeSync(fd, bytes);
      } catch {
        abandon();
      }
    },
    commit() {
      if (fd === null) return;
      try {
        closeSync(fd);
        fd = null;
        renameSync(temp, target);
      } catch {
        abandon();
      }
    },
  };
}

/** A task's presence on a working tree: its window and, once completed, the paths it changed. */
export type WorktreeMark = {
  task_id: string;
  started_at: number;
  completed_at: number | null;
  changed?: string[];
  changed_count?: number;
  /** Its parent chain as start_task named it: a parent and its subtasks are never concurrent tasks. */
  ancestors?: string[];
};

/** Paths kept per completed task to name shared files; the count stays exact beyond. */
export const MARK_PATHS = 2000;
/** A completed task matters to tasks still open that started before it ended; a week covers any real task. */
const COMPLETED_MARK_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
/** A task left open this long was abandoned, not concurrent: it stops being reported (its mark is pruned at 30 days). */
export const OPEN_MARK_MAX_AGE_MS = 3 * 24 * 3600 * 1000;
/** A completed mark is retired only this long after its task completed: a task starting meanwhile elsewhere took its start time before. */
export const RETIRE_MARGIN_MS = 60_000;

export class TaskStore {
  private readonly memory = new Map<string, TaskRecord>();
  private pruned = false;

  constructor(
    private readonly endpoint: string,
    private readonly root: string = cacheRoot(),
  ) {}

  /** One folder per endpoint + project dir, so two projects or two endpoints never mix. */
  private folder(dir: string): string {
    return join(this.root, hash(`${this.endpoint}\0${dir}`).slice(0, 24));
  }

  private file(dir: string, taskId: string): string {
    return join(this.folder(dir), `${hash(taskId).slice(0, 40)}.json`);
  }

  async save(record: TaskRecord): Promise<void> {
    this.memory.set(record.task_id, record);
    if (!this.pruned) {
      this.pruned = true;
      // Housekeeping never delays or fails a tool call.
      void pruneCache(this.root).catch(() => {});
    }
    // Synchronously, as the journal's records are: through the thread pool, the folder, the file's
    // open, write and close and the rename were five jobs and their callbacks on every start_task.
    const folder = this.folder(record.dir);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const target = this.file(record.dir, record.task_id);
    const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
    writeFileSync(temp, JSON.stringify(record), { mode: 0o600 });
    renameSync(temp, target);
  }

  /** The record from memory, else from disk (written by an earlier helper process). */
  async load(taskId: string, dir: string): Promise<TaskRecord | null> {
    const known = this.memory.get(taskId);
    if (known) return known;
    try {
      const record = JSON.parse(await readFile(this.file(dir, taskId), "utf8")) as TaskRecord;
      if (record.task_id !== taskId) return null;
      if (record.snapshot?.type === "checksum") {
        // Read back as the scan kept it, or as an earlier helper version wrote it (entries by path).
        const scan = checksumScanFromJson(record.snapshot);
        record.snapshot = typeof scan === "string" ? null : scan;
      }
      this.memory.set(taskId, record);
      return record;
    } catch {
      return null;
    }
  }

  /**
   * One folder per endpoint + working tree (the repository's top level, or the checksum root),
   * keyed by the tree and the repository in it (./tree-key.ts), never by the path alone.
   */
  private treeFolder(tree: string, kind: "t" | "d" = "t"): string {
    return join(this.root, `${kind}-${hash(`${this.endpoint}\0${treeKey(tree)}`).slice(0, 24)}`);
  }

  /**
   * Where completed marks go once no task can overlap them (`concurrent` retires them): kept for
   * `mark` (a subtask's lineage), out of `concurrent`'s scan, which otherwise read every mark of
   * the last week on every start_task and complete_task (a thousand tasks: a thousand files each).
   * A sibling of the tree's folder, so pruneCache removes them at its age like every record.
   */
  private retiredFolder(tree: string): string {
    return this.treeFolder(tree, "d");
  }

  /**
   * A mark is a small file written on the way of a tool call's answer: synchronously, as each
   * step through the thread pool costs a round trip (several per call on a busy machine).
   */
  private async writeMark(tree: string, mark: WorktreeMark): Promise<void> {
    const folder = this.treeFolder(tree);
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const target = join(folder, `${hash(mark.task_id).slice(0, 40)}.json`);
    const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
    writeFileSync(temp, JSON.stringify(mark), { mode: 0o600 });
    renameSync(temp, target);
  }

  async markStarted(tree: string, taskId: string, startedAt: number, ancestors: readonly string[] = []): Promise<void> {
    const mark: WorktreeMark = { task_id: taskId, started_at: startedAt, completed_at: null };
    if (ancestors.length > 0) mark.ancestors = [...ancestors];
    await this.writeMark(tree, mark);
  }

  /** A new subtask's ancestors: its parent and the parent's own chain, as their marks recorded them. */
  async lineage(tree: string, parentId: string): Promise<string[]> {
    const parent = await this.mark(tree, parentId);
    return [parentId, ...(parent?.ancestors ?? [])];
  }

  /** `count`: how many paths the task changed, when `changed` was already cut (to MARK_PATHS). */
  async markCompleted(tree: string, mark: WorktreeMark, changed: readonly string[], count = changed.length): Promise<void> {
    await this.writeMark(tree, {
      ...mark,
      completed_at: Date.now(),
      changed: changed.slice(0, MARK_PATHS),
      changed_count: count,
    });
  }

  async mark(tree: string, taskId: string): Promise<WorktreeMark | null> {
    const name = `${hash(taskId).slice(0, 40)}.json`;
    for (const folder of [this.treeFolder(tree), this.retiredFolder(tree)]) {
      try {
        return JSON.parse(readFileSync(join(folder, name), "utf8")) as WorktreeMark;
      } catch {
        // Not there: retired, or never marked.
      }
    }
    return null;
  }

  /**
   * The other tasks whose window overlaps [since, now] on this working tree, with the paths
   * both changed when the other has completed (`changed` are this task's changed paths, or
   * null at start when none are known yet). The task's own ancestors and subtasks are left out:
   * a parent's work includes its subtasks' by design.
   */
  async concurrent(
    tree: string,
    taskId: string,
    since: number,
    changed: readonly string[] | null,
    ancestors: readonly string[] = [],
  ): Promise<ConcurrentTask[]> {
    const lineage = new Set(ancestors);
    const folder = this.treeFolder(tree);
    let names: string[] = [];
    try {
      // Listed synchronously, as its marks are read (below).
      names = readdirSync(folder);
    } catch {
      // No mark on this working tree yet.
    }
    const now = Date.now();
    const mine = changed === null ? null : new Set(changed);
    const found: ConcurrentTask[] = [];
    // Retiring: the oldest start of a task still open here (however old), and the completed marks.
    let oldestOpen = Number.POSITIVE_INFINITY;
    const completed: { name: string; at: number }[] = [];
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      let mark: WorktreeMark;
      try {
        // Read synchronously: reading the marks one after another through the thread pool grew
        // every start_task and complete_task.
        mark = JSON.parse(readFileSync(join(folder, name), "utf8")) as WorktreeMark;
      } catch {
        continue;
      }
      if (mark.completed_at !== null && now - mark.completed_at > COMPLETED_MARK_MAX_AGE_MS) {
        await rm(join(folder, name), { force: true });
        continue;
      }
      if (mark.completed_at === null) oldestOpen = Math.min(oldestOpen, mark.started_at);
      else completed.push({ name, at: mark.completed_at });
      if (mark.task_id === taskId || lineage.has(mark.task_id)) continue;
      if (taskId !== "" && mark.ancestors?.includes(taskId)) continue;
      if (mark.completed_at === null && now - mark.started_at > OPEN_MARK_MAX_AGE_MS) continue;
      const overlaps = mark.started_at <= now && (mark.completed_at === null || mark.completed_at >= since);
      if (!overlaps) continue;
      const task: ConcurrentTask = { task_id: mark.task_id, started_at: mark.started_at, completed_at: mark.completed_at };
      if (mine !== null && mark.changed !== undefined) {
        const shared = mark.changed.filter((path) => mine.has(path));
        task.shared_paths = shared.slice(0, WIRE_LIMITS.SHARED_PATHS);
        task.shared_count = shared.length;
      }
      found.push(task);
    }
    this.retire(tree, completed, Math.min(oldestOpen, now - RETIRE_MARGIN_MS));
    return found.sort((left, right) => left.started_at - right.started_at).slice(0, WIRE_LIMITS.CONCURRENT_TASKS);
  }

  /**
   * Completed marks that ended before `before` (the oldest start of a task open here, and a margin
   * for a task starting elsewhere meanwhile) overlap no open task and no later one: they leave the
   * scan. Best effort: a mark not moved is read again next time, as before.
   */
  private retire(tree: string, completed: readonly { name: string; at: number }[], before: number): void {
    const leaving = completed.filter((mark) => mark.at < before);
    if (leaving.length === 0) return;
    try {
      const folder = this.treeFolder(tree);
      const retired = this.retiredFolder(tree);
      mkdirSync(retired, { recursive: true, mode: 0o700 });
      for (const { name } of leaving) renameSync(join(folder, name), join(retired, name));
    } catch {
      // Scanned again next time.
    }
  }

  async remove(taskId: string, dir: string): Promise<void> {
    const record = this.memory.get(taskId);
    this.memory.delete(taskId);
    // Synchronously: one file, where rm through the thread pool is two jobs (a stat, then the unlink).
    rmSync(this.file(record?.dir ?? dir, taskId), { force: true });
  }
}
