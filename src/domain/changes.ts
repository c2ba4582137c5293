/**
 * @module changes
 * Change attribution at the edge: the shared rule of @waymark/protocol/attribution applied to
 * the helper's wire data (@waymark/protocol/wire), plus the edge's reading of what the helper
 * sent or did not send (warnings to record with the task).
 */

import { ChangesMismatchError, computeNetChanges, type PathChange } from "@waymark/protocol/attribution";
import { helperWarnings } from "@waymark/protocol/helper-warnings";
import { truncationOf } from "@waymark/protocol/truncation";
import type { Changes, Snapshot, Truncation } from "@waymark/protocol/wire";

export {
  type ChangeStatus,
  ChangesMismatchError,
  changeStatus,
  computeNetChanges,
  type PathChange,
  sameFileState,
} from "@waymark/protocol/attribution";
export { summarizeChanges } from "@waymark/protocol/files-changed";
export { truncationOf } from "@waymark/protocol/truncation";
/**
 * What a task changed, as recorded and shown (@waymark/protocol/views/task): the attributed lists
 * plus their provenance (domain/provenance; absent: recorded before provenance was kept), and
 * `more`, how many more changed files the record holds than a single value (an event, a tool
 * result, a page entry) lists: up to LIMITS.VIEW_FILE_BYTES of the first files in path order.
 */
export type { FilesChanged } from "@waymark/protocol/views/task";
export type { Changes, DirtyEntry, FileState, GitChanges, GitSnapshot, Snapshot, Transition, Truncation } from "@waymark/protocol/wire";

/**
 * How to run the helper, as the server's warnings say it: every endpoint serves its own
 * version-matched helper (GET /helper/latest redirects to /helper/waymark-helper-<version>.tgz).
 * The warnings are recorded inside the workflow, which does not know the origin it is reached by.
 */
export const HELPER_COMMAND = "npx -y --package=<this endpoint>/helper/latest waymark mcp --url <this endpoint>/mcp";
export const NO_SNAPSHOT_WARNING = `No snapshot: file changes will not be computed. Run the agent through the Waymark helper (${HELPER_COMMAND}; \`waymark init\` configures it) to record them.`;
export const NO_HELPER_DATA_WARNING = `File changes were not computed: complete_task was called without helper data. Run the agent through the Waymark helper (${HELPER_COMMAND}; \`waymark init\` configures it) so start_task and complete_task carry git snapshots.`;

/**
 * Warnings of start_task: no helper at all, or what the helper said about its snapshot.
 * `ancestors`: the new task's parent chain, which is open by definition and not a concurrent task.
 */
export function startWarnings(snapshot: Snapshot | undefined, ancestors: ReadonlySet<string> = new Set()): string[] {
  return snapshot === undefined ? [NO_SNAPSHOT_WARNING] : helperWarnings(snapshot, ancestors);
}

export interface HelperAttribution {
  changes: PathChange[];
  /** The helper's summary of changes too many to list; goes into files_changed as it is. */
  truncated?: Truncation;
  warnings: string[];
}

/**
 * What a task changed according to the helper's data: `snapshot` is the start snapshot as
 * stored (null when the task started without one), `changes` what complete_task carried.
 * Never claims "without helper data" when the helper sent anything, even an explanation.
 * Throws ChangesMismatchError (its message names the field) when the data cannot be compared.
 */
export function attributeHelperData(
  snapshot: Snapshot | null,
  changes: Changes | undefined,
  lineage: ReadonlySet<string> = new Set(),
): HelperAttribution {
  if (changes === undefined) return { changes: [], warnings: [NO_HELPER_DATA_WARNING] };
  if (snapshot === null || snapshot.type === "unavailable") {
    if (changes.type === "git") {
      throw new ChangesMismatchError("changes: git changes need the git snapshot of start_task, and this task was started without one");
    }
    // A checksum comparison or a resolution made on the machine stands on its own.
    snapshot = { type: "checksum", files: 0, digest: "" };
  }
  const attribution: HelperAttribution = { changes: computeNetChanges(snapshot, changes), warnings: helperWarnings(changes, lineage) };
  const truncated = truncationOf(changes);
  if (truncated) attribution.truncated = truncated;
  return attribution;
}
