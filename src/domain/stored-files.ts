/**
 * @module domain/stored-files
 * How a completed task's files are kept so that no stored value grows with the task: one row
 * per changed file carrying its mark in every list (status, rename partner, lines, committed,
 * in scope, touched by the agent's tools), the small rest of files_changed and verification as
 * JSON, and how many of the first files (path order) a single value such as an event, a tool
 * result or a page entry lists (LIMITS.VIEW_FILE_BYTES). Pure: the workflow object stores what
 * this returns and rebuilds views from the rows (workflow/task-files).
 */
import type { FileLineRanges, LineCount, Truncation } from "@waymark/protocol/wire";
import { LIMITS } from "../limits";
import type { FilesChanged, PathChange } from "./changes";
import type { Overlap } from "./overlap";
import type { Verification } from "./view";

/** One changed file as stored: its place in path order and its mark in each list. */
export interface FileRow {
  ord: number;
  change: PathChange;
  /** On a deleted path paired as a rename: the added path it became. */
  renamedTo: string | null;
  lines: LineCount | null;
  inScope: boolean;
  /** Touched by the agent's edit tools; null when no hook recorded them. */
  byAgent: boolean | null;
  /** Its added lines as ranges of its end content, who wrote each (the Agent Trace export reads them); null: not attributed. */
  ranges: StoredRanges | null;
  /** What this file adds to a view's lists, in bytes of JSON. */
  viewBytes: number;
}

/** A file's line ranges as stored: the helper's, without the path (the row has it). */
export type StoredRanges = Omit<FileLineRanges, "path">;

/** A task's files split for storage. */
export interface StoredFiles {
  rows: FileRow[];
  overlaps: Overlap[];
  /** files_changed without its lists (each list present and empty when the full one is present). */
  filesJson: FilesChanged;
  /** verification without its lists (unexpected_files empty, overlapping absent: both are rows). */
  verificationJson: Verification;
  /** How many of the first rows a view lists. */
  listed: number;
}

const encoder = new TextEncoder();

/** Bytes of `text` in UTF-8: what SQLite counts. ASCII, the usual case, is measured without encoding. */
export function utf8Length(text: string): number {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0x7f) return encoder.encode(text).length;
  return text.length;
}

/** Bytes of a value's JSON: what storing or sending it costs. */
export const jsonBytes = (value: unknown) => utf8Length(JSON.stringify(value) ?? "null");

/**
 * The helper's per-directory summary of what it could not list, kept within
 * LIMITS.TRUNCATION_BYTES: directories past the bound are added into `other`, so the counts
 * still sum to `omitted`.
 */
function boundTruncation(truncated: Truncation | undefined): Truncation | undefined {
  if (!truncated) return undefined;
  let bytes = jsonBytes({ ...truncated, directories: [] });
  const directories: Truncation["directories"] = [];
  let other = truncated.other;
  for (const directory of truncated.directories) {
    const size = jsonBytes(directory) + 1;
    if (bytes + size > LIMITS.TRUNCATION_BYTES) other += directory.added + directory.modified + directory.deleted;
    else {
      directories.push(directory);
      bytes += size;
    }
  }
  return directories.length === truncated.directories.length ? truncated : { ...truncated, directories, other };
}

/** A warning as kept: at most LIMITS.WARNING_CHARS characters. */
const clipWarning = (warning: string) =>
  warning.length > LIMITS.WARNING_CHARS ? `${warning.slice(0, LIMITS.WARNING_CHARS - 1)}…` : warning;

const MORE_WARNINGS = (n: number) => `… and ${n} more warning(s) not kept.`;
const LATER_OVERLAPS = "More later tasks also changed files of this one: see verification.overlapping.";

/** A task's warnings as kept: each clipped, at most LIMITS.TASK_WARNINGS, the last saying how many were left out. */
export function boundWarnings(warnings: readonly string[]): string[] {
  if (warnings.length <= LIMITS.TASK_WARNINGS) return warnings.map(clipWarning);
  const kept = warnings.slice(0, LIMITS.TASK_WARNINGS - 1).map(clipWarning);
  return [...kept, MORE_WARNINGS(warnings.length - kept.length)];
}

/** One more warning on a completed task (a later task's overlap): past the bound, one standing note says more exist. */
export function withWarning(warnings: readonly string[], warning: string): string[] {
  if (warnings.length < LIMITS.TASK_WARNINGS) return [...warnings, clipWarning(warning)];
  if (warnings.at(-1) === LATER_OVERLAPS) return [...warnings];
  return [...warnings.slice(0, LIMITS.TASK_WARNINGS - 1), LATER_OVERLAPS];
}

/**
 * Splits an attributed task's files for storage. `changes` are the net changes credited to the
 * task, `filesChanged` and `verification` the summary attributeTask made of them.
 */
export function storedFiles(
  changes: readonly PathChange[],
  filesChanged: FilesChanged,
  verification: Verification,
  lineRanges: ReadonlyMap<string, FileLineRanges> = new Map(),
): StoredFiles {
  const ordered = [...changes].sort((left, right) => (left.path < right.path ? -1 : left.path > right.path ? 1 : 0));
  const renamedTo = new Map(filesChanged.renamed.map((pair) => [pair.from, pair.to]));
  const lines = new Map((filesChanged.lines ?? []).map((line) => [line.path, line]));
  const uncommitted = new Set(filesChanged.uncommitted);
  const unexpected = new Set(verification.unexpected_files);
  const notByAgent = filesChanged.not_by_agent_tools === undefined ? null : new Set(filesChanged.not_by_agent_tools);
  let listed = 0;
  let bytes = 0;
  const rows = ordered.map((change, ord): FileRow => {
    const path = jsonBytes(change.path) + 1;
    const to = renamedTo.get(change.path) ?? null;
    const count = lines.get(change.path) ?? null;
    const inScope = !unexpected.has(change.path);
    const byAgent = notByAgent === null ? null : !notByAgent.has(change.path);
    let viewBytes = path;
    if (uncommitted.has(change.path)) viewBytes += path;
    if (to !== null) viewBytes += path + jsonBytes(to) + 16;
    if (count !== null) viewBytes += jsonBytes(count) + 1;
    if (!inScope) viewBytes += path;
    if (byAgent === false) viewBytes += path;
    // The first files in path order whose entries fit the bound; the first always does.
    if (listed === ord && (ord === 0 || bytes + viewBytes <= LIMITS.VIEW_FILE_BYTES)) {
      listed++;
      bytes += viewBytes;
    }
    const attributed = lineRanges.get(change.path);
    const ranges = attributed ? storedRanges(attributed) : null;
    return { ord, change, renamedTo: to, lines: count, inScope, byAgent, ranges, viewBytes };
  });
  const filesJson: FilesChanged = { ...filesChanged, added: [], modified: [], deleted: [], renamed: [], uncommitted: [] };
  if (filesChanged.lines !== undefined) filesJson.lines = [];
  if (filesChanged.not_by_agent_tools !== undefined) filesJson.not_by_agent_tools = [];
  const truncated = boundTruncation(filesChanged.truncated);
  if (truncated) filesJson.truncated = truncated;
  const { overlapping, ...rest } = verification;
  const verificationJson: Verification = { ...rest, unexpected_files: [], warnings: boundWarnings(verification.warnings) };
  return { rows, overlaps: overlapping ?? [], filesJson, verificationJson, listed };
}

function storedRanges({ path: _path, ...rest }: FileLineRanges): StoredRanges {
  return rest;
}

/** A stored file row as a view reads it back. */
export interface ListedFile {
  path: string;
  status: PathChange["status"];
  committed: boolean;
  renamedTo: string | null;
  lines: LineCount | null;
  inScope: boolean;
  byAgent: boolean | null;
}

/** How much of the record a view leaves out: files past the listed ones, overlaps past the bound. */
export interface Unlisted {
  files: number;
  unexpectedFiles: number;
  overlapping: number;
}

/**
 * A task's files_changed and verification as one value shows them: the stored JSON with its
 * lists filled from the listed rows (the first files in path order) and the overlaps that fit;
 * `more` says how many entries the record holds beyond them (absent when none).
 */
export function viewOfStoredFiles(
  filesJson: FilesChanged,
  verificationJson: Verification,
  files: readonly ListedFile[],
  overlaps: readonly Overlap[],
  unlisted: Unlisted,
): { files_changed: FilesChanged; verification: Verification } {
  const files_changed: FilesChanged = { ...filesJson, added: [], modified: [], deleted: [], renamed: [], uncommitted: [] };
  const lines: LineCount[] | undefined = filesJson.lines === undefined ? undefined : [];
  const notByAgent: string[] | undefined = filesJson.not_by_agent_tools === undefined ? undefined : [];
  const unexpected: string[] = [];
  for (const file of files) {
    if (file.status === "A") files_changed.added.push(file.path);
    else if (file.status === "M") files_changed.modified.push(file.path);
    else files_changed.deleted.push(file.path);
    if (file.renamedTo !== null) files_changed.renamed.push({ from: file.path, to: file.renamedTo });
    if (!file.committed) files_changed.uncommitted.push(file.path);
    if (file.lines !== null) lines?.push(file.lines);
    if (file.byAgent === false) notByAgent?.push(file.path);
    if (!file.inScope) unexpected.push(file.path);
  }
  if (lines) files_changed.lines = lines;
  if (notByAgent) files_changed.not_by_agent_tools = notByAgent;
  if (unlisted.files > 0) files_changed.more = unlisted.files;
  const verification: Verification = { ...verificationJson, unexpected_files: unexpected };
  if (overlaps.length > 0 || unlisted.overlapping > 0) verification.overlapping = [...overlaps];
  const more: NonNullable<Verification["more"]> = {};
  if (unlisted.unexpectedFiles > 0) more.unexpected_files = unlisted.unexpectedFiles;
  if (unlisted.overlapping > 0) more.overlapping = unlisted.overlapping;
  if (Object.keys(more).length > 0) verification.more = more;
  return { files_changed, verification };
}
