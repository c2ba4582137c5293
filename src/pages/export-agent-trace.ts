/**
 * @module pages/export-agent-trace
 * The Agent Trace export (`export.agent-trace.json`): a JSON array with one Agent Trace record per
 * task that committed work (@waymark/protocol/agent-trace says what a record holds), streamed from
 * the paged reads: each task's line ranges are read a page at a time from its file rows, so a
 * workflow of any size never sits in the Worker's memory. Tasks without commits, or recorded
 * before line attribution, have no record.
 */
import { type TraceFile, type TraceTask, traceRecord } from "@waymark/protocol/agent-trace";
import type { Reader, TaskView, WorkflowHead } from "../domain/view";
import type { FileRangesItem } from "../workflow/task-files";
import type { WorkflowObject } from "../workflow/workflow-object";
import { fileItems, recordRows } from "./paged-reads";

type Stub = DurableObjectStub<WorkflowObject>;

/** The record's task, when it committed work: an end commit and commits made during it. */
function tracedTask(task: TaskView, workflowId: string, pageUrl: string | null): TraceTask | null {
  const revision = task.repository?.end_commit;
  const files = task.files_changed;
  if (!revision || !/^[0-9a-f]{40}$|^[0-9a-f]{64}$/.test(revision) || !files?.commits || files.commits.length === 0 || !task.completed_at)
    return null;
  const traced: TraceTask = {
    workflow_id: workflowId,
    task_id: task.id,
    name: task.name,
    completed_at: task.completed_at,
    start_revision: task.repository?.start_commit ?? null,
    revision,
    commits: files.commits.map((commit) => commit.sha),
    model: task.metrics?.model ?? null,
  };
  const authors = files.line_authors;
  if (authors?.tool) traced.tool = authors.tool;
  if (authors?.not_observed_reason) traced.not_observed_reason = authors.not_observed_reason;
  if (pageUrl) traced.url = `${pageUrl}#${encodeURIComponent(task.id)}`;
  return traced;
}

/** Every path the task left uncommitted (its view names the first files only when it changed many). */
async function uncommittedPaths(stub: Stub, reader: Reader, task: TaskView): Promise<Set<string>> {
  const files = task.files_changed;
  if (!files) return new Set();
  if (files.more === undefined) return new Set(files.uncommitted);
  const paths = new Set<string>();
  for await (const item of fileItems(stub, reader, task.id, "uncommitted")) if (typeof item === "string") paths.add(item);
  return paths;
}

/** `pageUrl`: the workflow's owner page the records link each task to (never a share link: records get published); null: none. */
export async function* agentTraceExport(stub: Stub, reader: Reader, head: WorkflowHead, pageUrl: string | null): AsyncGenerator<string> {
  let first = true;
  for await (const task of recordRows<TaskView>(stub, reader, "tasks")) {
    const traced = tracedTask(task, head.workflow.id, pageUrl);
    if (!traced || task.files_changed?.line_authors === undefined) continue;
    const files: TraceFile[] = [];
    for await (const item of fileItems(stub, reader, task.id, "line_ranges")) files.push(item as FileRangesItem);
    const record = traceRecord(traced, files, await uncommittedPaths(stub, reader, task));
    yield `${first ? "[\n  " : ",\n  "}${JSON.stringify(record, null, 2).replace(/\n/g, "\n  ")}`;
    first = false;
  }
  yield first ? "[]\n" : "\n]\n";
}
