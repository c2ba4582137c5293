/**
 * @module domain/task-attribution
 * What one completing task changed, as a pure function of what the helper observed:
 * (start snapshot, end changes, declared areas, concurrent tasks) → files_changed,
 * verification and the net changes to store. The workflow object only reads its inputs
 * from storage and writes the answer back.
 */

import { reviewFields } from "@waymark/protocol/review-fields";
import type { FileLineRanges, LineAttribution } from "@waymark/protocol/wire";
import { checkScope } from "./area-scope";
import {
  attributeHelperData,
  type Changes,
  ChangesMismatchError,
  type FilesChanged,
  NO_HELPER_DATA_WARNING,
  type PathChange,
  type Snapshot,
  summarizeChanges,
  type Truncation,
} from "./changes";
import {
  attributeOverlaps,
  type CompletedTaskChanges,
  compareOverlaps,
  overlapsElsewhere,
  type TaskElsewhere,
  type TaskWindow,
} from "./overlap";
import { filesProvenance, type Trust } from "./provenance";
import type { Verification } from "./view";

export interface AttributionInput {
  /** The start snapshot stored at start_task; null when the task started without one. */
  snapshot: Snapshot | null;
  /** What the helper observed at complete_task; null when the caller sent nothing. */
  changes: Changes | null;
  areas: readonly string[];
  task: TaskWindow;
  /** Tasks of the same workflow that completed while this one was open. */
  concurrent: readonly CompletedTaskChanges[];
  /** Ids of its subtasks at any depth: with its ancestors (in `task`), never a concurrent task. */
  descendants?: readonly string[];
  /**
   * Tasks of other workflows the helper saw open on the same working tree, with their changes
   * to the files it says both changed: overlaps reported with the rest, never taken off this
   * task's list (each workflow keeps its own record).
   */
  elsewhere?: readonly TaskElsewhere[];
  manualReview?: { needed: boolean; reason?: string };
  /** Whether an approved device signed the data (domain/provenance); absent: not signed. */
  trust?: Trust;
}

export interface Attribution {
  changes: PathChange[];
  files_changed: FilesChanged;
  verification: Verification;
  /** Paths outside the declared scope, for storage. */
  unexpected: Set<string>;
  /** The line ranges the helper attributed, of the files the task is credited with (stored per file). */
  lineRanges: Map<string, FileLineRanges>;
}

/** The input cannot be attributed: the message names the field and the rule. */
export class AttributionInputError extends Error {
  override name = "AttributionInputError";
}

export function attributeTask(input: AttributionInput): Attribution {
  const warnings: string[] = [];
  let changes: PathChange[] = [];
  let truncated: Truncation | undefined;
  let overlapping: Verification["overlapping"];
  if (input.changes) {
    try {
      // The helper's data as the shared contract reads it: net changes, its own warnings, its summary of lists too large to send.
      const lineage = new Set([...input.task.ancestors, ...(input.descendants ?? [])]);
      const helper = attributeHelperData(input.snapshot, input.changes, lineage);
      changes = helper.changes;
      truncated = helper.truncated;
      warnings.push(...helper.warnings);
    } catch (error) {
      if (error instanceof ChangesMismatchError || error instanceof AttributionInputError) {
        throw new AttributionInputError(error.message.startsWith("changes") ? error.message : `changes: ${error.message}`);
      }
      throw error;
    }
    const attributed = attributeOverlaps({ window: input.task, changes }, input.concurrent);
    changes = attributed.kept;
    if (attributed.overlaps.length > 0) {
      const others = [...new Set(attributed.overlaps.map((o) => o.task_id))].join(", ");
      warnings.push(
        `${attributed.overlaps.length} file(s) also changed by concurrently open task(s) ${others}; identical changes are attributed once, to the task that completed first.`,
      );
    }
    const elsewhere = overlapsElsewhere(changes, input.elsewhere ?? []);
    const all = elsewhere.length > 0 ? [...attributed.overlaps, ...elsewhere].sort(compareOverlaps) : attributed.overlaps;
    if (all.length > 0) overlapping = all;
  } else {
    warnings.push(NO_HELPER_DATA_WARNING);
  }
  const paths = changes.map((c) => c.path);
  const scope = checkScope(input.areas, paths);
  const verification: Verification = {
    scope_match: scope.scope_match,
    unexpected_files: scope.unexpected_files,
    warnings: [...scope.warnings, ...warnings],
  };
  if (overlapping) verification.overlapping = overlapping;
  if (input.manualReview?.needed) {
    verification.warnings.push(`Manual review needed${input.manualReview.reason ? `: ${input.manualReview.reason}` : "."}`);
  }
  const files_changed: FilesChanged = summarizeChanges(changes, truncated);
  // Line counts and commits as the helper measured them, for the files this task is credited with.
  const review = input.changes && input.changes.type !== "unavailable" ? input.changes.review : undefined;
  if (review) Object.assign(files_changed, reviewFields(review, new Set(paths), files_changed.renamed));
  // Provenance: computed and signed, claimed by the client, or not observed; files the agent's edit tools did not touch.
  Object.assign(files_changed, filesProvenance(input.changes, paths, input.trust));
  const lineRanges = creditedRanges(review?.line_attribution, files_changed);
  return { changes, files_changed, verification, unexpected: new Set(scope.unexpected_files), lineRanges };
}

/** The helper's line ranges of the files whose counts the task keeps with their authors (a renamed pair keeps none). */
function creditedRanges(attribution: LineAttribution | undefined, files: FilesChanged): Map<string, FileLineRanges> {
  const ranges = new Map<string, FileLineRanges>();
  if (!attribution) return ranges;
  const attributed = new Set(
    (files.lines ?? []).filter((line) => !("binary" in line) && line.agent !== undefined).map((line) => line.path),
  );
  for (const file of attribution.files) if (attributed.has(file.path)) ranges.set(file.path, file);
  return ranges;
}
