/**
 * @module workflow/lifecycle
 * Starting and completing a task inside their writes. Starting stores the task and its start
 * snapshot; completing attributes the helper's observations (domain/attribution),
 * store the net changes and the outcome, update the running totals, and tell earlier tasks
 * that overlapped with this one, so overlap is reported on both.
 */

import type { CompleteTaskInput, StartTaskInput } from "@waymark/protocol/tools";
import { AttributionInputError, attributeTask } from "../domain/attribution";
import type { Snapshot } from "../domain/changes";
import { startWarnings } from "../domain/changes";
import type { Overlap } from "../domain/overlap";
import { endCommit, metricsProvenance } from "../domain/provenance";
import type { Verification } from "../domain/view";
import { WaymarkError } from "../errors";
import { newTaskId } from "../ids";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import { iso, notFoundError, type TaskRow, taskView, type WorkflowRecords, type WorkflowRow } from "./records";
import type { CompleteTaskOutput, StartTaskOutput } from "./results";
import type { RunningTotals } from "./totals";
import type { WriteScope } from "./writer";

export class TaskLifecycle {
  constructor(
    private readonly sql: Sql,
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
  ) {}

  start(workflow: WorkflowRow, input: StartTaskInput, w: WriteScope): StartTaskOutput {
    if (workflow.status !== "active") {
      throw new WaymarkError("CONFLICT", `workflow_id: workflow ${workflow.id} is already completed (${workflow.status})`);
    }
    if (this.totals.read().tasks >= LIMITS.TASKS_PER_WORKFLOW) {
      throw new WaymarkError("PAYLOAD_TOO_LARGE", `workflow_id: at most ${LIMITS.TASKS_PER_WORKFLOW} tasks per workflow`);
    }
    if (input.parent_task_id !== undefined) {
      const parent = this.records.task(input.parent_task_id);
      if (!parent) throw notFoundError("parent_task_id", input.parent_task_id);
      if (parent.status !== "in_progress") {
        throw new WaymarkError("CONFLICT", `parent_task_id: task ${parent.id} is already completed (${parent.status})`);
      }
    }
    const taskId = newTaskId(workflow.id);
    w.countBytes(this.records.insertTask(taskId, input, w.now));
    this.totals.taskStarted();
    this.records.touch(w.now);
    w.emit("task.started", taskId, taskView(this.records.written(taskId)));
    const output: StartTaskOutput = {
      task_id: taskId,
      snapshot_id: snapshotId(input.snapshot, taskId),
      snapshot_type: input.snapshot?.type ?? "none",
      started_at: iso(w.now),
    };
    // No helper at all, or what the helper said about its snapshot (a reason it could not observe, other tasks on the working tree).
    const warnings = startWarnings(input.snapshot);
    if (warnings.length > 0) output.warnings = warnings;
    return output;
  }

  complete(task: TaskRow, input: CompleteTaskInput, w: WriteScope): CompleteTaskOutput {
    const attribution = this.attribute(task, input, w.now);
    const newPaths = this.records.storeChanges(task.id, attribution.changes, attribution.unexpected);
    const duration = Math.max(0, Math.round((w.now - task.started_at) / 1000));
    const metrics = input.metrics;
    this.sql`UPDATE tasks SET status = ${input.status}, completed_at = ${w.now}, duration_seconds = ${duration},
      outcome = ${JSON.stringify(input.outcome)}, metadata = ${input.metadata ? JSON.stringify(input.metadata) : null},
      files_changed = ${JSON.stringify(attribution.files_changed)}, verification = ${JSON.stringify(attribution.verification)},
      input_tokens = ${metrics?.input_tokens ?? null}, output_tokens = ${metrics?.output_tokens ?? null},
      model = ${metrics?.model ?? null}, cost_usd = ${metrics?.cost_usd ?? null}
      WHERE id = ${task.id}`;
    this.recordProvenance(task, input);
    this.totals.taskCompleted({
      topLevel: task.parent_id === null,
      duration,
      newPaths,
      review: input.outcome.manual_review_needed === true,
      input_tokens: metrics?.input_tokens ?? 0,
      output_tokens: metrics?.output_tokens ?? 0,
      cost_usd: metrics?.cost_usd ?? 0,
    });
    this.records.touch(w.now);
    w.emit("task.completed", task.id, taskView(this.records.written(task.id)));
    this.reportToEarlierTasks(task.id, attribution.verification.overlapping ?? [], w);
    return {
      task_id: task.id,
      status: input.status,
      duration_seconds: duration,
      files_changed: attribution.files_changed,
      verification: attribution.verification,
    };
  }

  /** Provenance: where the usage figures came from, and the commit the task ended on. */
  private recordProvenance(task: TaskRow, input: CompleteTaskInput): void {
    const changes = input.changes ?? null;
    const usage = metricsProvenance(input.metrics, changes);
    this.sql`UPDATE tasks SET metrics_source = ${usage?.source ?? null}, price_table_date = ${usage?.price_table_date ?? null},
      repository = CASE WHEN repository IS NULL THEN NULL ELSE json_set(repository, '$.end_commit', ${endCommit(changes)}) END
      WHERE id = ${task.id}`;
  }

  private attribute(task: TaskRow, input: CompleteTaskInput, now: number) {
    try {
      return attributeTask({
        snapshot: this.records.storedSnapshot(task),
        changes: input.changes ?? null,
        areas: JSON.parse(task.areas) as string[],
        task: this.records.window(task, now),
        concurrent: this.records.completedDuring(task),
        manualReview: { needed: input.outcome.manual_review_needed === true, reason: input.outcome.manual_review_reason },
      });
    } catch (error) {
      if (error instanceof AttributionInputError) throw new WaymarkError("INPUT_VALIDATION_ERROR", error.message);
      throw error;
    }
  }

  /** Each earlier task this one overlapped with gets the mirror entries and a task.updated event. */
  private reportToEarlierTasks(taskId: string, overlaps: readonly Overlap[], w: WriteScope): void {
    const byTask = new Map<string, Overlap[]>();
    for (const overlap of overlaps) {
      const mirrored = byTask.get(overlap.task_id) ?? [];
      mirrored.push({ path: overlap.path, task_id: taskId, same_change: overlap.same_change });
      byTask.set(overlap.task_id, mirrored);
    }
    for (const [otherId, mirrored] of byTask) {
      const other = this.records.task(otherId);
      if (!other?.verification) continue;
      const current = JSON.parse(other.verification) as Verification;
      const updated: Verification = {
        ...current,
        overlapping: [...(current.overlapping ?? []), ...mirrored],
        warnings: [
          ...current.warnings,
          `${mirrored.length} file(s) also changed by task ${taskId}, which was open at the same time and completed later.`,
        ],
      };
      this.sql`UPDATE tasks SET verification = ${JSON.stringify(updated)} WHERE id = ${otherId}`;
      w.emit("task.updated", otherId, taskView(this.records.written(otherId)));
    }
  }
}

/** What start_task reports as the snapshot's id: the start commit, or a marker of the snapshot kind. */
function snapshotId(snapshot: Snapshot | undefined, taskId: string): string {
  if (snapshot?.type === "git") return snapshot.head ?? `git-empty:${taskId}`;
  if (snapshot?.type === "checksum") return `checksum:${snapshot.digest.slice(0, 16)}`;
  return `none:${taskId}`;
}
