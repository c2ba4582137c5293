/**
 * @module lines/replay
 * The versions each edited file went through during a task, rebuilt from its start content and
 * the hooks' record of the agent's edits (./edit-log.ts), in the order they were made:
 * - an edit that reports the content before it (Claude Code's) shows what changed since the last
 *   known version without the agent's tools: a version written by "others";
 * - the content after it (reported, or the edit replayed on the last version: Codex's chunks,
 *   replaced strings) is a version written by the agent;
 * - the end content, if it differs from the last version, was written by others.
 * A file whose edits cannot be followed (an edit not replayable on the content it had, a content
 * too large, a notebook) gets a `problem` instead: its lines are "not observed".
 */

import { applyChunks } from "../agents/codex-patch.js";
import { applyReplacements } from "./capture.js";
import type { LoggedEdit } from "./edit-log.js";

export type Writer = "agent" | "others";
/** A version of a file (null: absent), and who made the change from the version before it. */
export type Version = { content: Buffer | null; by: Writer };
export type FileHistory = { versions: Version[]; problem?: string };

const UNPLACED = "an edit of the agent could not be placed in the content the file had then";
const UNKNOWN_BEFORE = "the file's content before the agent's first edit is not known";

type State = { current: Buffer | null | undefined; versions: Version[]; problem?: string };

const same = (a: Buffer | null | undefined, b: Buffer | null) => a !== undefined && (a === null || b === null ? a === b : a.equals(b));
const text = (content: Buffer | null) => (content === null ? "" : content.toString("utf8"));

/**
 * Each file's versions from `start` to `end` through the task's edits. `start` and `end` give the
 * contents of the files to attribute (undefined: a path not attributed, whose content is followed
 * only as the source of a move).
 */
export function replayEdits(
  edits: readonly LoggedEdit[],
  start: (path: string) => Buffer | null | undefined,
  end: ReadonlyMap<string, Buffer | null>,
): Map<string, FileHistory> {
  const states = new Map<string, State>();
  const stateOf = (path: string): State => {
    let state = states.get(path);
    if (!state) {
      state = { current: start(path), versions: [] };
      states.set(path, state);
    }
    return state;
  };
  const push = (state: State, content: Buffer | null, by: Writer) => {
    if (same(state.current, content)) return;
    state.versions.push({ content, by });
    state.current = content;
  };
  for (const edit of edits) {
    const state = stateOf(edit.path);
    if (state.problem !== undefined) continue;
    if (edit.skipped !== undefined) {
      state.problem = edit.skipped;
      continue;
    }
    if (edit.movedFrom !== undefined) {
      // The agent's move wrote the old file's content here.
      const source = stateOf(edit.movedFrom);
      if (source.current === undefined || source.problem !== undefined) {
        state.problem = source.problem ?? UNKNOWN_BEFORE;
        continue;
      }
      push(state, source.current, "agent");
    }
    if (edit.before !== undefined) push(state, edit.before === null ? null : Buffer.from(edit.before, "utf8"), "others");
    if (edit.after !== undefined) {
      push(state, edit.after === null ? null : Buffer.from(edit.after, "utf8"), "agent");
      continue;
    }
    if (!edit.replacements && !edit.chunks) continue;
    if (state.current === undefined) {
      state.problem = UNKNOWN_BEFORE;
      continue;
    }
    const replayed = edit.replacements
      ? applyReplacements(text(state.current), edit.replacements)
      : applyChunks(text(state.current), edit.chunks ?? []);
    if (replayed === null) state.problem = UNPLACED;
    else push(state, Buffer.from(replayed, "utf8"), "agent");
  }
  const histories = new Map<string, FileHistory>();
  for (const [path, content] of end) {
    const state = states.get(path);
    if (!state) continue;
    if (state.problem !== undefined) {
      histories.set(path, { versions: [], problem: state.problem });
      continue;
    }
    push(state, content, "others");
    histories.set(path, { versions: state.versions });
  }
  return histories;
}
