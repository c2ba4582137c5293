/**
 * @module test/support/wide-workflow
 * A workflow as wide as the limits let an agent make it: `tasks` tasks, each completed with
 * `files` changed files (the helper-only `changes` input, as the helper sends them), recorded
 * through the MCP endpoint. What a share link of it returns is what one anonymous reader can
 * make the server do: the page-bounds test attacks it, the bench's pages section loads it.
 */
import type { CallTool } from "../pages/fixture.ts";

export interface WideWorkflow {
  workflowId: string;
  shareUrl: string;
  taskIds: string[];
}

export async function recordWideWorkflow(callTool: CallTool, tasks: number, files: number): Promise<WideWorkflow> {
  const wf = await callTool("start_workflow", {
    name: `Wide: ${tasks} tasks × ${files} files`,
    plan: [{ step: "1", goal: "Touch everything" }],
  });
  const workflowId = String(wf.workflow_id);
  const taskIds: string[] = [];
  for (let t = 0; t < tasks; t++) {
    const task = await callTool("start_task", {
      workflow_id: workflowId,
      name: `Sweep ${t}`,
      goal: `Rewrite module ${t}`,
      areas: [`src/m${t}/**`],
    });
    const taskId = String(task.task_id);
    taskIds.push(taskId);
    // Every tenth file outside the task's area: the page marks them and lists them for review.
    const transitions = Array.from({ length: files }, (_, i) => ({
      path: i % 10 === 9 ? `elsewhere/m${t}/file-${i}.ts` : `src/m${t}/dir-${i % 97}/file-${i}.ts`,
      before: null,
      after: { mode: "100644", blob: (i % 16).toString(16).repeat(40) },
    }));
    await callTool("complete_task", {
      task_id: taskId,
      status: "success",
      outcome: { summary: `Swept module ${t}` },
      changes: { type: "checksum", transitions },
    });
  }
  return { workflowId, shareUrl: String(wf.share_url), taskIds };
}
