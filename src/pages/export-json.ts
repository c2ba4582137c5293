/**
 * @module pages/export-json
 * The JSON export, streamed: the same document the whole view gave (`JSON.stringify(view, null,
 * 2)` of workflow, tasks, decisions, issues, milestones, totals, last_seq, chain, events and
 * feedback, byte for byte), written one bounded page at a time from the paged reads, so a
 * workflow of 5,000 tasks and 100,000 events never sits in the Worker's memory. The events stop
 * at the chain head the head read gave, so `waymark verify` checks the file against it.
 */
import type { Reader, WorkflowHead } from "../domain/view";
import type { WorkflowObject } from "../workflow/workflow-object";
import { eventRange, recordRows } from "./paged-reads";

/** A value as `JSON.stringify(…, null, 2)` writes it `depth` levels down. */
const nested = (value: unknown, depth: number) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${"  ".repeat(depth)}`);

/** `"key": [ … ]` inside the top-level object, from rows that arrive one at a time. */
async function* arrayMember(key: string, rows: AsyncIterable<unknown>): AsyncGenerator<string> {
  let first = true;
  for await (const row of rows) {
    yield `${first ? `,\n  "${key}": [\n    ` : ",\n    "}${nested(row, 2)}`;
    first = false;
  }
  yield first ? `,\n  "${key}": []` : "\n  ]";
}

export async function* jsonExport(stub: DurableObjectStub<WorkflowObject>, reader: Reader, head: WorkflowHead): AsyncGenerator<string> {
  yield `{\n  "workflow": ${nested(head.workflow, 1)}`;
  for (const kind of ["tasks", "decisions", "issues", "milestones"] as const) yield* arrayMember(kind, recordRows(stub, reader, kind));
  yield `,\n  "totals": ${nested(head.totals, 1)},\n  "last_seq": ${head.last_seq},\n  "chain": ${nested(head.chain, 1)}`;
  yield* arrayMember("events", eventRange(stub, reader, 0, head.chain.events));
  if (head.feedback) yield `,\n  "feedback": ${nested(head.feedback, 1)}`;
  yield "\n}";
}
