/** @module start_task — opens a task (with the helper's snapshot) and suggests related earlier work. */
import { startTaskInput } from "@waymark/protocol/tools";
import { WRITES } from "../annotations";
import { defineTool } from "../define";
import { type StartedTask, startTask } from "../orchestration";

function render(out: StartedTask): string {
  return [
    `task_id: ${out.task_id}`,
    `snapshot: ${out.snapshot_type} ${out.snapshot_id}`,
    ...(out.warnings ?? []).map((w) => `warning: ${w}`),
    ...(out.related ?? []).map((r) => `related ${r.kind} (${r.task_id ?? r.workflow_id}): ${r.text}`),
  ].join("\n");
}

export const startTaskTool = defineTool({
  name: "start_task",
  description: "Call before each task or subtask.",
  input: startTaskInput,
  output: ["task_id", "snapshot_id", "snapshot_type", "started_at", "warnings", "related"],
  annotations: WRITES,
  run: (input, ctx) => startTask(ctx, input),
  render,
});
