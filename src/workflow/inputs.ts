/**
 * @module inputs — the validated inputs of the WorkflowObject's RPC methods, inferred from the
 * tool schemas in @waymark/protocol/tools (kept only until the object imports them from there).
 */
export type {
  CompleteTaskInput,
  CompleteWorkflowInput,
  LogDecisionInput,
  LogIssueInput,
  LogMilestoneInput,
  StartTaskInput,
  StartWorkflowInput,
} from "@waymark/protocol/tools";
