/**
 * @module quick-counts
 * Line counts git's `--numstat` would give, worked out without git where the answer cannot
 * depend on how a diff lines up its lines, so most files of a task need no scratch repository
 * (./scratch.ts, which takes a few milliseconds of git processes per call):
 *
 * - equal bytes on both sides are no change (0/0), binary or not;
 * - a file is binary when either side has a NUL byte in its first 8,000 bytes (git's own test);
 * - otherwise both sides are cut into lines (each with its newline; a last line without one is
 *   a different line), the lines both sides start and end with are set aside, as git's diff
 *   does first, and what remains is counted when the two remainders share no line at all: then
 *   every remaining line is removed or added whatever the algorithm (git discards a line that
 *   has no match on the other side before it aligns anything).
 *
 * Anything else (a remainder that shares a line with the other one) is left to git: null.
 * The same reasoning gives git's one hunk of such a change where it cannot slide (quickHunk).
 */
import type { Counts } from "./scratch.js";

/** How far git looks for a NUL byte to call a content binary (`buffer_is_binary`). */
const FIRST_FEW_BYTES = 8000;

function isBinary(content: Buffer): boolean {
  return content.subarray(0, FIRST_FEW_BYTES).includes(0);
}

/** The content's lines, each with its newline; bytes kept as they are (latin1 maps each byte to one character). */
function linesOf(content: Buffer): string[] {
  if (content.length === 0) return [];
  const parts = content.toString("latin1").split("\n");
  const last = parts.pop() as string;
  const lines = parts.map((line) => `${line}\n`);
  if (last !== "") lines.push(last);
  return lines;
}

/**
 * Both sides as lines, with the lines they start and end with set aside as git's diff does first:
 * the changed lines are a[start, endA) and b[start, endB). Null when only git can tell: a side is
 * binary, or the two remainders share a line (then the alignment decides).
 */
function remainders(
  before: Buffer | null,
  after: Buffer | null,
): { a: string[]; b: string[]; start: number; endA: number; endB: number } | null {
  if ((before && isBinary(before)) || (after && isBinary(after))) return null;
  const a = before ? linesOf(before) : [];
  const b = after ? linesOf(after) : [];
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  if (endA > start && endB > start) {
    const left = new Set(a.slice(start, endA));
    for (let i = start; i < endB; i++) if (left.has(b[i] as string)) return null;
  }
  return { a, b, start, endA, endB };
}

/** git's counts from one side to the other (null: a side absent), or null when only git can tell. */
export function quickCounts(before: Buffer | null, after: Buffer | null): Counts | null {
  // Equal bytes are no difference to git, binary or not.
  if (before && after && before.equals(after)) return { added: 0, removed: 0 };
  if ((before && isBinary(before)) || (after && isBinary(after))) return "binary";
  const sides = remainders(before, after);
  return sides && { added: sides.endB - sides.start, removed: sides.endA - sides.start };
}

/**
 * Whether git could place the changed lines `lines[from, to)` elsewhere: a block whose last line
 * equals the line before it, or whose first line equals the line after it, slides, and git's
 * heuristics choose where it ends up.
 */
function slides(lines: readonly string[], from: number, to: number): boolean {
  if (from === to) return false;
  return (from > 0 && lines[from - 1] === lines[to - 1]) || (to < lines.length && lines[to] === lines[from]);
}

/**
 * The one hunk git's `diff -U0` gives between two different, non-empty text contents whose changed
 * lines share none and cannot slide (1-based; an empty side's start is the line before it, as git
 * numbers it); null when only git can tell.
 */
export function quickHunk(
  before: Buffer,
  after: Buffer,
): { oldStart: number; oldCount: number; newStart: number; newCount: number } | null {
  const sides = remainders(before, after);
  if (!sides) return null;
  const { a, b, start, endA, endB } = sides;
  if (slides(a, start, endA) || slides(b, start, endB)) return null;
  const oldCount = endA - start;
  const newCount = endB - start;
  return { oldStart: oldCount === 0 ? start : start + 1, oldCount, newStart: newCount === 0 ? start : start + 1, newCount };
}
