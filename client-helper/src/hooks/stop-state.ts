/**
 * @module hooks/stop-state
 * The stop hook's answer decided ahead, so most stops start no Node. Node's start-up alone is
 * most of what a stop hook costs the agent, and most stops need no reminder: no task is open in
 * the working tree, or every open task was reminded and nothing was edited since. Whenever the
 * journal of a working tree changes (a task started, reminded or completed, an edit recorded),
 * the helper writes what it now knows to `<cache>/trees/<dev>:<ino>:<birth>.stop`, named by the
 * working tree directory's identity on disk as `stat -c '%d:%i:%.9W'` prints it. Its first line is
 * the identity of the repository in it (its `.git`, the same way) and the path: the installed
 * stop hook (@waymark/protocol/agent-config's stopCommand) answers nothing without Node only when
 * both match what it reads itself, so a repository made again at the same path never gets the old
 * one's answer. Its second line is `none` (no task open) or `reminded` (every open task reminded
 * since its last edit), both true while no spooled edit is newer than this file (the helper records
 * it first, so the spool is drained at stops as before). Anything else, or
 * anything the helper is unsure of (no birth time on this file system, a path with a newline), is
 * no file at all: the hook runs the helper as before.
 */
import { randomUUID } from "node:crypto";
import { lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STOP_STATE_DIR } from "@waymark/protocol/agent-config";

/** What a stop decides without Node: no task open, or every open task already reminded of. */
export type StopState = "none" | "reminded";

/**
 * `dev:ino:birth` as GNU `stat -c '%d:%i:%.9W'` prints it (birth to the nanosecond: a directory
 * deleted and made again often gets the same inode within the same second); null when the birth
 * time is unknown.
 */
function identity(path: string): string | null {
  const info = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (!info || info.birthtimeNs === 0n) return null;
  const nanoseconds = String(info.birthtimeNs % 1_000_000_000n).padStart(9, "0");
  return `${info.dev}:${info.ino}:${info.birthtimeNs / 1_000_000_000n}.${nanoseconds}`;
}

/** The stop-state file of the working tree at `root` (a real path) and its first line; null when unsure. */
function stateFile(cache: string, root: string): { path: string; header: string } | null {
  if (root.includes("\n")) return null;
  const tree = identity(root);
  const git = identity(join(root, ".git"));
  if (tree === null || git === null) return null;
  return { path: join(cache, STOP_STATE_DIR, `${tree}.stop`), header: `${git} ${root}` };
}

/** Writes (state) or removes (null) what the stop hook of the working tree at `root` may answer alone; never throws. */
export function keepStopState(cache: string, root: string, state: StopState | null): void {
  try {
    const file = stateFile(cache, root);
    if (file === null) return;
    if (state === null) {
      rmSync(file.path, { force: true });
      return;
    }
    mkdirSync(join(cache, STOP_STATE_DIR), { recursive: true, mode: 0o700 });
    const temp = `${file.path}.${process.pid}.${randomUUID()}.tmp`;
    writeFileSync(temp, `${file.header}\n${state}\n`, { mode: 0o600 });
    renameSync(temp, file.path);
  } catch {
    // Without the file the stop hook runs the helper: slower, never wrong.
  }
}
