/** @module start_task — opens a task (with the helper's snapshot) and suggests related earlier work. */
import { startTaskInput } from "@waymark/protocol/tools";
import { WRITES } from "../annotations";
import { defineTool } from "../define";
import { HELPER_ONLY } from "../fields";
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
  description: "Start a new task and create a Git snapshot. Call before each task or subtask.",
  input: startTaskInput,
  opaqueInputs: { snapshot: HELPER_ONLY },
  output: {
    task_id: "string",
    snapshot_id: "string",
    snapshot_type: "string",
    started_at: "string",
    warnings: "array",
    related: ["array", "Earlier relevant decisions/issues"],
  },
  annotations: WRITES,
  run: (input, ctx) => startTask(ctx, input),
  render,
});
