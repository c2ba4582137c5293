/**
 * @module workflow/ownership
 * Whose workflow this is, asked one way, and the one "not found". Every RPC method, the paged
 * reader, the live feed and the asks between workflows check the caller's account here, and
 * every miss answers NOT_FOUND through `notFoundError`: an id of another account gets the same
 * answer as an unknown one, so ids reveal nothing.
 */
import { WaymarkError } from "../errors";
import { workflowOfTask } from "../ids";
import type { TaskRow, WorkflowRow } from "./records";

/** The workflow's id and owning account: written once, when it starts. */
export type Identity = { id: string; account: string };

/** What ownership reads of the records: the identity (no query once known), the rows behind it. */
export interface OwnedRecords {
  identity(): Identity | null;
  workflow(): WorkflowRow | null;
  task(taskId: string): TaskRow | null;
}

/** The workflow object's one NOT_FOUND: `field` names the input, `what` the thing asked for. */
export function notFoundError(field: string, what: string): WaymarkError {
  return new WaymarkError("NOT_FOUND", `${field}: no ${what}`);
}

/** NOT_FOUND for a workflow or task id (the same words for an unknown id and another account's). */
export function noWorkflowOrTask(field: string, id: string): WaymarkError {
  return notFoundError(field, `workflow or task ${id} in this account`);
}

export class Ownership {
  constructor(private readonly records: OwnedRecords) {}

  /**
   * The one check: this workflow's identity when `account` owns it and `id`, when given, names
   * it or one of its tasks (a task id carries its workflow's: no query once the workflow is known);
   * else null.
   */
  of(account: string, id?: string): Identity | null {
    const own = this.records.identity();
    if (!own || own.account !== account) return null;
    return id === undefined || id === own.id || workflowOfTask(id) === own.id ? own : null;
  }

  /** What a write's authorize step asks: the workflow's row when `account` owns it and `id` names it; else NOT_FOUND naming `field`. */
  workflow(account: string, field: string, id: string): WorkflowRow {
    const workflow = this.of(account, id) ? this.records.workflow() : null;
    if (!workflow) throw noWorkflowOrTask(field, id);
    return workflow;
  }

  /** One of this workflow's tasks, when `account` owns it; else NOT_FOUND. */
  task(account: string, taskId: string): TaskRow {
    const task = this.of(account, taskId) ? this.records.task(taskId) : null;
    if (!task) throw noWorkflowOrTask("task_id", taskId);
    return task;
  }
}
