/**
 * @module workflow/lifecycle
 * The state changes of tasks and of the workflow, inside their writes: starting a task stores it
 * and its start snapshot; completing one attributes the helper's observations
 * (domain/attribution), stores the net changes and the outcome, updates the running totals and
 * tells earlier tasks that overlapped with it, so overlap is reported on both; logs are written
 * only on open tasks; the workflow completes once every task has.
 */

import type { CompleteTaskInput, CompleteWorkflowInput, StartTaskInput, StartWorkflowInput } from "@waymark/protocol/tools";
import type { Snapshot } from "../domain/changes";
import { startWarnings } from "../domain/changes";
import type { Overlap } from "../domain/overlap";
import { endCommit, metricsProvenance } from "../domain/provenance";
import { AttributionInputError, attributeTask } from "../domain/task-attribution";
import type { Verification } from "../domain/view";
import { WaymarkError } from "../errors";
import { newTaskId } from "../ids";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import { iso, notFoundError, type TaskRow, taskView, type WorkflowRecords, type WorkflowRow } from "./records";
import type { CompleteTaskOutput, CompleteWorkflowOutput, StartTaskOutput, StartWorkflowOutput } from "./results";
import type { RunningTotals } from "./totals";
import type { WriteScope } from "./writer";

export type LogTable = "decisions" | "issues" | "milestones";

export class TaskLifecycle {
  constructor(
    private readonly sql: Sql,
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
  ) {}

  startWorkflow(id: string, account: string, input: StartWorkflowInput, w: WriteScope): StartWorkflowOutput {
    this.sql`INSERT INTO workflow (id, account, name, description, plan, created_at, updated_at)
      VALUES (${id}, ${account}, ${input.name}, ${input.description ?? null}, ${JSON.stringify(input.plan ?? [])}, ${w.now}, ${w.now})`;
    this.records.setRepository(input.repository ?? null);
    w.emit("workflow.started", null, this.records.header());
    return { workflow_id: id, created_at: iso(w.now) };
  }

  /**
   * A log (decision, issue, milestone) is written only on an open task, within its bound;
   * `logs` is how many of this kind the task already has.
   */
  openForLogs(task: TaskRow, table: LogTable, logs: number): void {
    if (task.status !== "in_progress") {
      throw new WaymarkError("CONFLICT", `task_id: task ${task.id} is already completed (${task.status}); log on an open task`);
    }
    if (logs >= LIMITS.LOGS_PER_TASK) {
      throw new WaymarkError("PAYLOAD_TOO_LARGE", `task_id: at most ${LIMITS.LOGS_PER_TASK} ${table} per task`);
    }
  }

  /** Completes the workflow once every task is complete. */
  completeWorkflow(workflow: WorkflowRow, input: CompleteWorkflowInput, w: WriteScope): CompleteWorkflowOutput {
    if (workflow.status !== "active") {
      throw new WaymarkError(
        "CONFLICT",
        `workflow_id: workflow ${workflow.id} was already completed (${workflow.status}); retry with the same idempotency_key to get the first result`,
      );
    }
    const open = this.records.openTasks();
    if (open.length > 0) {
      throw new WaymarkError(
        "CONFLICT",
        `workflow_id: tasks still open: ${open.map((t) => `${t.id} (${t.name})`).join(", ")}; complete them first`,
      );
    }
    const outcome = { summary: input.summary, achievements: input.achievements ?? [], limitations: input.limitations ?? [] };
    this
      .sql`UPDATE workflow SET status = ${input.status}, outcome = ${JSON.stringify(outcome)}, completed_at = ${w.now}, updated_at = ${w.now}`;
    w.emit("workflow.completed", null, this.records.header());
    return {
      workflow_id: workflow.id,
      status: input.status,
      completed_at: iso(w.now),
      duration_seconds: Math.round((w.now - workflow.created_at) / 1000),
      totals: this.totals.read(),
    };
  }

  start(workflow: WorkflowRow, input: StartTaskInput, w: WriteScope): StartTaskOutput {
    if (workflow.status !== "active") {
      throw new WaymarkError("CONFLICT", `workflow_id: workflow ${workflow.id} is already completed (${workflow.status})`);
    }
    if (this.totals.read().tasks >= LIMITS.TASKS_PER_WORKFLOW) {
      throw new WaymarkError("PAYLOAD_TOO_LARGE", `workflow_id: at most ${LIMITS.TASKS_PER_WORKFLOW} tasks per workflow`);
    }
    const ancestors = new Set<string>();
    if (input.parent_task_id !== undefined) {
      const parent = this.records.task(input.parent_task_id);
      if (!parent) throw notFoundError("parent_task_id", input.parent_task_id);
      if (parent.status !== "in_progress") {
        throw new WaymarkError("CONFLICT", `parent_task_id: task ${parent.id} is already completed (${parent.status})`);
      }
      ancestors.add(parent.id);
      for (const id of this.records.window(parent, null).ancestors) ancestors.add(id);
    }
    const taskId = newTaskId(workflow.id);
    w.countBytes(this.records.insertTask(taskId, input, w.now));
    this.totals.taskStarted();
    w.emit("task.started", taskId, taskView(this.records.written(taskId)));
    const output: StartTaskOutput = {
      task_id: taskId,
      snapshot_id: snapshotId(input.snapshot, taskId),
      snapshot_type: input.snapshot?.type ?? "none",
      started_at: iso(w.now),
    };
    // No helper at all, or what the helper said about its snapshot (a reason it could not observe, other tasks on the working tree).
    const warnings = startWarnings(input.snapshot, ancestors);
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
    const descendants = this.records.descendants(task.id);
    try {
      return attributeTask({
        snapshot: this.records.storedSnapshot(task),
        changes: input.changes ?? null,
        areas: JSON.parse(task.areas) as string[],
        task: this.records.window(task, now),
        concurrent: this.records.completedDuring(task, new Set(descendants)),
        descendants,
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
