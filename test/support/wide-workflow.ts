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

export interface FilledWorkflow extends WideWorkflow {
  /** Started before the workflow reached its byte quota, still open. */
  openTaskId: string;
  /** What start_task answered once the quota was reached. */
  refusal: string;
}

/** `files` changes of long paths (about `pathBytes` bytes each) for task `t`: what a wide sweep of a deep tree reports. */
export function longPathChanges(t: number, files: number, pathBytes: number) {
  const stem = `src/module-${t}/${"deeply/nested/".repeat(Math.max(1, Math.floor((pathBytes - 40) / 14)))}`;
  return {
    type: "checksum",
    transitions: Array.from({ length: files }, (_, i) => ({
      path: `${stem}file-${i}.ts`,
      before: null,
      after: { mode: "100644", blob: (i % 16).toString(16).repeat(40) },
    })),
  };
}

/**
 * A workflow filled up to its byte quota (LIMITS.WORKFLOW_BYTES): one task started first and left
 * open, then tasks of `files` files with long paths, each started and completed, until start_task
 * is refused (QUOTA_EXCEEDED). At most `maxTasks` tasks (a bound that is never reached if the
 * quota holds).
 */
export async function fillToQuota(callTool: CallTool, files: number, pathBytes: number, maxTasks = 200): Promise<FilledWorkflow> {
  const wf = await callTool("start_workflow", { name: `Full: tasks of ${files} files`, plan: [{ step: "1", goal: "Fill it" }] });
  const workflowId = String(wf.workflow_id);
  const open = await callTool("start_task", { workflow_id: workflowId, name: "Left open", goal: "Completes past the quota" });
  const taskIds: string[] = [];
  for (let t = 0; t < maxTasks; t++) {
    let taskId: string;
    try {
      taskId = String((await callTool("start_task", { workflow_id: workflowId, name: `Sweep ${t}`, goal: "g" })).task_id);
    } catch (error) {
      const message = String(error);
      if (!message.includes("QUOTA_EXCEEDED")) throw error;
      return { workflowId, shareUrl: String(wf.share_url), taskIds, openTaskId: String(open.task_id), refusal: message };
    }
    taskIds.push(taskId);
    await callTool("complete_task", {
      task_id: taskId,
      status: "success",
      outcome: { summary: `Swept ${t}` },
      changes: longPathChanges(t, files, pathBytes),
    });
  }
  throw new Error(`the workflow took ${maxTasks} tasks of ${files} files without reaching its quota`);
}
