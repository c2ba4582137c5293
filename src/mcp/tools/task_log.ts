/** @module task_log — the shape the three log tools share: validate, route by task id, append, answer in one line. */
import type { z } from "zod";
import type { Result } from "../../errors";
import type { LogOutput, WorkflowObject } from "../../workflow/workflow-object";
import { WRITES } from "../annotations";
import { notFound, taskStub } from "../context";
import { defineTool, type ToolDefinition } from "../define";

interface TaskLogTool<I extends { task_id: string }> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  record: (stub: DurableObjectStub<WorkflowObject>, account: string, input: I) => Promise<Result<LogOutput>>;
  /** Whether this log can answer with warnings (only milestones do: past the advised count). */
  warns?: boolean;
}

export function defineTaskLog<I extends { task_id: string }>(tool: TaskLogTool<I>): ToolDefinition {
  return defineTool<I, LogOutput>({
    name: tool.name,
    description: tool.description,
    input: tool.input,
    // The two logs that never warn do not advertise `warnings`.
    output: tool.warns ? ["id", "task_id", "warnings"] : ["id", "task_id"],
    annotations: WRITES,
    run: async (input, ctx): Promise<Result<LogOutput>> => {
      const stub = taskStub(ctx, input.task_id);
      return stub ? tool.record(stub, ctx.account, input) : notFound("task_id", input.task_id);
    },
    render: (out) => [`logged ${out.id} on ${out.task_id}`, ...(out.warnings ?? []).map((w) => `warning: ${w}`)].join("\n"),
  });
}
