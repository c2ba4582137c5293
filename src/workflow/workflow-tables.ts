/**
 * @module workflow/workflow-tables
 * The workflow object's tables created on first use (storage/lazy-tables; their definitions are
 * WORKFLOW_LAZY_TABLES in workflow/workflow-schema): the collaborators that read or write them take
 * this, ask `has` before a read and `ensure` before a write.
 */
import type { LazyTables } from "../storage/lazy-tables";

export type WorkflowLazyTable =
  | "snapshot_entries"
  | "task_overlaps"
  | "task_commands"
  | "idempotency"
  | "changed_paths"
  | "changed_path_sets"
  | "feedback"
  | "device_signed";

export type WorkflowTables = LazyTables<WorkflowLazyTable>;
