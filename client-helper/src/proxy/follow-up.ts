/**
 * @module proxy/follow-up
 * What a complete_task leaves to do once the edge has the task: the local records other processes
 * read (the working tree's mark, the hooks' journal closed, the task's command log forgotten) and
 * this process's own copies removed. The agent waits for none of it, so it runs after the answer
 * is written out; what it needs is written first, in one small file (`<cache>/completed/`), so
 * that a helper that dies between the answer and these writes leaves nothing undone: the next
 * helper of this cache finds the file and does them (recoverFollowUps). The edge already has
 * everything these records hold (the edits, the commands, the usage were sent with the task).
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { forgetCommands } from "../hooks/commands.js";
import { noteTaskCompleted } from "../hooks/record.js";
import { forgetLineEdits } from "../lines/inputs.js";
import { nameHash } from "../name-hash.js";
import type { TaskStore, WorktreeMark } from "../store.js";
import { startContentsOf } from "../task-review.js";
import type { TranscriptUsage } from "../usage/transcript.js";

/** What the follow-up of one completion needs, as kept on disk until it is done. */
export type FollowUp = {
  /** The endpoint the task is on (the task store and the marks are per endpoint). */
  endpoint: string;
  /** The helper process that does it; a file of a live one is its own (recovered only if it is gone). */
  pid: number;
  at: number;
  task_id: string;
  /** The call's project directory (the hooks' journal) and the one the task's record is kept under. */
  dir: string;
  record_dir: string;
  top?: string;
  /** The working tree whose marks the task is in, with its mark as read before the call and the paths it changed. */
  root?: string;
  mark: WorktreeMark | null;
  /** At most MARK_PATHS of them (as the mark keeps them), and how many there were. */
  changed: string[];
  changed_count: number;
};

/** What of the proxy's session a follow-up uses (./session.ts). */
type ProxySession = {
  readonly store: TaskStore;
  readonly cache: string;
  readonly log: (line: string) => void;
  readonly options: { readonly cacheDir?: string };
};

/** A file left by a helper still alive is recovered only past this age (its follow-up takes milliseconds). */
const LIVE_OWNER_GRACE_MS = 60_000;

function folder(cache: string): string {
  return join(cache, "completed");
}

function fileOf(cache: string, taskId: string): string {
  return join(folder(cache), `${nameHash(taskId).slice(0, 40)}.json`);
}

/** The caches whose follow-up folder this process made (or found): not made again for each completion. */
const made = new Set<string>();

/** A follow-up written beside its final name: `keep` once the edge accepted the task, `drop` otherwise. */
export type KeptFollowUp = { keep(): void; drop(): void };

/**
 * Writes what the follow-up needs, under a temporary name (while the request is in flight): synchronously,
 * a small file, where a round trip through the thread pool costs more than the write. A failure to write
 * it is no reason to fail the call: the follow-up still runs after the answer.
 */
export function writeFollowUp(cache: string, followUp: FollowUp): KeptFollowUp {
  const target = fileOf(cache, followUp.task_id);
  const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
  try {
    if (!made.has(cache)) mkdirSync(folder(cache), { recursive: true, mode: 0o700 });
    made.add(cache);
    writeFileSync(temp, JSON.stringify(followUp), { mode: 0o600 });
  } catch {
    // Made again next time (its folder may have been removed meanwhile).
    made.delete(cache);
    // Done after the answer all the same; only a crash in between would leave it undone.
    return { keep() {}, drop() {} };
  }
  const settle = (to: string | null) => {
    try {
      if (to === null) rmSync(temp, { force: true });
      else renameSync(temp, to);
    } catch {
      // As above.
    }
  };
  return { keep: () => settle(target), drop: () => settle(null) };
}

/**
 * The follow-up of one completion: the working tree's mark and the hooks' journal first (what
 * other processes read), then this process's copies; its file removed once all is done. `read`:
 * the task's usage as the completion read it from the transcript (read again when undefined).
 * Never throws.
 */
export async function runFollowUp(
  session: ProxySession,
  followUp: FollowUp,
  extra: Promise<unknown>[] = [],
  read?: TranscriptUsage | null,
): Promise<void> {
  const { task_id: taskId, dir, top } = followUp;
  const cacheDir = session.options.cacheDir;
  await Promise.all([
    followUp.root !== undefined && markCompleted(session, followUp.root, followUp),
    // Hooks: the task's edited paths and transcript usage are kept locally; its commands were sent.
    noteTaskCompleted(dir, taskId, cacheDir, session.log, top, read),
    forgetCommands(dir, taskId, cacheDir, top),
  ]);
  const record = await session.store.load(taskId, followUp.record_dir).catch(() => null);
  await Promise.all([
    ...extra,
    forgetLineEdits(dir, taskId, cacheDir, top),
    record?.snapshot ? startContentsOf(record.snapshot)?.remove() : undefined,
    session.store.remove(taskId, followUp.record_dir).catch(() => {}),
  ]);
  rmSync(fileOf(session.cache, taskId), { force: true });
}

/** The task's mark completed: as read before the call, else as it is now. */
async function markCompleted(session: ProxySession, root: string, followUp: FollowUp): Promise<void> {
  const taskId = followUp.task_id;
  const known = followUp.mark ?? (await session.store.mark(root, taskId).catch(() => null));
  const mark = known ?? { task_id: taskId, started_at: 0, completed_at: null };
  await session.store.markCompleted(root, mark, followUp.changed, followUp.changed_count).catch(() => {});
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The follow-ups a helper of this endpoint left undone (it ended between a completion's answer and
 * its records): done now, in order. Never throws.
 */
export async function recoverFollowUps(session: ProxySession, endpoint: string): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(folder(session.cache));
  } catch {
    return; // None was ever kept here.
  }
  const now = Date.now();
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const path = join(folder(session.cache), name);
    try {
      const followUp = JSON.parse(readFileSync(path, "utf8")) as FollowUp;
      if (followUp.endpoint !== endpoint || typeof followUp.task_id !== "string") continue;
      // A live helper's own (it is doing it now), unless it is long overdue.
      if (alive(followUp.pid) && now - statSync(path).mtimeMs < LIVE_OWNER_GRACE_MS) continue;
      await runFollowUp(session, followUp);
    } catch {
      // A torn file (a crash while it was written, before the answer went out): the task's retry does it.
      rmSync(path, { force: true });
    }
  }
}
