/**
 * @module notes/record
 * When a task that committed work completes, its record is attached to its commits as git notes
 * (@waymark/protocol/git-note, written by ./store.ts): the entry on the task's end commit holds the
 * task's Agent Trace record as the endpoint's export has it, with the lines no hook observed named
 * and each file's line hashes; the entry on each earlier commit of the task holds the same record
 * projected onto that commit (the lines that commit introduced, found at the end commit through
 * git's diff between the two), so that `git blame` naming any commit of the task finds its lines,
 * and a rewrite that copies one commit's note (amend, rebase) still has what places them.
 *
 * Everything comes from what the helper sent (its changes: the line ranges and hashes, the
 * commits) and what the endpoint answered (the checkpoint: workflow, task name, completion time,
 * chain head): no file content goes into a note, only paths, line numbers and hashes.
 */
import { type TraceFile, type TraceRange, type TraceTask, traceRecord } from "@waymark/protocol/agent-trace";
import {
  type CompletionCheckpoint,
  LINE_HASHES_MAX_LINES,
  lineHashes,
  lineRuns,
  NOTE_TYPE,
  NOTE_VERSION,
  type NoteCheckpoint,
  type PathRanges,
  type TaskNote,
} from "@waymark/protocol/git-note";
import { carryLine, type Hunk } from "@waymark/protocol/trace-blame";
import type { GitChanges, LineAuthor } from "@waymark/protocol/wire";
import { REVIEW_LIMITS } from "@waymark/protocol/wire-constants";
import { pairHunks, readObjects } from "../git/blobs.js";
import { type GitContext, runGit } from "../git/process.js";
import { lineCount } from "../lines/line-diff.js";

export interface CompletedTask {
  taskId: string;
  checkpoint: CompletionCheckpoint;
  /** The changes the helper sent for the task. */
  changes: GitChanges;
  /** The model the task's usage names (the record's contributor). */
  model: string | null;
  /** The endpoint's origin as the helper knows it, when the answer did not name one. */
  origin: string;
}

const ORIGIN = /^https?:\/\/[^/@\s]+$/;

/** The task's commits, newest first, as full ids (the review lists them abbreviated). */
async function taskCommits(context: GitContext, start: string | null, end: string): Promise<string[]> {
  const range = start === null ? [end] : [end, `^${start}`];
  const out = await runGit(context, ["rev-list", `--max-count=${REVIEW_LIMITS.COMMITS}`, ...range, "--"]);
  return out.toString("utf8").split("\n").filter(Boolean);
}

/** Each line's writer at the end commit (index = line − 1), from the ranges the helper sent. */
function writersAt(file: TraceFile, lines: number): (LineAuthor | null)[] {
  const writers: (LineAuthor | null)[] = new Array(lines).fill(null);
  for (const range of file.ranges) for (let n = range.start_line; n <= Math.min(range.end_line, lines); n++) writers[n - 1] = range.author;
  return writers;
}

function asTraceRanges(runs: ReturnType<typeof lineRuns<LineAuthor>>): TraceRange[] {
  return runs.map((run) => ({ start_line: run.start, end_line: run.end, author: run.who, content_hash: run.hash }));
}

function unobservedOf(files: readonly TraceFile[]): PathRanges[] {
  return files
    .map((file) => ({
      path: file.path,
      ranges: file.ranges
        .filter((r) => r.author === "not_observed")
        .map((r) => ({ start_line: r.start_line, end_line: r.end_line, content_hash: `sha256:${r.content_hash}` })),
    }))
    .filter((file) => file.ranges.length > 0);
}

function hashesOf(files: ReadonlyMap<string, Buffer | null>): { path: string; hashes: string }[] {
  const out: { path: string; hashes: string }[] = [];
  for (const [path, content] of files)
    if (content && lineCount(content) <= LINE_HASHES_MAX_LINES) out.push({ path, hashes: lineHashes(content) });
  return out;
}

/**
 * Per path, for an earlier commit of the task: the hunks of what it introduced against its first
 * parent (null when the file is new there: every line) and those from it to the task's end commit
 * (undefined when the file is not at both). One `git diff-tree --stdin` per path for both pairs.
 */
async function commitHunks(
  context: GitContext,
  commit: string,
  end: string,
  paths: readonly string[],
): Promise<Map<string, { own: Hunk[] | null; toEnd: Hunk[] | undefined }>> {
  const parent = `${commit}^`;
  const answers = await Promise.all(
    paths.map((path) =>
      pairHunks(context, path, [
        [parent, commit],
        [commit, end],
      ]),
    ),
  );
  return new Map(
    paths.map((path, i) => [path, { own: answers[i]?.get(`${parent}\0${commit}`) ?? null, toEnd: answers[i]?.get(`${commit}\0${end}`) }]),
  );
}

/** Whether line `line` (1-based) of the new side is one the hunks add. */
function isAdded(hunks: readonly Hunk[], line: number): boolean {
  return hunks.some(([, , newStart, newCount]) => line >= newStart && line < newStart + newCount);
}

/** The entries to attach for a completed task: none when it committed no work. */
export async function taskNoteEntries(context: GitContext, task: CompletedTask): Promise<TaskNote[]> {
  const { changes, checkpoint } = task;
  const review = changes.review;
  const end = changes.head;
  if (!end || !review || review.commits.length === 0) return [];
  const origin = checkpoint.origin && ORIGIN.test(checkpoint.origin) ? checkpoint.origin : task.origin;
  const commits = await taskCommits(context, changes.start_head, end);
  const attribution = review.line_attribution;
  // The files whose lines the endpoint records (its rule: those the helper attributed).
  const attributed = new Set(review.lines.flatMap((line) => ("binary" in line || line.agent === undefined ? [] : [line.path])));
  const files: TraceFile[] = (attribution?.files ?? [])
    .filter((file) => attributed.has(file.path))
    .map((file) => ({
      path: file.path,
      ranges: file.ranges.map(([start_line, end_line, author, content_hash]) => ({ start_line, end_line, author, content_hash })),
      ...(file.omitted ? { omitted: true as const } : {}),
      ...(file.reason ? { reason: file.reason } : {}),
    }));
  const uncommitted = new Set(changes.dirty.map((entry) => entry.path));
  const traced: TraceTask = {
    workflow_id: checkpoint.workflow_id,
    task_id: task.taskId,
    name: checkpoint.task_name,
    completed_at: checkpoint.completed_at,
    start_revision: changes.start_head,
    revision: end,
    // As the export's record has them (the review's ids); the entry's `task.commits` has them in full.
    commits: review.commits.map((commit) => commit.sha),
    model: task.model,
    url: `${origin}/w/${checkpoint.workflow_id}#${encodeURIComponent(task.taskId)}`,
  };
  if (attribution?.tool) traced.tool = attribution.tool;
  if (attribution?.not_observed) traced.not_observed_reason = attribution.not_observed;
  const committed = files.filter((file) => !uncommitted.has(file.path) && file.ranges.length > 0);
  const paths = committed.map((file) => file.path);
  const [atEnd] = await Promise.all([
    readObjects(
      context,
      paths.map((path) => `${end}:${path}`),
    ),
  ]);
  const endContents = new Map(paths.map((path, i) => [path, atEnd[i] ?? null]));
  const common = {
    type: NOTE_TYPE,
    version: NOTE_VERSION,
    workflow_id: checkpoint.workflow_id,
    task_id: task.taskId,
    origin,
    task: { start_commit: changes.start_head, end_commit: end, commits },
    checkpoint: { events: checkpoint.events, head: checkpoint.head, completed_at: checkpoint.completed_at } satisfies NoteCheckpoint,
    statement: { export: `${origin}/api/workflows/${checkpoint.workflow_id}/export.json` },
  } as const;
  const entries: TaskNote[] = [];
  const endRecord = traceRecord(traced, files, uncommitted);
  entries.push({
    ...common,
    commit: end,
    record: endRecord as unknown as TaskNote["record"],
    not_observed: unobservedOf(committed),
    line_hashes: hashesOf(endContents),
  });
  // Each earlier commit: the lines it introduced that are the task's at the end, placed there by git's diff.
  for (const commit of commits) {
    if (commit === end || paths.length === 0) continue;
    const [contents, hunksOf] = await Promise.all([
      readObjects(
        context,
        paths.map((path) => `${commit}:${path}`),
      ),
      commitHunks(context, commit, end, paths),
    ]);
    const projected: TraceFile[] = [];
    const held = new Map<string, Buffer | null>();
    paths.forEach((path, i) => {
      const content = contents[i] ?? null;
      const hunks = hunksOf.get(path)?.toEnd;
      const added = hunksOf.get(path)?.own;
      const endFile = committed[i] as TraceFile;
      const endContent = endContents.get(path) ?? null;
      if (!content || !hunks || !endContent || (added !== null && added !== undefined && added.length === 0)) return;
      const atEndWriters = writersAt(endFile, lineCount(endContent));
      const writers: (LineAuthor | null)[] = [];
      for (let line = 1; line <= lineCount(content); line++) {
        const mine = added === null || added === undefined || isAdded(added, line);
        const there = mine ? carryLine(hunks, line) : null;
        writers.push(there === null ? null : (atEndWriters[there - 1] ?? null));
      }
      const ranges = asTraceRanges(lineRuns(writers, content));
      if (ranges.length === 0) return;
      projected.push({ path, ranges });
      held.set(path, content);
    });
    if (projected.length === 0) continue;
    const record = traceRecord({ ...traced, revision: commit }, projected, new Set());
    entries.push({
      ...common,
      commit,
      record: record as unknown as TaskNote["record"],
      not_observed: unobservedOf(projected),
      line_hashes: hashesOf(held),
    });
  }
  return entries;
}
