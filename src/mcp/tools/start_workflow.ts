/** @module start_workflow — opens a workflow, or returns the open one of the same name (resume). */
import { startWorkflowInput } from "@waymark/protocol/tools";
import type { ResumeCandidate } from "../../account/account-object";
import { WRITES } from "../annotations";
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
  description: "Initialize a new workflow tracking session. Call once per piece of work.",
  input: startWorkflowInput,
  // Repository identity is the helper's alone and costs every agent context: not advertised at all.
  opaqueInputs: { repository: null },
  output: {
    workflow_id: "string",
    created_at: "string",
    share_url: ["string", "Live read-only page"],
    resumed: ["boolean", "An open one of this name was returned, none created"],
    resume_candidate: "object",
  },
  annotations: WRITES,
  run: (input, ctx) => startWorkflow(ctx, input),
  render,
});
