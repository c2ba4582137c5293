/**
 * @module lines/attribute
 * Line attribution of a task's changed text files: which lines of each file's end content the
 * agent's own edit tools last wrote, which something else did, and which no hook observed.
 *
 * The lines "added" are those git's diff of the file's start and end contents adds (the same
 * diff as the file's `added` count, so agent + others + not observed = added). Who wrote each is
 * found as `git blame` finds it, through the versions the file went through (./replay.ts): each
 * version is diffed against the one before it (./line-diff.ts), a line kept carries its writer
 * forward, a line added takes the writer of that change (the agent for its edits, "others" for
 * what changed between them or after the last). A task no hook observed has every added line
 * "not observed"; so has a file whose edits could not be followed, with the reason.
 *
 * Only ranges, counts and content hashes come out: a range's hash is the first 16 hex digits of
 * the SHA-256 of its lines' bytes.
 */
import { createHash } from "node:crypto";
import type { AgentTool, FileLineRanges, LineAttribution, LineAuthor, LineCount, LineRange } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { LoggedEdit } from "./edit-log.js";
import { diffPairs, type Hunk, lineCount } from "./line-diff.js";
import { replayEdits } from "./replay.js";

/** One changed text file: its contents at the task's start and end (null: absent) and its counts, which get the authors. */
export type AttributedFile = {
  path: string;
  before: Buffer | null;
  after: Buffer | null;
  count: Extract<LineCount, { added: number }>;
};

export type LineInputs = {
  /** The task's recorded edits; null when no hook observed the task. */
  edits: readonly LoggedEdit[] | null;
  tool?: AgentTool;
  /** Where the scratch repository is made (the helper's cache). */
  scratchRoot: string;
};

const NOT_OBSERVED_TASK = "no hook of the agent observed this task";

/** Writers of a version's lines: the codes of LINE_AUTHORS plus "there at the start". */
const START = 0;
const AGENT = 1;
const OTHERS = 2;
const NOT_OBSERVED = 3;
const AUTHOR: Record<number, LineAuthor> = { [AGENT]: "agent", [OTHERS]: "others", [NOT_OBSERVED]: "not_observed" };

/** The writers of a version's lines, from the version before and git's hunks between them. */
function carry(previous: Uint8Array, hunks: readonly Hunk[], length: number, writer: number): Uint8Array {
  const next = new Uint8Array(length);
  let from = 0;
  let to = 0;
  for (const hunk of hunks) {
    // With -U0 an empty side's start is the line before the change.
    const newAt = hunk.newCount === 0 ? hunk.newStart : hunk.newStart - 1;
    while (to < newAt && from < previous.length) next[to++] = previous[from++] as number;
    from += hunk.oldCount;
    for (let k = 0; k < hunk.newCount && to < length; k++) next[to++] = writer;
  }
  while (to < length && from < previous.length) next[to++] = previous[from++] as number;
  return next;
}

/** The lines of `content` that git's diff from the start adds. */
function addedLines(hunks: readonly Hunk[], length: number): Uint8Array {
  const added = new Uint8Array(length);
  for (const hunk of hunks) for (let k = 0; k < hunk.newCount; k++) added[hunk.newStart - 1 + k] = 1;
  return added;
}

/** Byte offsets of each line's start, and the content's end. */
function lineStarts(content: Buffer): number[] {
  const starts = [0];
  for (let at = content.indexOf(0x0a); at >= 0 && at + 1 < content.length; at = content.indexOf(0x0a, at + 1)) starts.push(at + 1);
  starts.push(content.length);
  return starts;
}

/** Runs of one writer as ranges of the end content, each with the hash of its lines. */
function rangesOf(writers: Uint8Array, content: Buffer): LineRange[] {
  const ranges: LineRange[] = [];
  const starts = lineStarts(content);
  let at = 0;
  while (at < writers.length) {
    const writer = writers[at] as number;
    let end = at;
    while (end + 1 < writers.length && writers[end + 1] === writer) end++;
    if (writer !== START) {
      const bytes = content.subarray(starts[at], starts[end + 1]);
      const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
      ranges.push([at + 1, end + 1, AUTHOR[writer] as LineAuthor, hash]);
    }
    at = end + 1;
  }
  return ranges;
}

/**
 * Attributes the added lines of `files` (their counts get `agent`, `others`, `not_observed`) and
 * returns their ranges for the wire, within WIRE_LIMITS.
 */
export async function attributeLines(files: readonly AttributedFile[], inputs: LineInputs): Promise<LineAttribution> {
  const observed = inputs.edits !== null;
  const starts = new Map(files.map((file) => [file.path, file.before]));
  const ends = new Map(files.map((file) => [file.path, file.after]));
  const histories = observed ? replayEdits(inputs.edits ?? [], (path) => starts.get(path), ends) : new Map();
  // Every pair of versions to diff: each file's start → end (what the task added), and its steps.
  const pairs: [Buffer | null, Buffer | null][] = [];
  const plans = files.map((file) => {
    const direct = pairs.push([file.before, file.after]) - 1;
    const history = histories.get(file.path);
    const steps: { pair: number; by: number; length: number }[] = [];
    if (history && history.problem === undefined) {
      let previous = file.before;
      for (const version of history.versions) {
        steps.push({
          pair: pairs.push([previous, version.content]) - 1,
          by: version.by === "agent" ? AGENT : OTHERS,
          length: lineCount(version.content),
        });
        previous = version.content;
      }
    }
    return { file, direct, steps, problem: observed ? history?.problem : NOT_OBSERVED_TASK, own: observed };
  });
  const hunks = await diffPairs(inputs.scratchRoot, pairs);
  const out: FileLineRanges[] = [];
  let budget = WIRE_LIMITS.LINE_RANGES;
  let bytes = WIRE_LIMITS.LINE_ATTRIBUTION_BYTES;
  let filesOmitted = 0;
  for (const { file, direct, steps, problem, own } of plans) {
    const length = lineCount(file.after);
    const added = addedLines(hunks[direct] ?? [], length);
    let writers: Uint8Array;
    if (problem !== undefined) writers = added.map((isAdded) => (isAdded ? NOT_OBSERVED : START));
    else {
      // Through the versions: without edits (no step), every added line was written by others.
      let carried: Uint8Array = new Uint8Array(lineCount(file.before));
      for (const step of steps) carried = carry(carried, hunks[step.pair] ?? [], step.length, step.by);
      if (steps.length === 0) carried = new Uint8Array(length).fill(OTHERS);
      // Only the lines git's diff adds count; one the versions say was there at the start was rewritten by others.
      writers = added.map((isAdded, index) => (!isAdded ? START : carried[index] === AGENT ? AGENT : OTHERS));
    }
    const counts = { agent: 0, others: 0, not_observed: 0 };
    for (const writer of writers) if (writer !== START) counts[AUTHOR[writer] as LineAuthor]++;
    // The count and this diff are git's same diff; should they ever disagree, the file stays unattributed rather than wrong.
    if (counts.agent + counts.others + counts.not_observed !== file.count.added) continue;
    Object.assign(file.count, counts);
    if (file.count.added === 0) continue;
    const entry: FileLineRanges = { path: file.path, ranges: [] };
    // The task's own reason is said once, for every file (LineAttribution.not_observed).
    if (problem !== undefined && own) entry.reason = problem.slice(0, WIRE_LIMITS.LINE_REASON_CHARS);
    const ranges = file.after ? rangesOf(writers, file.after) : [];
    if (ranges.length > WIRE_LIMITS.LINE_RANGES_PER_FILE || ranges.length > budget) entry.omitted = true;
    else entry.ranges = ranges;
    if (!(entry.ranges.length > 0 || entry.omitted || entry.reason)) continue;
    const size = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (size > bytes) {
      filesOmitted++;
      continue;
    }
    bytes -= size;
    budget -= entry.ranges.length;
    out.push(entry);
  }
  const attribution: LineAttribution = { files: out };
  if (filesOmitted > 0) attribution.files_omitted = filesOmitted;
  if (!observed) attribution.not_observed = NOT_OBSERVED_TASK;
  if (inputs.tool) attribution.tool = inputs.tool;
  return attribution;
}
