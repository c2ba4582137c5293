/**
 * @module workflow/lifecycle
 * The rules of the workflow's and its tasks' state changes, inside their writes: when a task may
 * start, be logged on or complete, and what completing it records. Starting a task stores it and
 * its start snapshot; completing one attributes the helper's observations (domain/task-attribution),
 * splits its files for storage (domain/stored-files), updates the running totals and tells
 * earlier tasks that overlapped with it, so overlap is reported on both; the workflow completes
 * once every task has. Every statement is workflow/records' (this module holds the rules only).
 */

import { deviceSignedText } from "@waymark/protocol/device-signature";
import { isReviewItem } from "@waymark/protocol/review-counts";
import type * as Tools from "@waymark/protocol/tools";
import type { Snapshot } from "../domain/changes";
import { startWarnings } from "../domain/changes";
import type { SignatureVerdict } from "../domain/device-signature";
import type { Overlap, TaskElsewhere } from "../domain/overlap";
import {
  durabilityReported,
  endCommit,
  metricsProvenance,
  observedCommands,
  startSignature,
  type Trust,
  trustOf,
} from "../domain/provenance";
import { boundWarnings, storedFiles, withWarning } from "../domain/stored-files";
import { AttributionInputError, attributeTask } from "../domain/task-attribution";
import type { TaskView } from "../domain/view";
import { WaymarkError } from "../errors";
import { newRowId, newTaskId, rowIdAfter } from "../ids";
import { LIMITS } from "../limits";
import type { AcceptedPayload } from "./device-signatures";
import { signedInline } from "./device-signed";
import { noWorkflowOrTask } from "./ownership";
import { iso, type LoggedTask, type TaskRow, type WorkflowRecords, type WorkflowRow } from "./records";
import type { CompleteTaskOutput, CompleteWorkflowOutput, LogOutput, StartTaskOutput, StartWorkflowOutput } from "./results";
import type { ShareHash } from "./share";
import type { LogKind } from "./task-logs";
import type { RunningTotals } from "./totals";
import type { WriteScope } from "./write-scope";

/** A log kind: its table. */
export type LogTable = LogKind;

export class TaskLifecycle {
  constructor(
    private readonly records: WorkflowRecords,
    private readonly totals: RunningTotals,
  ) {}

  /** `link`: its first share link, stored with its row. */
  startWorkflow(id: string, account: string, input: Tools.StartWorkflowInput, w: WriteScope, link: ShareHash | null): StartWorkflowOutput {
    this.records.insertWorkflow(id, account, input, w.now, link);
    w.emit("workflow.started", null, this.records.header());
    return { workflow_id: id, created_at: iso(w.now) };
  }

  /** Each log kind's last id and time this instance wrote (a rolled-back one only makes the next id larger). */
  private readonly lastLogIds = new Map<string, { at: number; id: string }>();

  /**
   * A new log entry's id: random, unless the same kind had an entry in this millisecond, then the
   * next id after it, so entries of one millisecond keep their writing order in the (time, id) order
   * every read uses.
   */
  private logEntryId(prefix: string, now: number): string {
    const last = this.lastLogIds.get(prefix);
    let id = newRowId(prefix);
    if (last && last.at === now && id <= last.id) id = rowIdAfter(last.id);
    this.lastLogIds.set(prefix, { at: now, id });
    return id;
  }

  /**
   * A log (decision, issue, milestone) is written only on an open task, within its bound;
   * `logs` is how many of this kind the task already has.
   */
  openForLogs(task: LoggedTask, table: LogTable, logs: number): void {
    if (task.status !== "in_progress") {
      throw new WaymarkError("CONFLICT", `task_id: task ${task.id} is already completed (${task.status}); log on an open task`);
    }
    if (logs >= LIMITS.LOGS_PER_TASK) {
      throw new WaymarkError("PAYLOAD_TOO_LARGE", `task_id: at most ${LIMITS.LOGS_PER_TASK} ${table} per task`);
    }
  }

  logDecision(task: LoggedTask, input: Tools.LogDecisionInput, w: WriteScope): LogOutput {
    const id = this.logEntryId("dc", w.now);
    const decision = this.records.insertDecision(id, task, input, w.now, w.lastSeq());
    this.totals.decisionLogged();
    if (decision) w.emitWithRow("decision.logged", task.id, decision);
    return { id, task_id: task.id };
  }

  logIssue(task: LoggedTask, input: Tools.LogIssueInput, w: WriteScope): LogOutput {
    const id = this.logEntryId("is", w.now);
    const issue = this.records.insertIssue(id, task, input, w.now, w.lastSeq());
    this.totals.issueLogged(input.requires_human_review === true);
    if (issue) w.emitWithRow("issue.logged", task.id, issue);
    return { id, task_id: task.id };
  }

  /** `earlier`: how many milestones the task had; past LIMITS.MILESTONES_ADVISED the result says so. */
  logMilestone(task: LoggedTask, input: Tools.LogMilestoneInput, w: WriteScope, earlier: number): LogOutput {
    const id = this.logEntryId("ms", w.now);
    const milestone = this.records.insertMilestone(id, task, input, w.now, w.lastSeq());
    if (milestone) w.emitWithRow("milestone.logged", task.id, milestone);
    const count = earlier + 1;
    const output: LogOutput = { id, task_id: task.id };
    if (count > LIMITS.MILESTONES_ADVISED) {
      output.warnings = [`${count} milestones on this task; the protocol advises at most ${LIMITS.MILESTONES_ADVISED}.`];
    }
    return output;
  }

  /** Completes the workflow once every task is complete. */
  completeWorkflow(workflow: WorkflowRow, input: Tools.CompleteWorkflowInput, w: WriteScope): CompleteWorkflowOutput {
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
    this.records.completeWorkflow(input, w.now);
    w.emit("workflow.completed", null, this.records.header());
    return {
      workflow_id: workflow.id,
      status: input.status,
      completed_at: iso(w.now),
      duration_seconds: Math.round((w.now - workflow.created_at) / 1000),
      totals: this.totals.read(),
    };
  }

  /**
   * `signed`: the verdict on the start snapshot's device signature (workflow/device-signatures),
   * and `kept` what the device signed when it was accepted, kept whole for the export; `writer`:
   * the credential the call came with (compared with a reviewer's, never shown).
   */
  start(
    workflow: WorkflowRow,
    input: Tools.StartTaskInput,
    w: WriteScope,
    signed?: SignatureVerdict,
    kept?: AcceptedPayload,
    writer: string | null = null,
  ): StartTaskOutput {
    if (workflow.status !== "active") {
      throw new WaymarkError("CONFLICT", `workflow_id: workflow ${workflow.id} is already completed (${workflow.status})`);
    }
    if (this.totals.read().tasks >= LIMITS.TASKS_PER_WORKFLOW) {
      throw new WaymarkError("PAYLOAD_TOO_LARGE", `workflow_id: at most ${LIMITS.TASKS_PER_WORKFLOW} tasks per workflow`);
    }
    const ancestors = new Set<string>();
    if (input.parent_task_id !== undefined) {
      const parent = this.records.task(input.parent_task_id);
      if (!parent) throw noWorkflowOrTask("parent_task_id", input.parent_task_id);
      if (parent.status !== "in_progress") {
        throw new WaymarkError("CONFLICT", `parent_task_id: task ${parent.id} is already completed (${parent.status})`);
      }
      ancestors.add(parent.id);
      for (const id of this.records.window(parent, null).ancestors) ancestors.add(id);
    }
    const taskId = newTaskId(workflow.id);
    w.countBytes(this.records.insertTask(taskId, input, w.now, writer, signed ? startSignature(signed) : null, w.lastSeq()));
    this.totals.taskStarted();
    const payload = kept ? this.signedText(workflow.id, taskId, kept) : null;
    const seq = w.emitWithRow("task.started", taskId, this.records.written(taskId), signedInline(payload));
    if (payload !== null) w.countBytes(this.records.deviceSigned.store(seq, taskId, payload));
    const output: StartTaskOutput = {
      task_id: taskId,
      snapshot_id: snapshotId(input.snapshot, taskId),
      snapshot_type: input.snapshot?.type ?? "none",
      started_at: iso(w.now),
    };
    // No helper at all, or what the helper said about its snapshot (a reason it could not observe, other tasks on the working tree);
    // bounded like a task's warnings: the result is kept as the idempotency record.
    const warnings = boundWarnings(startWarnings(input.snapshot, ancestors));
    if (warnings.length > 0) output.warnings = warnings;
    return output;
  }

  /**
   * Completes an open task whose subtasks are all complete. The result is the task's view as
   * stored (its file lists bounded, LIMITS.VIEW_FILE_BYTES): an idempotent retry gets the same.
   * `elsewhere`: the tasks of other workflows its helper saw on the same working tree, with
   * their changes to the files both changed (read from their workflows before this write).
   */
  complete(
    task: TaskRow,
    input: Tools.CompleteTaskInput,
    w: WriteScope,
    elsewhere: readonly TaskElsewhere[] = [],
    signed?: SignatureVerdict,
    kept?: AcceptedPayload,
    writer: string | null = null,
  ): CompleteTaskOutput {
    if (task.status !== "in_progress") {
      throw new WaymarkError(
        "CONFLICT",
        `task_id: task ${task.id} was already completed (${task.status}) at ${task.completed_at === null ? "?" : iso(task.completed_at)}; retry with the same idempotency_key to get the first result`,
      );
    }
    // A task without subtasks (most) has none open: one statement asks both.
    const descendants = this.records.descendants(task.id);
    const openChildren = descendants.length === 0 ? [] : this.records.openChildren(task.id);
    if (openChildren.length > 0) {
      const names = openChildren.map((c) => `${c.id} (${c.name})`).join(", ");
      throw new WaymarkError("CONFLICT", `task_id: subtasks still open: ${names}; complete them first`);
    }
    // Provenance: the files are the device's when it signed both ends of the task; the usage when it signed the completion.
    const trust = signed ? trustOf(signed, this.records.startSignature(task)) : undefined;
    const attribution = this.attribute(task, input, w.now, descendants, elsewhere, trust);
    const duration = Math.max(0, Math.round((w.now - task.started_at) / 1000));
    const changes = input.changes ?? null;
    const usage = metricsProvenance(input.metrics, trust);
    const stored = this.records.completeTask(
      task,
      input,
      {
        now: w.now,
        duration,
        files: storedFiles(attribution.changes, attribution.files_changed, attribution.verification, attribution.lineRanges),
        metricsSource: usage?.source ?? null,
        priceTableDate: usage?.price_table_date ?? null,
        metricsDevice: usage?.device ?? null,
        endCommit: endCommit(changes),
        commands: observedCommands(changes),
        durability: durabilityReported(changes),
      },
      writer,
    );
    w.countBytes(stored.bytes);
    // Its part in the review counts, read once from the view every reader shows, kept with it.
    const { view, facts } = stored;
    const metrics = input.metrics;
    this.totals.taskCompleted({
      topLevel: task.parent_id === null,
      duration,
      newPaths: stored.newPaths,
      review: isReviewItem(input.status, facts),
      input_tokens: metrics?.input_tokens ?? 0,
      output_tokens: metrics?.output_tokens ?? 0,
      cost_usd: metrics?.cost_usd ?? 0,
    });
    const payload = kept ? this.signedText(this.records.identity()?.id ?? "", task.id, kept) : null;
    const seq = w.emitWithRow("task.completed", task.id, view, signedInline(payload));
    if (payload !== null) w.countBytes(this.records.deviceSigned.store(seq, task.id, payload));
    this.reportToEarlierTasks(task.id, attribution.verification.overlapping ?? [], w);
    const output: CompleteTaskOutput = {
      task_id: task.id,
      status: input.status,
      duration_seconds: duration,
      files_changed: view.files_changed as NonNullable<TaskView["files_changed"]>,
      verification: view.verification as NonNullable<TaskView["verification"]>,
    };
    // The usage as recorded, with its provenance (only when the call reported any).
    if (view.metrics) output.metrics = view.metrics;
    return output;
  }

  /** An accepted device-signed payload as it is kept (its canonical JSON), with the event that recorded it. */
  private signedText(workflowId: string, taskId: string, kept: AcceptedPayload): string {
    return deviceSignedText({ workflow_id: workflowId, task_id: taskId }, kept.message, kept.dataText, kept.signature);
  }

  /**
   * A task of this workflow that completed earlier overlapped with a task of another workflow on
   * the same working tree that completed since (`overlaps` name that task and its workflow): they
   * join its record with a warning; a report already recorded changes nothing. A task still open
   * learns of it from its own helper when it completes.
   */
  overlapsFromElsewhere(task: TaskRow, overlaps: readonly Overlap[], w: WriteScope): void {
    const [first] = overlaps;
    if (task.status === "in_progress" || first === undefined) return;
    this.mirror(
      task.id,
      first.task_id,
      overlaps,
      w,
      `in workflow ${first.workflow_id ?? "?"} on the same working tree, which completed later`,
    );
  }

  private attribute(
    task: TaskRow,
    input: Tools.CompleteTaskInput,
    now: number,
    descendants: readonly string[],
    elsewhere: readonly TaskElsewhere[],
    trust?: Trust,
  ) {
    try {
      return attributeTask({
        snapshot: this.records.storedSnapshot(task),
        changes: input.changes ?? null,
        areas: JSON.parse(task.areas) as string[],
        task: this.records.window(task, now),
        concurrent: this.records.completedDuring(task, new Set(descendants)),
        descendants,
        elsewhere,
        manualReview: { needed: input.outcome.manual_review_needed === true, reason: input.outcome.manual_review_reason },
        trust,
      });
    } catch (error) {
      if (error instanceof AttributionInputError) throw new WaymarkError("INPUT_VALIDATION_ERROR", error.message);
      throw error;
    }
  }

  /** Each earlier task of this workflow this one overlapped with gets the mirror entries and a task.updated event. */
  private reportToEarlierTasks(taskId: string, overlaps: readonly Overlap[], w: WriteScope): void {
    const byTask = new Map<string, Overlap[]>();
    for (const overlap of overlaps) {
      if (overlap.workflow_id !== undefined) continue;
      const mirrored = byTask.get(overlap.task_id) ?? [];
      mirrored.push({ path: overlap.path, task_id: taskId, same_change: overlap.same_change });
      byTask.set(overlap.task_id, mirrored);
    }
    for (const [otherId, mirrored] of byTask)
      this.mirror(otherId, taskId, mirrored, w, "which was open at the same time and completed later");
  }

  private mirror(taskId: string, laterId: string, overlaps: readonly Overlap[], w: WriteScope, how: string): void {
    const task = this.records.task(taskId);
    if (!task?.verification || overlaps.length === 0) return;
    const { added, bytes } = this.records.files.addOverlaps(taskId, overlaps);
    if (added === 0) return;
    w.countBytes(bytes);
    const current = JSON.parse(task.verification) as { warnings: string[] };
    this.records.setWarnings(taskId, withWarning(current.warnings, `${overlaps.length} file(s) also changed by task ${laterId}, ${how}.`));
    w.emit("task.updated", taskId, this.records.written(taskId));
  }
}

/** What start_task reports as the snapshot's id: the start commit, or a marker of the snapshot kind. */
function snapshotId(snapshot: Snapshot | undefined, taskId: string): string {
  if (snapshot?.type === "git") return snapshot.head ?? `git-empty:${taskId}`;
  if (snapshot?.type === "checksum") return `checksum:${snapshot.digest.slice(0, 16)}`;
  return `none:${taskId}`;
}
