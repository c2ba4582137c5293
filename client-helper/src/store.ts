import { createHash, randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { LocalSnapshot } from "./local.js";

// Per-task state that must survive a helper restart between start_task and
// complete_task. It lives in the user's cache dir, never inside their repository.

export type TaskRecord = {
  task_id: string;
  /** The project directory the snapshot was taken in. */
  dir: string;
  snapshot: LocalSnapshot | null;
  /** Reused on every complete_task retry until one succeeds, so the edge counts it once. */
  idempotency_key?: string;
};

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : join(homedir(), ".cache");
  return join(base, "waymark");
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

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
    const folder = this.folder(record.dir);
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const target = this.file(record.dir, record.task_id);
    const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temp, JSON.stringify(record), { mode: 0o600 });
    await rename(temp, target);
  }

  /** The record from memory, else from disk (written by an earlier helper process). */
  async load(taskId: string, dir: string): Promise<TaskRecord | null> {
    const known = this.memory.get(taskId);
    if (known) return known;
    try {
      const record = JSON.parse(await readFile(this.file(dir, taskId), "utf8")) as TaskRecord;
      if (record.task_id !== taskId) return null;
      this.memory.set(taskId, record);
      return record;
    } catch {
      return null;
    }
  }

  async remove(taskId: string, dir: string): Promise<void> {
    const record = this.memory.get(taskId);
    this.memory.delete(taskId);
    await rm(this.file(record?.dir ?? dir, taskId), { force: true });
  }
}
