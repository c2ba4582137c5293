/** @module start_workflow — opens a workflow, or returns the open one of the same name (resume). */
import { startWorkflowInput } from "@waymark/protocol/tools";
import type { ResumeCandidate } from "../../account/account-object";
import { WRITES } from "../annotations";
import { APP_LINK } from "../app";
import { defineTool } from "../define";
import { type StartedWorkflow, startWorkflow } from "../orchestration";

/** Why no workflow was created: what the agent reads when the structured result is ignored. */
function renderResumed(candidate: ResumeCandidate): string {
  return [
    `An open workflow with this name exists: ${candidate.workflow_id} "${candidate.name}" (${candidate.open_tasks} open task(s), updated ${candidate.updated_at}).`,
    "No new workflow was created. Call get_workflow to resume it, or start_workflow with force_new: true.",
    `workflow_id: ${candidate.workflow_id}`,
  ].join("\n");
}

function render(out: StartedWorkflow): string {
  if (out.resume_candidate) return renderResumed(out.resume_candidate);
  return [
    `workflow_id: ${out.workflow_id}`,
    `created_at: ${out.created_at}`,
    ...(out.share_url ? [`share_url: ${out.share_url}`] : []),
  ].join("\n");
}

export const startWorkflowTool = defineTool({
  name: "start_workflow",
  description: "Call once per piece of work, before its first task.",
  input: startWorkflowInput,
  output: ["workflow_id", "created_at", "share_url", "resumed", "resume_candidate"],
  annotations: WRITES,
  meta: APP_LINK,
  run: (input, ctx) => startWorkflow(ctx, input),
  render,
});
