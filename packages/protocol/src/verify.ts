/**
 * @module verify
 * The offline check of a workflow's JSON export, what `waymark verify` runs. Three checks, each
 * reported with what failed:
 * - the chain: every event's hash covers the one before and the event's canonical bytes
 *   (@waymark/protocol/chain), and `chain` names the link the export was read at;
 * - the statement (@waymark/protocol/statement): signed for this workflow, for exactly these
 *   events and the head they end on, for this repository, and for the content of every other
 *   member; whose record it is (the account and the deployment's origin, which the caller may
 *   require); and, given the deployment's public keys, signed by one of them within its period;
 * - the content: workflow, tasks, decisions, issues, milestones, totals, last_seq, chain,
 *   feedback and the review counts rebuilt from the events (./export-rebuild) and compared field by field
 *   (./export-diff);
 * - the device evidence (./device-evidence): every figure labelled computed and signed checked
 *   against the device-signed payloads the export carries and the allowed signers given.
 * What a pass does not cover is listed with it. Pure: the caller reads the file, the keys and the
 * allowed signers (strictly: ./strict-json).
 */
import type { AllowedSigner } from "./allowed-signers";
import { type ChainedEvent, genesisHash, walkChain } from "./chain";
import { checkDeviceEvidence, type DeviceEvidence } from "./device-evidence";
import { diffTask, diffValues, show } from "./export-diff";
import { RECORD_KINDS, type RecordKind } from "./export-members";
import { changedPaths, headerOf, type Json, type JsonObject, type LoggedEvent, rebuild, reviewOf, totalsOf } from "./export-rebuild";
import {
  accountDigest,
  EXPORT_MEMBERS,
  memberDigest,
  type PublishedKey,
  type SignedStatement,
  STATEMENT_TYPE,
  STATEMENT_VERSIONS_READ,
  verifyStatement,
} from "./statement";

/** Problems listed at most; the count says how many more were found. */
const PROBLEMS_SHOWN = 100;

export type SignatureCheck =
  | {
      status: "ok";
      kid: string;
      key_status: PublishedKey["status"];
      issued_at: string;
      not_before: string | null;
      not_after: string | null;
    }
  | { status: "failed"; kid: string | null }
  | { status: "not_checked"; kid: string | null }
  | { status: "missing" };

export interface ExportCheck {
  workflow: { id: string; name: string };
  /** Events the export carries, and the chain's head after the last one (null: the chain is broken). */
  events: number;
  head: string | null;
  /** The event the export's workflow, totals and feedback were read at (its chain.events). */
  read_at: number | null;
  signature: SignatureCheck;
  /** Everything found wrong, each `where: what`; empty when the export passed. */
  problems: string[];
  /** Problems found beyond those listed. */
  more_problems: number;
  /** What the checks do not cover for this export, besides what no export check can (see docs/verification.md). */
  not_covered: string[];
  counts: Record<RecordKind | "feedback", number>;
  /**
   * Whose record the statement says this is (null: its version names none): the account as a
   * digest (@waymark/protocol/statement accountDigest) and the deployment's origin.
   */
  binding: { account: string | null; origin: string | null };
  /**
   * Where the record says its figures came from, in the three-way wording, each label with how
   * many tasks; a figure labelled computed and signed is checked against the device-signed
   * payloads and the allowed signers (./device-evidence), and its label says whether it was.
   */
  provenance: DeviceEvidence;
}

/** What the caller trusts and requires. */
export interface VerifyOptions {
  /** The deployment's published keys (null: the signature is not checked, and the report says so). */
  keys: readonly PublishedKey[] | null;
  /** The allowed signers (null: no device signature is checked, and the report says so). */
  signers: readonly AllowedSigner[] | null;
  /** Required: the account whose record it must be (its name, or its `sha256:` digest). */
  account?: string;
  /** Required: the origin of the deployment that must have issued it. */
  origin?: string;
}

export type NotAnExport = { not_an_export: string };

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);

class Problems {
  readonly shown: string[] = [];
  more = 0;
  add(line: string): void {
    if (this.shown.length < PROBLEMS_SHOWN) this.shown.push(line);
    else this.more++;
  }
  addAll(lines: readonly string[]): void {
    for (const line of lines) this.add(line);
  }
}

/** The event's fields a chain and a rebuild need, or why it is not an event. */
function eventProblem(event: Json, index: number): string | null {
  if (!isObject(event)) return `events[${index}]: not an event object`;
  const ok =
    typeof event.seq === "number" &&
    typeof event.at === "string" &&
    typeof event.type === "string" &&
    (event.task_id === null || typeof event.task_id === "string") &&
    isObject(event.data) &&
    typeof event.hash === "string";
  return ok ? null : `events[${index}]: an event needs seq, at, type, task_id, data (an object) and hash`;
}

/** Checks a parsed JSON export with what `options` trusts and requires. */
export async function checkExport(document: unknown, options: VerifyOptions): Promise<ExportCheck | NotAnExport> {
  if (!isObject(document)) return { not_an_export: "not a Waymark JSON export: the file is not a JSON object" };
  const { workflow, events, chain } = document;
  if (!isObject(workflow) || typeof workflow.id !== "string" || !Array.isArray(events) || !isObject(chain)) {
    return {
      not_an_export: "not a Waymark JSON export: it needs workflow.id, chain and events (download it from the page's JSON link)",
    };
  }
  const id = workflow.id;
  const problems = new Problems();
  const check: ExportCheck = {
    workflow: { id, name: typeof workflow.name === "string" ? workflow.name : "" },
    events: events.length,
    head: null,
    read_at: null,
    signature: { status: "missing" },
    problems: problems.shown,
    more_problems: 0,
    not_covered: [],
    counts: { tasks: 0, decisions: 0, issues: 0, milestones: 0, feedback: 0 },
    binding: { account: null, origin: null },
    provenance: { status: "none", files: {}, usage: {}, payloads: 0 },
  };
  const malformed = events.map(eventProblem).find((problem) => problem !== null);
  let links: string[] | null = null;
  if (malformed) problems.add(malformed);
  else {
    const walk = walkChain(id, events as unknown as ChainedEvent[]);
    if (walk.ok) links = walk.links;
    else problems.add(`events: ${walk.problem}`);
  }
  const head = links ? (links.at(-1) ?? genesisHash(id)) : null;
  check.head = head;
  const readAt = checkChainMember(document, id, links, problems);
  check.read_at = readAt;
  check.signature = checkStatement(document, id, events.length, links, options.keys, problems);
  check.binding = checkBinding(document, options, problems);
  if (links && readAt !== null) checkContent(document, events as unknown as LoggedEvent[], readAt, problems, check);
  const found: string[] = [];
  check.provenance = await checkDeviceEvidence(document, id, options.signers, found);
  problems.addAll(found);
  check.more_problems = problems.more;
  return check;
}

/** Whose record the statement names, held to what the caller requires. */
function checkBinding(document: JsonObject, options: VerifyOptions, problems: Problems): ExportCheck["binding"] {
  const payload = isObject(document.statement) && isObject(document.statement.payload) ? document.statement.payload : {};
  const account = typeof payload.account === "string" ? payload.account : null;
  const origin = typeof payload.origin === "string" ? payload.origin : null;
  if (options.account !== undefined) {
    const wanted = options.account.startsWith("sha256:") ? options.account : accountDigest(options.account);
    if (account === null) problems.add(`statement: names no account (version ${show(payload.version)}), so --account cannot be checked`);
    else if (account !== wanted) {
      problems.add(`statement: the record of account ${account}, not of --account ${options.account} (${wanted}): it is another account's`);
    }
  }
  if (options.origin !== undefined) {
    const wanted = URL.canParse(options.origin) ? new URL(options.origin).origin : options.origin;
    if (origin === null) problems.add(`statement: names no origin (version ${show(payload.version)}), so --origin cannot be checked`);
    else if (origin !== wanted) problems.add(`statement: issued by ${origin}, not by --origin ${wanted}`);
  }
  return { account, origin };
}

/** `chain` and `last_seq`: the link of the log the export's workflow, totals and feedback were read at. Returns that event (H). */
function checkChainMember(document: JsonObject, id: string, links: string[] | null, problems: Problems): number | null {
  const chain = document.chain as JsonObject;
  const at = chain.events;
  if (typeof at !== "number" || !Number.isInteger(at) || at < 0) {
    problems.add(`chain.events: ${show(at)} is not a count of events`);
    return null;
  }
  if (links === null) return at;
  if (at > links.length) {
    problems.add(`chain: the export was read at event ${at}, but carries only ${links.length} events: events were removed from its end`);
    return null;
  }
  const expected: JsonObject = {
    algorithm: "sha256",
    genesis: genesisHash(id),
    head: at === 0 ? genesisHash(id) : (links[at - 1] ?? ""),
    events: at,
  };
  const out: string[] = [];
  diffValues("chain", chain, expected, out);
  problems.addAll(out.map((line) => line.replace(/its events say/, "its events give")));
  if (document.last_seq !== at) problems.add(`last_seq: export says ${show(document.last_seq)}, its chain says ${at}`);
  return at;
}

const STATEMENT_MEMBERS = new Set<string>(EXPORT_MEMBERS);

/** The signed statement: what it was signed for, what it covers, and (with keys) who signed it. */
function checkStatement(
  document: JsonObject,
  id: string,
  eventCount: number,
  links: string[] | null,
  keys: readonly PublishedKey[] | null,
  problems: Problems,
): SignatureCheck {
  const statement = document.statement;
  if (statement === undefined) {
    problems.add("statement: missing: the export is not signed, so nothing shows this deployment wrote it");
    return { status: "missing" };
  }
  const payload = isObject(statement) ? statement.payload : undefined;
  if (!isObject(statement) || !isObject(payload) || typeof statement.kid !== "string" || typeof statement.signature !== "string") {
    problems.add("statement: not a signed statement (it needs payload, alg, kid and signature)");
    return { status: "failed", kid: null };
  }
  const kid = statement.kid;
  if (
    payload.type !== STATEMENT_TYPE ||
    typeof payload.version !== "number" ||
    !(STATEMENT_VERSIONS_READ as readonly number[]).includes(payload.version)
  ) {
    problems.add(
      `statement.payload: type ${show(payload.type)} version ${show(payload.version)} is not one this verifier reads (${STATEMENT_TYPE} ${STATEMENT_VERSIONS_READ.join(" or ")})`,
    );
    return { status: "failed", kid };
  }
  if (payload.workflow_id !== id) {
    problems.add(
      `statement: it was signed for workflow ${show(payload.workflow_id)}, not for this export's ${show(id)}: it comes from another export`,
    );
  }
  const signedEvents = payload.events;
  if (signedEvents !== eventCount) {
    problems.add(
      typeof signedEvents === "number" && signedEvents > eventCount
        ? `statement: it was signed for ${signedEvents} events, the export carries ${eventCount}: events were removed`
        : `statement: it was signed for ${show(signedEvents)} events, the export carries ${eventCount}: events were added after signing`,
    );
  } else if (links && payload.head !== (links.at(-1) ?? genesisHash(id))) {
    problems.add(
      `statement: it was signed for chain head ${show(payload.head)}, but the export's events end on ${show(links.at(-1) ?? genesisHash(id))}: events were altered and the chain recomputed`,
    );
  }
  const repository =
    isObject(document.workflow) && isObject(document.workflow.repository) ? document.workflow.repository.fingerprint : null;
  if (payload.repository_fingerprint !== (repository ?? null)) {
    problems.add(
      `statement: it was signed for repository ${show(payload.repository_fingerprint)}, the export's workflow names ${show(repository ?? null)}`,
    );
  }
  const content = isObject(payload.content) ? payload.content : {};
  for (const member of Object.keys(document)) {
    if (member === "statement") continue;
    const signed = content[member];
    if (signed === undefined)
      problems.add(
        `${member}: not covered by the signed statement${STATEMENT_MEMBERS.has(member) ? "" : " (and not part of a Waymark export)"}`,
      );
    else if (memberDigest(document[member]) !== signed) problems.add(`${member}: not what the deployment signed (changed after signing)`);
  }
  for (const member of Object.keys(content)) if (!(member in document)) problems.add(`${member}: signed, but missing from the export`);
  if (keys === null) return { status: "not_checked", kid };
  const verdict = verifyStatement(statement as unknown as SignedStatement, keys);
  if (!verdict.ok) {
    problems.add(`signature: ${verdict.problem}`);
    return { status: "failed", kid };
  }
  const { status: key_status, not_before, not_after } = verdict.key;
  return { status: "ok", kid, key_status, issued_at: String(payload.issued_at), not_before, not_after };
}

/** A record's position in its array's order: tasks by start, logs by creation, then id. */
const orderKey = (kind: RecordKind, record: JsonObject) =>
  `${String(kind === "tasks" ? record.started_at : record.created_at)}\u0000${String(record.id)}`;

/** workflow, totals, feedback and the records: each as its events give it. */
function checkContent(document: JsonObject, events: readonly LoggedEvent[], readAt: number, problems: Problems, check: ExportCheck): void {
  const rebuilt = rebuild(events, readAt);
  problems.addAll(rebuilt.problems);
  if (rebuilt.problems.length > 0) return;
  const state = rebuilt.state;
  const header = headerOf(state);
  const out: string[] = [];
  if (header === null) out.push("workflow: its events hold no workflow.started");
  else diffValues("workflow", document.workflow, header, out);

  // Full file lists where an event names only the first files: the export's (checked against it below).
  const exportedTasks = new Map<string, JsonObject>();
  for (const kind of RECORD_KINDS) {
    const rows = document[kind];
    if (!Array.isArray(rows)) {
      out.push(`${kind}: export says ${show(rows)}, a list was expected`);
      continue;
    }
    check.counts[kind] = rows.length;
    checkRecords(kind, rows, rebuilt.versions[kind], state.records[kind], out, check);
    if (kind === "tasks") for (const row of rows) if (isObject(row) && typeof row.id === "string") exportedTasks.set(row.id, row);
  }
  const pathsOf = (task: JsonObject) => {
    const files = isObject(task.files_changed) ? task.files_changed : null;
    const full = files?.more !== undefined ? exportedTasks.get(String(task.id)) : undefined;
    return changedPaths(full ?? task);
  };
  try {
    diffValues("totals", document.totals, totalsOf(state, pathsOf), out);
    // The review counts (exports written before them have none): counted again from the records.
    if (document.review !== undefined) diffValues("review", document.review, reviewOf(state), out);
  } catch (error) {
    out.push(`totals: its events hold records that cannot be counted (${error instanceof Error ? error.message : String(error)})`);
  }

  const feedback = document.feedback;
  if (feedback === undefined) {
    if (state.feedback.size > 0) check.not_covered.push(`feedback: not in this export (its events hold ${state.feedback.size} item(s))`);
  } else if (!Array.isArray(feedback)) out.push(`feedback: export says ${show(feedback)}, a list was expected`);
  else {
    check.counts.feedback = feedback.length;
    // When the agent received an item is recorded without an event: outside what the events prove.
    const undelivered = (item: Json): Json => (isObject(item) ? { ...item, delivered_at: null } : item);
    diffValues("feedback", feedback.map(undelivered), [...state.feedback.values()].map(undelivered), out);
    if (feedback.some((item) => isObject(item) && item.delivered_at !== null)) {
      check.not_covered.push("feedback[].delivered_at: when the agent received each item is recorded without an event");
    }
  }
  problems.addAll(out);
}

/** One array of records: each exported record in a state its events give, none missing, none twice, in order. */
function checkRecords(
  kind: RecordKind,
  rows: Json[],
  versions: ReadonlyMap<string, JsonObject[]>,
  atRead: ReadonlyMap<string, JsonObject>,
  out: string[],
  check: ExportCheck,
): void {
  const seen = new Set<string>();
  let previous: string | null = null;
  for (const [index, row] of rows.entries()) {
    if (!isObject(row) || typeof row.id !== "string") {
      out.push(`${kind}[${index}]: not a record with an id`);
      continue;
    }
    const path = `${kind}[${row.id}]`;
    if (seen.has(row.id)) out.push(`${path}: listed twice`);
    seen.add(row.id);
    const position = orderKey(kind, row);
    if (previous !== null && position < previous)
      out.push(`${path}: out of order (${kind === "tasks" ? "tasks go by start time" : "logs go by creation time"}, then id)`);
    previous = position;
    const states = versions.get(row.id);
    if (!states || states.length === 0) {
      out.push(`${path}: in the export, but in none of its events`);
      continue;
    }
    let closest: string[] = [];
    let partly: ReturnType<typeof diffTask> | null = null;
    for (const state of states) {
      const found: string[] = [];
      if (kind === "tasks") partly = diffTask(path, row, state, found);
      else diffValues(path, row, state, found);
      closest = found;
      if (found.length === 0) break;
    }
    out.push(...closest);
    if (partly?.files) {
      check.not_covered.push(
        `${path}: its events name ${partly.files.named} of its ${partly.files.total} changed files and count the rest; the other ${partly.files.total - partly.files.named} names are covered by the signature only`,
      );
    }
    if (partly?.overlaps) {
      check.not_covered.push(
        `${path}.verification.overlapping: its events name ${partly.overlaps.named} of ${partly.overlaps.total} overlaps and count the rest; the others are covered by the signature only`,
      );
    }
  }
  for (const id of atRead.keys()) if (!seen.has(id)) out.push(`${kind}: ${id} is in the events but missing from the export`);
}
