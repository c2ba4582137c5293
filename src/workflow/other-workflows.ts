/**
 * @module workflow/other-workflows
 * Two agents in one checkout, each in its own workflow: the helper of a completing task names
 * the tasks of other workflows that were open on the same working tree (and the files both
 * changed). Before the completion's write, this asks those workflows (the same account's only:
 * another account's answers nothing) for their tasks' changes to those files, so the overlap is
 * recorded with whether both made the same change; after it, each of them records the overlap
 * on its task too. Tasks of this workflow are compared from its own records (workflow/lifecycle).
 */
import type { CompleteTaskInput } from "@waymark/protocol/tools";
import type { PathChange } from "../domain/changes";
import type { Overlap, TaskElsewhere } from "../domain/overlap";
import { fail, type Result } from "../errors";
import { workflowOfTask } from "../ids";
import type { Ownership } from "./ownership";
import type { WorkflowRecords } from "./records";

/** The two RPC methods of another workflow's object this uses (workflow/workflow-object), named here so neither module imports the other. */
export interface OtherWorkflow {
  changesOf(account: string, taskId: string, paths: readonly string[]): Promise<Result<PathChange[]>>;
  overlapsFromElsewhere(account: string, taskId: string, overlaps: readonly Overlap[]): Promise<Result<object>>;
}

export class OtherWorkflows {
  constructor(
    private readonly records: WorkflowRecords,
    private readonly ownership: Ownership,
    private readonly stubOf: (workflowId: string) => OtherWorkflow,
  ) {}

  /** The completed tasks of other workflows the helper data names, with their changes to the files it says both changed. */
  async tasksNamed(account: string, input: CompleteTaskInput): Promise<TaskElsewhere[]> {
    const own = this.ownership.of(account);
    const changes = input.changes;
    if (!own || !changes || changes.type === "unavailable") return [];
    const named = (changes.concurrent ?? []).flatMap((task) => {
      const workflowId = workflowOfTask(task.task_id);
      const paths = task.shared_paths ?? [];
      return workflowId && workflowId !== own.id && task.completed_at !== null && paths.length > 0 ? [{ task, workflowId, paths }] : [];
    });
    const found = await Promise.all(
      named.map(async ({ task, workflowId, paths }) => {
        const answer = await this.stubOf(workflowId)
          .changesOf(account, task.task_id, paths)
          .catch(() => null);
        return answer?.ok ? [{ task_id: task.task_id, workflow_id: workflowId, changes: answer.value }] : [];
      }),
    );
    return found.flat();
  }

  /** After `taskId` completed: each task of another workflow it overlapped with records the overlap too (a failure is logged, never the caller's). */
  async tell(account: string, taskId: string): Promise<void> {
    const own = this.ownership.of(account);
    if (!own) return;
    const byTask = new Map<string, Overlap[]>();
    for (const overlap of this.records.files.overlapsElsewhere(taskId)) {
      const mirrored = byTask.get(overlap.task_id) ?? [];
      mirrored.push({ path: overlap.path, task_id: taskId, same_change: overlap.same_change, workflow_id: own.id });
      byTask.set(overlap.task_id, mirrored);
    }
    await Promise.all(
      [...byTask].map(async ([otherId, overlaps]) => {
        const workflowId = workflowOfTask(otherId);
        if (!workflowId) return;
        const answer = await this.stubOf(workflowId)
          .overlapsFromElsewhere(account, otherId, overlaps)
          .catch((error: unknown) => fail("INTERNAL", String(error)));
        if (!answer.ok) console.error(`overlap not recorded on ${otherId}: ${answer.code}: ${answer.message}`);
      }),
    );
  }
}
