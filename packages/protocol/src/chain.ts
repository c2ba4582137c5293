/**
 * @module chain
 * The hash chain over a workflow's event log, so that an export can be checked by someone who
 * does not trust the server's page. Each event's hash covers the previous hash and the event's
 * canonical bytes:
 *
 *   genesis  = sha256("waymark-chain\n" + workflow id)
 *   hash(n)  = sha256(hash(n-1) + "\n" + canonical JSON of {seq, at, type, task_id, data})
 *
 * Canonical JSON: object keys sorted by UTF-16 code units, no whitespace, JSON.stringify's
 * escaping for strings and numbers. Both the edge (which writes the chain) and the helper's
 * `waymark verify` (which checks an export offline) use this module, so they cannot disagree.
 * Synchronous (node:crypto), because the edge computes it inside a write's transaction.
 */
import { createHash } from "node:crypto";

export interface ChainedEvent {
  seq: number;
  at: string;
  type: string;
  task_id: string | null;
  data: unknown;
  hash: string;
}

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  // Written as plain loops: a signed completion's data is thousands of values, and the
  // intermediate arrays of entries, filters and maps were most of its cost.
  if (Array.isArray(value)) {
    let text = "[";
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      text += `${index === 0 ? "" : ","}${item === undefined ? "null" : canonicalJson(item)}`;
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort orders strings by UTF-16 code units, as `<` does.
  const keys = Object.keys(record).sort();
  let text = "{";
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    text += `${text.length === 1 ? "" : ","}${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${text}}`;
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export function genesisHash(workflowId: string): string {
  return sha256(`waymark-chain\n${workflowId}`);
}

export function eventHash(previous: string, event: Omit<ChainedEvent, "hash">): string {
  const { seq, at, type, task_id, data } = event;
  return sha256(`${previous}\n${canonicalJson({ seq, at, type, task_id, data })}`);
}

export type ChainVerdict = { ok: true; events: number; head: string } | { ok: false; seq: number; problem: string };

/** Every event's recomputed link, in order: `links[n - 1]` is the chain's hash after event n. */
export type ChainWalk = { ok: true; links: string[] } | { ok: false; seq: number; problem: string };

/**
 * Recomputes the chain over an exported log: every event's hash, and the seq order without gaps
 * (a removed event shows as a gap). Names the first event that fails; the links let a caller
 * check a head recorded at any point of the log.
 */
export function walkChain(workflowId: string, events: readonly ChainedEvent[]): ChainWalk {
  let previous = genesisHash(workflowId);
  let expectedSeq = 1;
  const present = new Set(events.map((e) => e.seq));
  const links: string[] = [];
  for (const event of events) {
    if (event.seq !== expectedSeq) {
      return event.seq > expectedSeq && !present.has(expectedSeq)
        ? { ok: false, seq: expectedSeq, problem: `event ${expectedSeq} is missing (the next event is ${event.seq})` }
        : { ok: false, seq: event.seq, problem: `event ${event.seq} is out of order or repeated (expected ${expectedSeq})` };
    }
    const computed = eventHash(previous, event);
    if (computed !== event.hash) {
      return { ok: false, seq: event.seq, problem: `event ${event.seq} (${event.type}) was altered: its content does not match its hash` };
    }
    links.push(computed);
    previous = computed;
    expectedSeq++;
  }
  return { ok: true, links };
}

/** Checks an exported log against the chain head it ends on (see walkChain). */
export function verifyChain(workflowId: string, events: readonly ChainedEvent[], head: string): ChainVerdict {
  const walk = walkChain(workflowId, events);
  if (!walk.ok) return walk;
  const last = walk.links.at(-1) ?? genesisHash(workflowId);
  if (last !== head) {
    return {
      ok: false,
      seq: events.length + 1,
      problem:
        events.length === 0
          ? "the export has no events but its head is not the empty chain"
          : `the chain head does not match: events after ${events.length} were removed, or the head was altered`,
    };
  }
  return { ok: true, events: events.length, head: last };
}
