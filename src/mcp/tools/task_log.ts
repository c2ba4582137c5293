import type { McpServer } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { Result } from "../../errors";
import type { LogOutput, WorkflowObject } from "../../workflow/object";
import { WRITES } from "../annotations";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, notFoundResult, type ToolContext, taskStub } from "../context";

const output = outputShape({ id: "string" });

interface TaskLogTool<I extends { task_id: string }> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  record: (stub: DurableObjectStub<WorkflowObject>, account: string, input: I) => Promise<Result<LogOutput>>;
}

/** The three log tools share their shape: validate, route by task id, append, answer in one short line. */
export function registerTaskLog<I extends { task_id: string }>(server: McpServer, ctx: ToolContext, tool: TaskLogTool<I>): void {
  server.registerTool(
    tool.name,
    {
      description: tool.description,
      inputSchema: advertise(tool.input),
      outputSchema: output,
      annotations: WRITES,
    },
    async (args) => {
      const parsed = parseArguments(tool.input, args);
      if (!parsed.ok) return errorResult(parsed);
      const stub = taskStub(ctx, parsed.value.task_id);
      if (!stub) return notFoundResult("task_id", parsed.value.task_id);
      return fromRpc(
        () => tool.record(stub, ctx.account, parsed.value),
        (out) => [`logged ${out.id} on ${out.task_id}`, ...(out.warnings ?? []).map((w) => `warning: ${w}`)].join("\n"),
      );
    },
  );
}
