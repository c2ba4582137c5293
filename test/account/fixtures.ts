import type { WorkflowStatus, WorkflowSummary } from "../../src/domain/view";

/** A workflow summary as a workflow object pushes it, for tests that talk to the AccountObject directly. */
export function workflowSummary(id: string, name: string, status: WorkflowStatus = "active"): WorkflowSummary {
  const now = new Date().toISOString();
  return {
    id,
    name,
    status,
    created_at: now,
    updated_at: now,
    open_tasks: 0,
    tasks: 0,
    reviews_needed: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    bytes_stored: 0,
  };
}
