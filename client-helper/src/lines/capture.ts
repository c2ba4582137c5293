/**
 * @module lines/capture
 * What one edit-tool call of the agent did to the lines of each file, read from the hook payload
 * alone (never from the disk, which may have changed since: a payload is read when the hook runs or,
 * spooled, later). Each agent reports it its own way:
 * - Claude Code (PostToolUse): Write gives the new content, Edit and MultiEdit the strings replaced;
 *   its `tool_response` adds the whole content before the edit (`originalFile`), so the content
 *   after is exact even when someone else changed the file between two edits. NotebookEdit edits
 *   cells, not lines: not followed.
 * - Codex (PostToolUse `apply_patch`, or a shell command running apply_patch): the patch
 *   (./codex-patch.ts): files added with their content, deleted, or updated by chunks.
 * - Cursor (afterFileEdit): the strings replaced.
 * Contents above CAPTURE_LIMITS.FILE_BYTES are not kept: that file's lines are "not observed".
 */
import { type PatchChunk, parsePatch, patchText } from "./codex-patch.js";

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

type Payload = Record<string, unknown>;
/** The agents whose hooks report edits (../hooks/hook-runner.ts's HOOK_AGENTS). */
type EditAgent = "claude" | "cursor" | "codex";

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);
const record = (value: unknown): Payload => (value && typeof value === "object" && !Array.isArray(value) ? (value as Payload) : {});
const tooLarge = (content: string | null | undefined) => typeof content === "string" && content.length > CAPTURE_LIMITS.FILE_BYTES;
const TOO_LARGE = `larger than ${CAPTURE_LIMITS.FILE_BYTES / 1024 / 1024} MiB when the agent edited it`;
const NOT_REPLAYED = "the agent's edit could not be replayed on the content its tool reported";

/** The edits one tool call made, per file; empty when it edited no file (or not with an edit tool). */
export function capturedEdits(payload: Payload, agent: EditAgent): CapturedEdit[] {
  if (agent === "cursor") return cursorEdits(payload);
  const tool = text(payload.tool_name);
  const input = record(payload.tool_input);
  if (agent === "codex") {
    if (tool !== "apply_patch" && tool !== "Bash") return [];
    const patch = patchText(text(input.command) ?? text(input.input) ?? "");
    return patch === null ? [] : codexEdits(patch);
  }
  return claudeEdits(tool, input, record(payload.tool_response));
}

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

function claudeEdits(tool: string | null, input: Payload, response: Payload): CapturedEdit[] {
  const path = text(input.file_path) ?? text(input.notebook_path);
  if (!path) return [];
  if (tool === "NotebookEdit") return [{ path, skipped: "a notebook's cells were edited, not its lines" }];
  // The content before the edit, as the tool read it (null: Write created the file).
  const original = text(response.originalFile) ?? text(response.originalFileContents);
  const created = response.type === "create" || (tool === "Write" && "originalFile" in response && response.originalFile === null);
  const before = original ?? (created ? null : undefined);
  if (tooLarge(before)) return [{ path, skipped: TOO_LARGE }];
  if (tool === "Write") {
    const content = text(input.content);
    if (content === null) return [];
    if (tooLarge(content)) return [{ path, skipped: TOO_LARGE }];
    return [before === undefined ? { path, after: content } : { path, before, after: content }];
  }
  const replacements = claudeReplacements(tool, input, response);
  if (replacements === null) return [];
  if (replacements.length > CAPTURE_LIMITS.REPLACEMENTS) return [{ path, skipped: "more replacements in one edit than are followed" }];
  if (before === undefined) return [{ path, replacements }];
  const after = applyReplacements(before ?? "", replacements);
  if (after === null) return [{ path, before, skipped: NOT_REPLAYED }];
  if (tooLarge(after)) return [{ path, skipped: TOO_LARGE }];
  return [{ path, before, after }];
}

/** Edit's one replacement (as the tool response says it applied it, when it says), MultiEdit's list. */
function claudeReplacements(tool: string | null, input: Payload, response: Payload): Replacement[] | null {
  if (tool === "Edit") {
    const old = text(response.oldString) ?? text(input.old_string);
    const replaced = text(response.newString) ?? text(input.new_string);
    if (old === null || replaced === null) return null;
    const all = response.replaceAll === true || input.replace_all === true;
    return [all ? { old, new: replaced, all } : { old, new: replaced }];
  }
  if (tool === "MultiEdit") {
    const edits = Array.isArray(input.edits) ? input.edits : [];
    const replacements: Replacement[] = [];
    for (const edit of edits) {
      const e = record(edit);
      const old = text(e.old_string);
      const replaced = text(e.new_string);
      if (old === null || replaced === null) return null;
      replacements.push(e.replace_all === true ? { old, new: replaced, all: true } : { old, new: replaced });
    }
    return replacements;
  }
  return null;
}

function cursorEdits(payload: Payload): CapturedEdit[] {
  const event = text(payload.hook_event_name) ?? "afterFileEdit";
  const path = text(payload.file_path);
  if (event !== "afterFileEdit" || !path || !Array.isArray(payload.edits)) return [];
  const replacements: Replacement[] = [];
  for (const edit of payload.edits) {
    const e = record(edit);
    const old = text(e.old_string);
    const replaced = text(e.new_string);
    if (old === null || replaced === null) return [{ path, skipped: NOT_REPLAYED }];
    replacements.push({ old, new: replaced });
  }
  if (replacements.length > CAPTURE_LIMITS.REPLACEMENTS) return [{ path, skipped: "more replacements in one edit than are followed" }];
  return replacements.length === 0 ? [] : [{ path, replacements }];
}

function codexEdits(patch: string): CapturedEdit[] {
  const edits: CapturedEdit[] = [];
  for (const file of parsePatch(patch)) {
    if (file.kind === "add")
      edits.push(tooLarge(file.content) ? { path: file.path, skipped: TOO_LARGE } : { path: file.path, after: file.content });
    else if (file.kind === "delete") edits.push({ path: file.path, after: null });
    else if (file.moveTo === null) edits.push({ path: file.path, chunks: file.chunks });
    else {
      // The old path is gone; the new one holds the old content with the chunks applied.
      edits.push({ path: file.path, after: null });
      edits.push({ path: file.moveTo, movedFrom: file.path, chunks: file.chunks });
    }
  }
  return edits;
}
