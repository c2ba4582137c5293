/**
 * @module workflow/results
 * What the WorkflowObject's write methods return (inside a Result): the structured results the
 * MCP tools answer with.
 */
import type { CompletionCheckpoint } from "@waymark/protocol/git-note";
import type { FilesChanged } from "../domain/changes";
import type { TaskMetrics, Verification, WorkflowView } from "../domain/view";
import type { WorkflowState } from "./resume";

export interface StartWorkflowOutput {
  workflow_id: string;
  created_at: string;
}
export interface StartTaskOutput {
  task_id: string;
  snapshot_id: string;
  snapshot_type: "git" | "checksum" | "unavailable" | "none";
  started_at: string;
  warnings?: string[];
}
/**
 * What start_task and complete_task also return when their caller keeps the workflow's state (a
 * helper, for its hooks): the state after the write, read in the same turn as the write.
 */
export interface KeptState {
  workflow_state?: WorkflowState;
}
export interface LogOutput {
  id: string;
  task_id: string;
  warnings?: string[];
}
export interface CompleteTaskOutput {
  task_id: string;
  status: string;
  duration_seconds: number;
  files_changed: FilesChanged;
  verification: Verification;
  /** The usage reported, as recorded with its provenance (absent when none was). */
  metrics?: TaskMetrics;
  /**
   * What makes the record checkable from the repository (the helper writes it into the task's git
   * notes): the workflow, the task's name, when it completed, and the chain after this write.
   */
  checkpoint?: CompletionCheckpoint;
}
export interface CompleteWorkflowOutput {
  workflow_id: string;
  status: string;
  completed_at: string;
  duration_seconds: number;
  totals: WorkflowView["totals"];
}
