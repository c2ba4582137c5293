/**
 * @module hooks/stop-state
 * The stop hook's answer decided ahead, so stops start no Node. Node's start-up alone costs more
 * than a stop may (100 ms), and what a stop answers depends only on the journal and on whether
 * the agent worked since: nothing (no task open, or every open task reminded since its last
 * edit), or a reminder, said once. Whenever the journal of a working tree changes (a task started,
 * reminded or completed, an edit recorded), the helper writes what it now knows to
 * `<cache>/trees/<dev>:<ino>:<birth>.stop`, named by the working tree directory's identity on
 * disk as `stat -c '%d:%i:%.9W'` prints it:
 *  1. the identity of the repository in it (its `.git`, the same way) and the path: the installed
 *     stop hook (@waymark/protocol/agent-config's stopCommand) answers without Node only when both
 *     match what it reads itself, so a repository made again at the same path never gets the old
 *     one's answer;
 *  2. `none`, or `due` / `reminded` (some open task is due a reminder, or none is) and the ids of
 *     the open tasks;
 *  3. the reminder of the tasks due, as a JSON string (empty when none is);
 *  4. the reminder of every open task, said when the edit hook touched `<identity>.edited` after
 *     this file was written (the tree was worked on since: every open task is due).
 * A stop hook that reminds rewrites line 2 as `hook-reminded <ids>`, which the helper reads as those
 * tasks reminded at the file's time (`hookRemindedAt`) and which is otherwise `reminded`. Where the
 * state cannot settle a stop (an edit spooled with no `.edited` newer: perhaps another tree's), the
 * hook runs the helper, which drains the spool as before. Anything the helper is unsure of (no
 * birth time on this file system, a path with a newline, a task id that is not a plain word) is no
 * file at all: the hook runs the helper.
 */
import { randomUUID } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STOP_STATE_DIR } from "@waymark/protocol/agent-config";

/** The open tasks of a working tree, and those of them due a reminder. */
export type StopState = { open: ReminderTask[]; due: ReminderTask[] };

/** What the reminder names of a task. */
export type ReminderTask = { task_id: string; workflow_id: string | null; name: string | null };

/** The second line a hook that reminded writes (stopCommand's shell line writes it too). */
const HOOK_REMINDED = "hook-reminded";

/** A task id the shell line may carry: a plain word (the endpoint's ids are `tk_…`). */
const PLAIN_ID = /^[A-Za-z0-9_-]{1,100}$/;

/** The stop reminder: the same words whether the helper or the shell line says it. */
export function stopReminder(tasks: readonly ReminderTask[]): string {
  const names = tasks
    .map((task) => `${task.task_id}${task.name ? ` "${task.name}"` : ""}${task.workflow_id ? ` in workflow ${task.workflow_id}` : ""}`)
    .join("; ");
  return `Waymark: task ${names} is still open. If its work is done, call complete_task with its outcome; if it continues later, say so and stop.`;
}

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

/** Writes what the stop hook of the working tree at `root` may answer alone; never throws. */
function currentText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

export function keepStopState(cache: string, root: string, state: StopState): void {
  try {
    const file = stateFile(cache, root);
    if (file === null) return;
    const { open, due } = state;
    if (!open.every((task) => PLAIN_ID.test(task.task_id))) {
      rmSync(file.path, { force: true });
      return;
    }
    const reminder = (tasks: ReminderTask[]) => (tasks.length > 0 ? JSON.stringify(stopReminder(tasks)) : "");
    const ids = open.map((task) => task.task_id).join(" ");
    const body = open.length === 0 ? "none\n" : `${due.length > 0 ? "due" : "reminded"} ${ids}\n${reminder(due)}\n${reminder(open)}\n`;
    const text = `${file.header}\n${body}`;
    // The same state kept again is only dated again (its time tells the stop line what was read since): no file written.
    if (currentText(file.path) === text) {
      const now = new Date();
      utimesSync(file.path, now, now);
      return;
    }
    mkdirSync(join(cache, STOP_STATE_DIR), { recursive: true, mode: 0o700 });
    const temp = `${file.path}.${process.pid}.${randomUUID()}.tmp`;
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, file.path);
  } catch {
    // Without the file the stop hook runs the helper: slower, never wrong.
  }
}

/**
 * The tasks the stop hook reminded without Node, and when (the file's time): to be marked reminded
 * in the journal. Null when the last stop's answer was not the hook's own reminder.
 */
export function hookRemindedAt(cache: string, root: string): { taskIds: string[]; at: number } | null {
  try {
    const file = stateFile(cache, root);
    if (file === null) return null;
    const [header, second = ""] = readFileSync(file.path, "utf8").split("\n");
    const [word, ...taskIds] = second.split(" ");
    if (header !== file.header || word !== HOOK_REMINDED || taskIds.length === 0) return null;
    return { taskIds, at: statSync(file.path).mtimeMs };
  } catch {
    return null;
  }
}
