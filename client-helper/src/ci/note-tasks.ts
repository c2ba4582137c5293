/**
 * @module ci/note-tasks
 * The tasks the repository's own notes name for a range's commits (git notes under Waymark's ref,
 * written when a task completes and carried through merges): what `waymark ci` works from when the
 * endpoint is unreachable, and what it adds to the endpoint's answer.
 */
import type { GitContext } from "../git/process.js";

/** One task a note names for one commit of the range. */
export interface NoteTask {
  commit: string;
  workflow_id: string;
  task_id: string;
  /** The deployment that recorded it, as the note says. */
  origin: string | null;
}

/** The tasks the notes name for `commits` (none yet: the notes reader is not part of this helper yet). */
export async function noteTasks(_context: GitContext, _commits: readonly string[]): Promise<NoteTask[]> {
  return [];
}
