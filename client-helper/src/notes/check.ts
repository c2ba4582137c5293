/**
 * @module notes/check
 * Whether what a note entry says of its lines is what git holds (`waymark verify --repo`): each of
 * its record's ranges carries a hash of the lines' bytes, so git's content at the commit the entry
 * is attached to either has those bytes there or does not. An entry written for that commit is
 * checked in place. An entry a rewrite copied there is first placed on it through the diff from
 * the commit it was written for (git's own, or its line hashes' when that commit is gone): a range
 * the rewrite left whole must still hash the same; one it changed (a person's edit in an amend)
 * is counted as changed, not as a contradiction.
 */
import { lineOffsets, type ReadTaskNote, rangeContentHash } from "@waymark/protocol/git-note";
import { carryLine, type Hunk } from "@waymark/protocol/trace-blame";
import { readObjects } from "../git/blobs.js";
import type { GitContext } from "../git/process.js";
import { hunksBetween } from "./attribution.js";

export interface ContentCheck {
  /** Ranges with a content hash the entry names. */
  ranges: number;
  /** Found whole where the entry places them, with the same bytes. */
  unchanged: number;
  /** Changed by the rewrite that copied the entry (not all their lines carried over). */
  changed: number;
  /** Whole where the entry places them, but other bytes: the note does not describe this commit. */
  mismatched: string[];
}

/** Checks `entry`'s ranges against the content of the commit it is attached to (`attached`). */
export async function checkEntryContent(
  context: GitContext,
  scratchRoot: string,
  attached: string,
  entry: ReadTaskNote,
): Promise<ContentCheck> {
  const check: ContentCheck = { ranges: 0, unchanged: 0, changed: 0, mismatched: [] };
  // Per file, every range with a hash: the record's (the agent's, others') and those no hook observed.
  const byPath = new Map<string, { start_line: number; end_line: number; content_hash?: string }[]>();
  for (const file of entry.trace.files)
    byPath.set(file.path, [...(byPath.get(file.path) ?? []), ...file.conversations.flatMap((c) => c.ranges)]);
  for (const file of entry.not_observed ?? []) byPath.set(file.path, [...(byPath.get(file.path) ?? []), ...file.ranges]);
  const files = [...byPath]
    .map(([path, ranges]) => ({ path, ranges: ranges.filter((r) => r.content_hash !== undefined) }))
    .filter((file) => file.ranges.length > 0);
  if (files.length === 0) return check;
  const contents = await readObjects(
    context,
    files.map((file) => `${attached}:${file.path}`),
  );
  for (const [i, file] of files.entries()) {
    const content = contents[i];
    const ranges = file.ranges;
    check.ranges += ranges.length;
    let hunks: Hunk[] | null = [];
    if (entry.commit !== attached) {
      const original = entry.line_hashes?.find((f) => f.path === file.path)?.hashes;
      hunks = content
        ? await hunksBetween(context, scratchRoot, file.path, { commit: entry.commit, hashes: original }, { commit: attached })
        : null;
    }
    if (!content || hunks === null) {
      check.changed += ranges.length;
      continue;
    }
    const offsets = lineOffsets(content);
    const lines = offsets.length - 1;
    for (const range of ranges) {
      const first = carryLine(hunks, range.start_line);
      const last = carryLine(hunks, range.end_line);
      // Whole: both ends carried and nothing inserted or removed between them.
      if (first === null || last === null || last - first !== range.end_line - range.start_line || last > lines) {
        check.changed++;
        continue;
      }
      const bytes = content.subarray(offsets[first - 1], offsets[last]);
      if (rangeContentHash(bytes) === range.content_hash) check.unchanged++;
      else if (entry.commit !== attached && !untouched(hunks, range.start_line, range.end_line)) check.changed++;
      else
        check.mismatched.push(
          `${file.path}: lines ${first}–${last} at ${attached.slice(0, 12)} are not the bytes the note's range ${range.start_line}–${range.end_line} names (${range.content_hash})`,
        );
    }
  }
  return check;
}

/** Whether no hunk touches the old lines start…end (a copy's range placed whole). */
function untouched(hunks: readonly Hunk[], start: number, end: number): boolean {
  return !hunks.some(([oldStart, oldCount]) => oldCount > 0 && oldStart <= end && oldStart + oldCount - 1 >= start);
}
