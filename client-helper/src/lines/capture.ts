/**
 * @module lines/capture
 * What one edit-tool call of the agent did to the lines of each file, read from the hook payload
 * alone (never from the disk, which may have changed since: a payload is read when the hook runs or,
 * spooled, later), as every agent's module reports it (../agents/<agent>.ts, `capturedEdits`): the
 * content before and/or after, or the edit to replay on the content the file had then (strings
 * replaced, Codex's patch chunks), or why it cannot be followed. The rules every agent's capture
 * shares are here: the bounds, and replacements replayed as the agents apply them.
 * Contents above CAPTURE_LIMITS.FILE_BYTES are not kept: that file's lines are "not observed".
 */
import type { PatchChunk } from "../agents/codex-patch.js";

export const CAPTURE_LIMITS = {
  /** A content larger than this at an edit is not kept: the file's lines are not observed. */
  FILE_BYTES: 1024 * 1024,
  /** Replacements one edit may carry (a MultiEdit's list). */
  REPLACEMENTS: 1000,
} as const;

export type Replacement = { old: string; new: string; all?: boolean };

/**
 * One file's edit. Either the content before and/or after is known (`before` null: the file did
 * not exist; `after` null: deleted), or the edit is to be replayed on the content the file had
 * then (`replacements`, `chunks`), or it cannot be followed line by line (`skipped`: why).
 */
export type CapturedEdit = {
  /** As the agent reported it: absolute, or relative to its working directory. */
  path: string;
  before?: string | null;
  after?: string | null;
  replacements?: Replacement[];
  chunks?: PatchChunk[];
  /** A Codex move: the file's content came from this path (as reported). */
  movedFrom?: string;
  skipped?: string;
};

/** Whether a content is too large to keep: its file's lines are not observed. */
export const tooLarge = (content: string | null | undefined) => typeof content === "string" && content.length > CAPTURE_LIMITS.FILE_BYTES;

/** Why an edit is not followed, in one wording for every agent. */
export const NOT_FOLLOWED = {
  TOO_LARGE: `larger than ${CAPTURE_LIMITS.FILE_BYTES / 1024 / 1024} MiB when the agent edited it`,
  NOT_REPLAYED: "the agent's edit could not be replayed on the content its tool reported",
  TOO_MANY: "more replacements in one edit than are followed",
} as const;

/** Replays replacements the way the agents apply them (first occurrence, or every one); null when one is not found. */
export function applyReplacements(content: string, replacements: readonly Replacement[]): string | null {
  let current = content;
  for (const replacement of replacements) {
    // An empty old string writes a new file (Claude Code's Edit, Cursor's creation).
    if (replacement.old === "") {
      if (current !== "") return null;
      current = replacement.new;
      continue;
    }
    const at = current.indexOf(replacement.old);
    if (at < 0) return null;
    current = replacement.all
      ? current.split(replacement.old).join(replacement.new)
      : current.slice(0, at) + replacement.new + current.slice(at + replacement.old.length);
  }
  return current;
}
