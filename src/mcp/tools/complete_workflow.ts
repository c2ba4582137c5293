/** @module complete_workflow — closes a workflow once its tasks are complete, with its totals. */
import { completeWorkflowInput } from "@waymark/protocol/tools";
import { WRITES } from "../annotations";
import { notFound, workflowStub } from "../context";
import { defineTool } from "../define";

export const completeWorkflowTool = defineTool({
  name: "complete_workflow",
  description: "Call once all its tasks are complete.",
  input: completeWorkflowInput,
  output: ["workflow_id", "status", "completed_at", "duration_seconds", "totals"],
  annotations: WRITES,
  run: async (input, ctx) => {
    const stub = workflowStub(ctx, input.workflow_id);
    return stub ? stub.completeWorkflow(ctx.account, input) : notFound("workflow_id", input.workflow_id);
  },
  render: (out) =>
    `${out.workflow_id} ${out.status}: ${out.totals.tasks} tasks, ${out.totals.files_changed} files, ${out.totals.reviews_needed} reviews needed`,
});
