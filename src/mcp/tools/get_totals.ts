/** @module get_totals — a workflow's running totals (throwaway: traces the "To add a tool" recipe). */
import { getTotalsInput } from "@waymark/protocol/tools";
import type { Totals } from "../../domain/view";
import type { Result } from "../../errors";
import { READS } from "../annotations";
import { notFound, workflowStub } from "../context";
import { defineTool } from "../define";

export const getTotalsTool = defineTool({
  name: "get_totals",
  description: "A workflow's totals.",
  input: getTotalsInput,
  output: ["totals"],
  annotations: READS,
  run: async (input, ctx): Promise<Result<{ totals: Totals }>> => {
    const stub = workflowStub(ctx, input.workflow_id);
    return stub ? stub.readTotals(ctx.account) : notFound("workflow_id", input.workflow_id);
  },
  render: (out) => `${out.totals.tasks} task(s), ${out.totals.files_changed} file(s)`,
});
