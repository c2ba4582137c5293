/**
 * @module pages/export-json
 * The JSON export, streamed one bounded page at a time from the paged reads, so a workflow of
 * 5,000 tasks and 100,000 events never sits in the Worker's memory: `$schema` (the JSON Schema
 * it follows, docs/schemas/export-v1.json), workflow, tasks, decisions, issues, milestones,
 * totals, last_seq, chain, events, feedback, each as `JSON.stringify(…, null, 2)` writes it, and
 * last the deployment's signed statement (@waymark/protocol/statement): the workflow, the events
 * and the head they end on, the repository, the time, and a digest of every other member,
 * computed as the members stream.
 *
 * workflow, totals, last_seq, chain and feedback are the head read's, as of event chain.events.
 * The records are read after it, a page at a time, so a write landing meanwhile shows in the
 * pages read after it: the events therefore run to the log's end as read after the last record
 * page, so they cover every state a record shows (`waymark verify` accepts each record in any
 * state between chain.events and the last event, and everything else exactly as of chain.events).
 */
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
import type { Reader, WorkflowHead } from "../domain/view";
import { signStatement } from "../signing";
import type { WorkflowObject } from "../workflow/object";
import { eventsToEnd, recordRows } from "../workflow/paged";

/** Where every endpoint serves the export's JSON Schema (its version is in the name). */
export const EXPORT_SCHEMA_PATH = "/schemas/export-v1.json";

/** How an export is signed and which schema it names: the deployment's, for the endpoint that serves it. */
export interface ExportSigning {
  schemaUrl: string;
  sign(payload: StatementPayload): Promise<SignedStatement>;
}

export function exportSigning(env: Env, origin: string): ExportSigning {
  return { schemaUrl: `${origin}${EXPORT_SCHEMA_PATH}`, sign: (payload) => signStatement(env, payload) };
}

/** A value as `JSON.stringify(…, null, 2)` writes it `depth` levels down. */
const nested = (value: unknown, depth: number) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${"  ".repeat(depth)}`);

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
  seen: (row: T) => void = () => {},
): AsyncGenerator<string> {
  const digest = new MemberHasher();
  digest.update("[");
  let first = true;
  for await (const row of rows) {
    yield `${first ? `,\n  "${key}": [\n    ` : ",\n    "}${nested(row, 2)}`;
    digest.update(`${first ? "" : ","}${JSON.stringify(row)}`);
    seen(row);
    first = false;
  }
  digest.update("]");
  content[key] = digest.digest();
  yield first ? `,\n  "${key}": []` : "\n  ]";
}

export async function* jsonExport(
  stub: DurableObjectStub<WorkflowObject>,
  reader: Reader,
  head: WorkflowHead,
  signing: ExportSigning,
): AsyncGenerator<string> {
  const content: ContentDigests = {};
  yield valueMember(content, "$schema", signing.schemaUrl);
  yield valueMember(content, "workflow", head.workflow);
  for (const kind of ["tasks", "decisions", "issues", "milestones"] as const)
    yield* arrayMember(content, kind, recordRows(stub, reader, kind));
  yield valueMember(content, "totals", head.totals);
  yield valueMember(content, "last_seq", head.last_seq);
  yield valueMember(content, "chain", head.chain);
  const end = { events: head.chain.events, head: head.chain.head };
  yield* arrayMember(content, "events", eventsToEnd(stub, reader), (event) => {
    end.events = event.seq;
    end.head = event.hash ?? "";
  });
  if (head.feedback) yield valueMember(content, "feedback", head.feedback);
  const statement = await signing.sign({
    type: STATEMENT_TYPE,
    version: STATEMENT_VERSION,
    workflow_id: head.workflow.id,
    events: end.events,
    head: end.head,
    repository_fingerprint: head.workflow.repository?.fingerprint ?? null,
    issued_at: new Date().toISOString(),
    content,
  });
  yield `,\n  "statement": ${nested(statement, 1)}\n}`;
}
