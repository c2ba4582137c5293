/**
 * @module pages/export-json
 * The JSON export, streamed one bounded page at a time from the paged reads, so a workflow of
 * 5,000 tasks and 100,000 events never sits in the Worker's memory: `$schema` (the JSON Schema
 * it follows, docs/schemas/export-v1.json, generated from @waymark/protocol/views/export), workflow, tasks, decisions, issues, milestones,
 * totals, last_seq, chain, events, feedback, review (what needs a reviewer: the page's counts), each as `JSON.stringify(…, null, 2)` writes it, then
 * device_signed (each payload an approved device signed, as kept: @waymark/protocol/device-signature)
 * and last the deployment's signed statement (@waymark/protocol/statement): the workflow, the
 * events and the head they end on, the repository, the account (a digest) and the origin, the
 * time, and a digest of every other member, computed as the members stream. The export is the complete record: a task whose view names only
 * its first files (`files_changed.more`, `verification.more`) is written with every list read from
 * its file pages, as if it had been one value.
 *
 * workflow, totals, last_seq, chain and feedback are the head read's, as of event chain.events.
 * The records are read after it, a page at a time, so a write landing meanwhile shows in the
 * pages read after it: the events therefore run to the log's end as read after the last record
 * page, so they cover every state a record shows (`waymark verify` accepts each record in any
 * state between chain.events and the last event, and everything else exactly as of chain.events).
 */
import { EXPORT_SCHEMA_PATH } from "@waymark/protocol/export-members";
import {
  type ContentDigests,
  type ExportMember,
  MemberHasher,
  memberDigest,
  type SignedStatement,
  STATEMENT_TYPE,
  STATEMENT_VERSION,
  type StatementPayload,
} from "@waymark/protocol/statement";
import type { Reader, TaskView, WorkflowHead } from "../domain/view";
import { signStatement } from "../signing";
import type { FileList } from "../workflow/task-files";
import type { WorkflowObject } from "../workflow/workflow-object";
import { eventsToEnd, fileItems, PagedReadError, recordRows } from "./paged-reads";

type Stub = DurableObjectStub<WorkflowObject>;

export { EXPORT_SCHEMA_PATH } from "@waymark/protocol/export-members";

/** How an export is signed and which schema it names: the deployment's, for the endpoint (`origin`) that serves it. */
export interface ExportSigning {
  origin: string;
  schemaUrl: string;
  sign(payload: StatementPayload): Promise<SignedStatement>;
}

export function exportSigning(env: Env, origin: string): ExportSigning {
  return { origin, schemaUrl: `${origin}${EXPORT_SCHEMA_PATH}`, sign: (payload) => signStatement(env, payload) };
}

/** A value as `JSON.stringify(…, null, 2)` writes it `depth` levels down. */
const nested = (value: unknown, depth: number) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${"  ".repeat(depth)}`);

/** One piece of a member as it streams: its text in the file, and the same part as compact JSON (what the member's digest covers). */
interface Piece {
  text: string;
  json: string;
}

/** `"key": value` inside the top-level object, its digest kept in `content`. */
function valueMember(content: ContentDigests, key: ExportMember, value: unknown): string {
  content[key] = memberDigest(value);
  return `${key === "$schema" ? "{\n" : ",\n"}  "${key}": ${nested(value, 1)}`;
}

/** `"key": [ … ]` inside the top-level object, from rows that arrive one at a time; its digest as they pass. */
async function* arrayMember<T>(
  content: ContentDigests,
  key: ExportMember,
  rows: AsyncIterable<T>,
  write: (row: T) => AsyncIterable<Piece>,
): AsyncGenerator<string> {
  const digest = new MemberHasher();
  digest.update("[");
  let first = true;
  for await (const row of rows) {
    yield first ? `,\n  "${key}": [\n    ` : ",\n    ";
    if (!first) digest.update(",");
    for await (const piece of write(row)) {
      digest.update(piece.json);
      yield piece.text;
    }
    first = false;
  }
  digest.update("]");
  content[key] = digest.digest();
  yield first ? `,\n  "${key}": []` : "\n  ]";
}

async function* whole(row: unknown): AsyncGenerator<Piece> {
  yield { text: nested(row, 2), json: JSON.stringify(row) };
}

/**
 * Where a list goes in a task written from its pages: a string no list item can hold (paths and
 * agent text never contain NUL), so the skeleton's JSON shows exactly where each list starts,
 * indented (the file) and compact (the digest), in the same order.
 */
const MARK = "\u0000list:";
const MARKED_LIST = /\[\n( *)"\\u0000list:(\w+)"\n *\]/g;
const MARKED_COMPACT = /\["\\u0000list:\w+"\]/g;

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
  return async function* write(task: TaskView): AsyncGenerator<Piece> {
    if (task.files_changed?.more === undefined && task.verification?.more === undefined) {
      yield* whole(task);
      return;
    }
    const shape = skeleton(task);
    const text = nested(shape, 2);
    const json = JSON.stringify(shape);
    const compact = [...json.matchAll(MARKED_COMPACT)];
    let from = 0;
    let jsonFrom = 0;
    for (const [index, match] of [...text.matchAll(MARKED_LIST)].entries()) {
      const [found, indent = "", list] = match;
      const at = compact[index];
      yield { text: text.slice(from, match.index), json: json.slice(jsonFrom, at?.index) };
      const depth = indent.length / 2;
      let first = true;
      for await (const item of fileItems(stub, reader, task.id, list as FileList)) {
        yield { text: `${first ? "[\n" : ",\n"}${indent}${nested(item, depth)}`, json: `${first ? "[" : ","}${JSON.stringify(item)}` };
        first = false;
      }
      yield { text: first ? "[]" : `\n${"  ".repeat(depth - 1)}]`, json: first ? "[]" : "]" };
      from = (match.index ?? 0) + found.length;
      jsonFrom = (at?.index ?? 0) + (at?.[0].length ?? 0);
    }
    yield { text: text.slice(from), json: json.slice(jsonFrom) };
  };
}

/**
 * `"device_signed": [ … ]`: the device-signed payloads kept by the events the export carries
 * (through `throughSeq`), each on one line as the canonical JSON the edge stored, which is also
 * its compact JSON (the member's digest). Sets `binding.account`: whose record the object says it is.
 */
async function* deviceSignedMember(
  content: ContentDigests,
  stub: Stub,
  reader: Reader,
  throughSeq: number,
  binding: { account: string },
): AsyncGenerator<string> {
  const digest = new MemberHasher();
  digest.update("[");
  let items = 0;
  let after = 0;
  for (;;) {
    const page = await stub.readDeviceSigned(reader, after, throughSeq);
    if (!page.ok) throw new PagedReadError(page.code, page.message);
    binding.account = page.value.account;
    for (const part of page.value.parts) {
      if (part.first) {
        const separator = items === 0 ? "" : ",";
        yield items === 0 ? `,\n  "device_signed": [\n    ` : ",\n    ";
        digest.update(separator);
        items++;
      }
      digest.update(part.text);
      yield part.text;
    }
    if (page.value.next === null) break;
    after = page.value.next;
  }
  digest.update("]");
  content.device_signed = digest.digest();
  yield items === 0 ? `,\n  "device_signed": []` : "\n  ]";
}

export async function* jsonExport(stub: Stub, reader: Reader, head: WorkflowHead, signing: ExportSigning): AsyncGenerator<string> {
  const content: ContentDigests = {};
  yield valueMember(content, "$schema", signing.schemaUrl);
  yield valueMember(content, "workflow", head.workflow);
  yield* arrayMember(content, "tasks", recordRows<TaskView>(stub, reader, "tasks"), taskWriter(stub, reader));
  for (const kind of ["decisions", "issues", "milestones"] as const)
    yield* arrayMember(content, kind, recordRows(stub, reader, kind), whole);
  yield valueMember(content, "totals", head.totals);
  yield valueMember(content, "last_seq", head.last_seq);
  yield valueMember(content, "chain", head.chain);
  const end = { events: head.chain.events, head: head.chain.head };
  const events = eventsToEnd(stub, reader);
  yield* arrayMember(content, "events", events, (event) => {
    end.events = event.seq;
    end.head = event.hash ?? "";
    return whole(event);
  });
  if (head.feedback) yield valueMember(content, "feedback", head.feedback);
  // What needs a reviewer as of chain.events: the numbers the page's head and the Markdown export show.
  yield valueMember(content, "review", head.review);
  const binding = { account: "" };
  yield* deviceSignedMember(content, stub, reader, end.events, binding);
  const statement = await signing.sign({
    type: STATEMENT_TYPE,
    version: STATEMENT_VERSION,
    workflow_id: head.workflow.id,
    events: end.events,
    head: end.head,
    repository_fingerprint: head.workflow.repository?.fingerprint ?? null,
    account: binding.account,
    origin: signing.origin,
    issued_at: new Date().toISOString(),
    content,
  });
  yield `,\n  "statement": ${nested(statement, 1)}\n}`;
}
