/**
 * @module pages/export-json
 * The JSON export, streamed: the same document the whole view gave (`JSON.stringify(view, null,
 * 2)` of workflow, tasks, decisions, issues, milestones, totals, last_seq, chain, events and
 * feedback, byte for byte), written one bounded page at a time from the paged reads, so a
 * workflow of 5,000 tasks and 100,000 events never sits in the Worker's memory. The events stop
 * at the chain head the head read gave, so `waymark verify` checks the file against it.
 *
 * The export is the complete record: a task whose view names only its first files
 * (`files_changed.more`, `verification.more`) is written with every list read from its file
 * pages, as if it had been one value.
 */
import type { Reader, TaskView, WorkflowHead } from "../domain/view";
import type { FileList } from "../workflow/task-files";
import type { WorkflowObject } from "../workflow/workflow-object";
import { eventRange, fileItems, recordRows } from "./paged-reads";

type Stub = DurableObjectStub<WorkflowObject>;

/** A value as `JSON.stringify(…, null, 2)` writes it `depth` levels down. */
const nested = (value: unknown, depth: number) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${"  ".repeat(depth)}`);

/** `"key": [ … ]` inside the top-level object, from rows that arrive one at a time. */
async function* arrayMember(
  key: string,
  rows: AsyncIterable<unknown>,
  write: (row: unknown) => AsyncIterable<string>,
): AsyncGenerator<string> {
  let first = true;
  for await (const row of rows) {
    yield first ? `,\n  "${key}": [\n    ` : ",\n    ";
    yield* write(row);
    first = false;
  }
  yield first ? `,\n  "${key}": []` : "\n  ]";
}

async function* whole(row: unknown): AsyncGenerator<string> {
  yield nested(row, 2);
}

/**
 * Where a list goes in a task written from its pages: a string no list item can hold (paths and
 * agent text never contain NUL), so the skeleton's JSON shows exactly where each list starts.
 */
const MARK = "\u0000list:";
const MARKED_LIST = /\[\n( *)"\\u0000list:(\w+)"\n *\]/g;

/** The task with each list that has pages replaced by its mark, and without the `more` counts. */
function skeleton(task: TaskView): TaskView {
  const mark = (list: FileList) => [`${MARK}${list}`];
  const files = task.files_changed;
  const verification = task.verification;
  const out: TaskView = { ...task };
  if (files) {
    const { more: _more, ...rest } = files;
    out.files_changed = { ...rest, added: mark("added"), modified: mark("modified"), deleted: mark("deleted") };
    out.files_changed.renamed = mark("renamed") as unknown as typeof files.renamed;
    out.files_changed.uncommitted = mark("uncommitted");
    if (files.lines) out.files_changed.lines = mark("lines") as unknown as typeof files.lines;
    if (files.not_by_agent_tools) out.files_changed.not_by_agent_tools = mark("not_by_agent_tools");
  }
  if (verification) {
    const { more: _more, ...rest } = verification;
    out.verification = { ...rest, unexpected_files: mark("unexpected_files") };
    if (verification.overlapping) out.verification.overlapping = mark("overlapping") as unknown as typeof verification.overlapping;
  }
  return out;
}

/** A task written whole: its lists from the file pages when its view names only part of them. */
function taskWriter(stub: Stub, reader: Reader) {
  return async function* write(row: unknown): AsyncGenerator<string> {
    const task = row as TaskView;
    if (task.files_changed?.more === undefined && task.verification?.more === undefined) {
      yield nested(task, 2);
      return;
    }
    const text = nested(skeleton(task), 2);
    let from = 0;
    for (const match of text.matchAll(MARKED_LIST)) {
      const [found, indent = "", list] = match;
      yield text.slice(from, match.index);
      const depth = indent.length / 2;
      let first = true;
      for await (const item of fileItems(stub, reader, task.id, list as FileList)) {
        yield `${first ? "[\n" : ",\n"}${indent}${nested(item, depth)}`;
        first = false;
      }
      yield first ? "[]" : `\n${"  ".repeat(depth - 1)}]`;
      from = (match.index ?? 0) + found.length;
    }
    yield text.slice(from);
  };
}

export async function* jsonExport(stub: Stub, reader: Reader, head: WorkflowHead): AsyncGenerator<string> {
  yield `{\n  "workflow": ${nested(head.workflow, 1)}`;
  yield* arrayMember("tasks", recordRows(stub, reader, "tasks"), taskWriter(stub, reader));
  for (const kind of ["decisions", "issues", "milestones"] as const) yield* arrayMember(kind, recordRows(stub, reader, kind), whole);
  yield `,\n  "totals": ${nested(head.totals, 1)},\n  "last_seq": ${head.last_seq},\n  "chain": ${nested(head.chain, 1)}`;
  yield* arrayMember("events", eventRange(stub, reader, 0, head.chain.events), whole);
  if (head.feedback) yield `,\n  "feedback": ${nested(head.feedback, 1)}`;
  yield "\n}";
}
