import type { Changes, Snapshot } from "../domain/changes";
import type { DecisionCategory, IssueType, JsonObject, PlanStep, TaskMetadata, TaskMetrics, TaskOutcome } from "./view";

/** Validated inputs of the WorkflowObject's RPC methods (the MCP layer validates and passes these). */
export interface Idempotent {
  idempotency_key?: string;
}

export interface StartWorkflowInput extends Idempotent {
  name: string;
  description?: string;
  plan?: PlanStep[];
  /** Create a new workflow even when an open one has the same name (the MCP layer checks; the object ignores it). */
  force_new?: boolean;
}

export interface StartTaskInput extends Idempotent {
  workflow_id: string;
  parent_task_id?: string;
  name: string;
  goal: string;
  areas?: string[];
  snapshot?: Snapshot;
}

export interface LogDecisionInput extends Idempotent {
  task_id: string;
  category: DecisionCategory;
  question: string;
  options_considered?: string[];
  chosen: string;
  reasoning: string;
  trade_offs?: string;
}

export interface LogIssueInput extends Idempotent {
  task_id: string;
  type: IssueType;
  description: string;
  resolution: string;
  requires_human_review?: boolean;
}

export interface LogMilestoneInput extends Idempotent {
  task_id: string;
  message: string;
  progress?: number;
  metadata?: JsonObject;
}

export interface CompleteTaskInput extends Idempotent {
  task_id: string;
  status: "success" | "partial_success" | "failed";
  outcome: TaskOutcome;
  metadata?: TaskMetadata;
  metrics?: Partial<TaskMetrics>;
  changes?: Changes;
}

export interface CompleteWorkflowInput extends Idempotent {
  workflow_id: string;
  status: "success" | "partial_success" | "failed";
  summary: string;
  achievements?: string[];
  limitations?: string[];
}
