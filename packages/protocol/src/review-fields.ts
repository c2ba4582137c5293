/**
 * @module review-fields
 * What a reviewer wants next to a task's file list: lines added and removed per file and in
 * total (and who wrote the added ones), the commits made during the task and the branch. The helper measures them
 * (wire `review` block); this module turns them into the fields files_changed carries, keeping
 * only the files the task is finally credited with, and sums them per workflow.
 */
import { authorTotals } from "./line-authors";
import type { FilesChanged, LineTotals } from "./views/task";
import type { LineCount, ReviewData } from "./wire";

export type { LineTotals } from "./views/task";

/** The review fields of files_changed (all optional: a task without helper data has none). */
export type ReviewFields = Pick<FilesChanged, "lines" | "line_totals" | "line_authors" | "commits" | "commits_omitted" | "branch">;

export function lineTotals(lines: readonly LineCount[]): LineTotals {
  const totals: LineTotals = { added: 0, removed: 0, binary: 0 };
  for (const line of lines) {
    if ("binary" in line) totals.binary++;
    else {
      totals.added += line.added;
      totals.removed += line.removed;
    }
  }
  return totals;
}

/** Adds totals together (a workflow's from its top-level tasks'). */
export function sumTotals(all: readonly (LineTotals | undefined)[]): LineTotals {
  const sum: LineTotals = { added: 0, removed: 0, binary: 0 };
  for (const totals of all) {
    if (!totals) continue;
    sum.added += totals.added;
    sum.removed += totals.removed;
    sum.binary += totals.binary;
  }
  return sum;
}

/**
 * The review fields for a task credited with `paths`: line counts of other paths (a change
 * attributed to a concurrent task, a path the edge did not list) are dropped. Both sides of a
 * rename count 0/0, as `git diff --numstat` with rename detection says: renames are paired
 * only when the content is identical.
 */
export function reviewFields(
  review: ReviewData | undefined,
  paths: ReadonlySet<string>,
  renamed: readonly { from: string; to: string }[] = [],
): ReviewFields {
  if (!review) return {};
  const moved = new Set(renamed.flatMap((r) => [r.from, r.to]));
  const lines = review.lines
    .filter((line) => paths.has(line.path))
    .map((line): LineCount => (moved.has(line.path) ? { path: line.path, added: 0, removed: 0 } : line));
  const fields: ReviewFields = { lines, line_totals: lineTotals(lines), commits: review.commits, branch: review.branch };
  const authors = authorTotals(lines);
  if (authors) {
    const attribution = review.line_attribution;
    fields.line_authors = { ...authors };
    if (attribution?.tool) fields.line_authors.tool = attribution.tool;
    if (attribution?.not_observed) fields.line_authors.not_observed_reason = attribution.not_observed;
  }
  if (review.commits_omitted !== undefined) fields.commits_omitted = review.commits_omitted;
  return fields;
}
