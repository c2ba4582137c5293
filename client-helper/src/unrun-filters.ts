/**
 * @module unrun-filters
 * Files behind a clean filter that the repository's own config defines (an LFS-like driver in
 * .git/config): the agent's git runs the filter when it commits, and records the filter's output;
 * the helper never runs it (it executes nothing a repository defines), so its ids of such files on
 * disk are of their bytes. The two kinds of id cannot be compared, and a file dirty or untracked
 * at the start, then committed as it was, would otherwise read as modified.
 *
 * So before concluding anything about such a file, the helper compares like with like:
 * - dirty or untracked at the start: its bytes then (hashed as they were, the filter not run) and
 *   its bytes now. The same bytes: the task left it as it found it, committed or not;
 * - clean at the start, different on disk at the end, and not in any commit of the task: no
 *   comparison is possible (the start bytes were never read, and HEAD holds the filter's output),
 *   so it stays listed as git sees it and a warning says its change was not observed.
 */
import { createHash } from "node:crypto";
import { createReadStream, type Stats } from "node:fs";
import { lstat } from "node:fs/promises";
import { decodeWirePath } from "@waymark/protocol/paths";
import type { DirtyEntry, FileState, GitChanges } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { GitContext } from "./git/process.js";
import { gitFilterDrivers } from "./git/queries.js";
import { fsPath, gitMode, isMissing } from "./hash.js";
import type { LocalGitSnapshot } from "./local.js";

const REGULAR = new Set(["100644", "100755"]);
/** Larger files are not read again at the end (LFS files can be huge): their change is then not observed. */
export const COMPARED_MAX_BYTES = 256 * 1024 * 1024;
/** Paths a warning names; the count is exact beyond them. */
const NAMED_PATHS = 10;

const isRegular = (state: FileState | null): state is FileState => state !== null && REGULAR.has(state.mode);

/** git's blob id of a file's bytes, read as a stream; null when it is gone. */
async function streamedBlobId(path: Buffer, stats: Stats): Promise<string | null> {
  const hash = createHash("sha1").update(`blob ${stats.size}\0`);
  try {
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  return hash.digest("hex");
}

/** The file's state now, hashed as its bytes, when it is a regular file within the bound; null otherwise. */
async function bytesState(context: GitContext, root: string, path: string, like: FileState): Promise<FileState | null | "too large"> {
  const abs = fsPath(root, path);
  let stats: Stats;
  try {
    stats = await lstat(abs);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  if (!stats.isFile()) return null;
  if (stats.size > COMPARED_MAX_BYTES) return "too large";
  const blob = await streamedBlobId(abs, stats);
  if (blob === null) return null;
  // Without core.fileMode git keeps the recorded mode whatever the disk says.
  return { mode: context.fileMode ? (gitMode(stats) ?? like.mode) : like.mode, blob };
}

/**
 * Adjusts `changes` (computed with the filters not run) for the files behind a filter the
 * repository defines, as the module comment says: an end entry stating the start bytes for each
 * such file the task left as it was, and a warning naming those whose change is not observed.
 */
export async function compareUnrunFilters(context: GitContext, root: string, since: LocalGitSnapshot, changes: GitChanges): Promise<void> {
  if (!context.unrunFilters || context.unrunFilters.size === 0) return;
  const startDirty = new Map(since.dirty.filter((entry) => isRegular(entry.worktree)).map((entry) => [entry.path, entry]));
  const committed = new Map(changes.committed.map((transition) => [transition.path, transition]));
  const endDirty = new Set(changes.dirty.map((entry) => entry.path));
  // Clean at the start, not committed, different on disk now: the candidates for "not observed".
  const cleanAtStart = changes.dirty.filter(
    (entry) => !startDirty.has(entry.path) && !committed.has(entry.path) && isRegular(entry.head) && isRegular(entry.worktree),
  );
  const leftAtStart = [...startDirty.values()].filter((entry) => !endDirty.has(entry.path));
  const candidates = [...leftAtStart.map((entry) => entry.path), ...cleanAtStart.map((entry) => entry.path)];
  if (candidates.length === 0) return;
  const drivers = await gitFilterDrivers(
    context,
    candidates.map((path) => decodeWirePath(path) ?? new Uint8Array()),
  );
  const unrun = (path: string) => {
    const driver = drivers.get(path);
    return driver !== undefined && context.unrunFilters?.has(driver) === true;
  };
  const notObserved = cleanAtStart.filter((entry) => unrun(entry.path)).map((entry) => entry.path);
  const added: DirtyEntry[] = [];
  for (const entry of leftAtStart) {
    if (!unrun(entry.path)) continue;
    const start = entry.worktree as FileState;
    const now = await bytesState(context, root, entry.path, start);
    if (now === "too large") notObserved.push(entry.path);
    else if (now !== null && now.blob === start.blob && now.mode === start.mode) {
      // The same bytes as at the start: its state at the end is its state at the start, whatever HEAD holds now.
      added.push({ path: entry.path, head: committed.get(entry.path)?.after ?? entry.head, worktree: start });
    }
  }
  if (added.length > 0) changes.dirty = [...changes.dirty, ...added].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  if (notObserved.length > 0) changes.warnings = [...(changes.warnings ?? []), notObservedWarning(notObserved, drivers)];
}

function notObservedWarning(paths: readonly string[], drivers: ReadonlyMap<string, string>): string {
  const names = [...new Set(paths.map((path) => drivers.get(path)))].join(", ");
  const named = paths.slice(0, NAMED_PATHS).join(", ");
  const more = paths.length > NAMED_PATHS ? ` and ${paths.length - NAMED_PATHS} more` : "";
  const text = `${paths.length} file(s) go through a clean filter the repository's own config defines (filter=${names}), which the helper never runs: whether their content changed is not observed (listed as git sees them without the filter): ${named}${more}`;
  return text.length <= WIRE_LIMITS.WARNING_CHARS ? text : `${text.slice(0, WIRE_LIMITS.WARNING_CHARS - 1)}…`;
}
