/**
 * @module init/commit-trailer
 * The opt-in `Waymark-Task:` commit trailer: `waymark init --commit-trailer` installs a
 * `prepare-commit-msg` hook (never replacing a hook of someone else's); on each commit the
 * hook runs `waymark commit-trailer <message file>`, which names the task open in this
 * repository (the helper's journal of open tasks) in the message, so commits tie back to
 * tasks in summaries. The trailer is added in JavaScript: `git interpret-trailers` would run
 * commands the repository's own config may define (trailer.*.cmd). A commit never fails
 * because of the hook.
 */
import { chmod, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import { launcherShellPath } from "@waymark/protocol/agent-config";
import { inertContext } from "../git/inert-config.js";
import { runGit } from "../git/process.js";
import { Journal } from "../hooks/journal.js";

const MARK = "# waymark: commit trailer";
export const TRAILER = "Waymark-Task";

function hookScript(version: string): string {
  return `#!/bin/sh
${MARK} (installed by 'waymark init --commit-trailer'; 'waymark init --remove --commit-trailer' removes it)
launcher=${launcherShellPath(version)}
if [ -f "$launcher" ]; then node "$launcher" commit-trailer "$1" "$2" >/dev/null 2>&1; fi
exit 0
`;
}

async function hookPath(dir: string): Promise<string> {
  const context = await inertContext(dir);
  const path = (await runGit(context, ["rev-parse", "--git-path", "hooks/prepare-commit-msg"])).toString("utf8").trim();
  return isAbsolute(path) ? path : join(dir, path);
}

/** Installs (or with `remove`, removes) the hook; returns what happened, for the user. */
export async function installCommitTrailer(dir: string, version: string, remove: boolean): Promise<string> {
  const path = await hookPath(dir);
  const existing = await readFile(path, "utf8").catch(() => null);
  const ours = existing?.includes(MARK) ?? false;
  if (remove) {
    if (!ours) return "commit trailer: no Waymark prepare-commit-msg hook to remove\n";
    await rm(path);
    return `commit trailer: removed ${path}\n`;
  }
  if (existing !== null && !ours) {
    return `commit trailer: ${path} already exists and is not Waymark's; left as it is. Add this line to it to get the trailer:\n  node ${launcherShellPath(version)} commit-trailer "$1" "$2"\n`;
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, hookScript(version));
  await chmod(path, 0o755);
  return `commit trailer: ${ours ? "updated" : "installed"} ${path}\n`;
}

const TRAILER_LINE = /^[A-Za-z0-9-]+: /;

/**
 * The message with a `Waymark-Task: <id>` trailer, or null when nothing should change
 * (a trailer is already there, or the message is empty: adding one would make git commit it).
 */
export function withTaskTrailer(message: string, taskId: string): string | null {
  if (new RegExp(`^${TRAILER}:`, "im").test(message)) return null;
  const lines = message.split("\n");
  let end = lines.length;
  // git's comment lines (and the verbose diff below the scissors) stay at the end.
  while (end > 0 && ((lines[end - 1] as string).startsWith("#") || (lines[end - 1] as string).trim() === "")) end--;
  const scissors = lines.findIndex((line) => line.startsWith("# ------------------------ >8"));
  if (scissors >= 0 && scissors < end) end = scissors;
  const body = lines.slice(0, end);
  if (body.every((line) => line.trim() === "" || line.startsWith("#"))) return null;
  const lastParagraph = body.slice(body.map((line) => line.trim() === "").lastIndexOf(true) + 1);
  const trailerBlock = body.length > 1 && lastParagraph.length < body.length && lastParagraph.every((line) => TRAILER_LINE.test(line));
  const added = [...body, ...(trailerBlock ? [] : [""]), `${TRAILER}: ${taskId}`];
  return [...added, ...lines.slice(end)].join("\n");
}

/** What the hook runs: names the most recently started open task of the repository, if any. */
export async function addTaskTrailer(messageFile: string, dir: string, source: string | undefined): Promise<void> {
  if (source === "merge" || source === "squash") return;
  const open = await (await Journal.forDirectory(dir)).openTasks();
  const task = open.at(-1);
  if (!task) return;
  const message = await readFile(messageFile, "utf8");
  const updated = withTaskTrailer(message, task.task_id);
  if (updated !== null) await writeFile(messageFile, updated);
}
