/**
 * The WorkflowObject as the MCP layer and the pages reach it: a stub per workflow id, Results
 * read as values or failures, the whole workflow read back through the paged reads (what the
 * exports, the resources and the pages are made of), and the alarm that pushes to the account.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { FeedbackView, Reader, WorkflowView } from "../../src/domain/view";
import { ok, type Result } from "../../src/errors";
import { LIMITS } from "../../src/limits";
import type { WorkflowObject } from "../../src/workflow/workflow-object";

export function stubFor(workflowId: string): DurableObjectStub<WorkflowObject> {
  return env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId));
}

export function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result.value;
}

export function failure<T>(result: Result<T>): { code: string; message: string } {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return { code: result.code, message: result.message };
}

/**
 * The whole workflow as a reader of the paged reads gets it, page after page: the head, the four
 * arrays and (`withEvents`) the event log, the way the JSON export reads it; the owner's
 * (`asOwner`) and a link's reader's with the reviewers' feedback.
 */
export async function readWhole(
  stub: DurableObjectStub<WorkflowObject>,
  reader: Reader,
  withEvents = false,
  asOwner = false,
): Promise<Result<WorkflowView & { feedback?: FeedbackView[] }>> {
  const head = await stub.readHead(reader, asOwner);
  if (!head.ok) return head;
  const arrays: Record<string, unknown[]> = {};
  for (const kind of ["tasks", "decisions", "issues", "milestones"] as const) {
    arrays[kind] = [];
    let cursor: string | null = null;
    do {
      const page = await stub.readRows(reader, kind, cursor, LIMITS.READ_PAGE_ITEMS);
      if (!page.ok) return page;
      arrays[kind].push(...page.value.rows);
      cursor = page.value.next_cursor;
    } while (cursor !== null);
  }
  const { workflow, totals, last_seq, chain, feedback } = head.value;
  const view = { workflow, ...arrays, totals, last_seq, chain } as WorkflowView & { feedback?: FeedbackView[] };
  if (withEvents) {
    view.events = [];
    for (let after = 0; after < chain.events; ) {
      const page = await stub.events(reader, after, LIMITS.EVENTS_PAGE);
      if (!page.ok) return page;
      view.events.push(...page.value.events);
      if (page.value.events.length === 0) break;
      after = page.value.next_seq;
    }
  }
  // Last, as the exports write it.
  if (feedback) view.feedback = feedback;
  return ok(view);
}

/** Pushes everything the account index has not taken now: the object's alarm, as when a timed push was lost with its process. */
export async function pushToAccount(stub: DurableObjectStub<WorkflowObject>): Promise<void> {
  await runInDurableObject(stub, (_instance, state) => state.storage.setAlarm(Date.now()));
  await runDurableObjectAlarm(stub);
}

type StoredTotals = Record<string, number | null>;

/**
 * The running totals as the object stores them now (workflow/totals): on the last write's last
 * event, unless the totals row is newer (its `seq` at or past that event).
 */
export function storedTotals(sql: SqlStorage): StoredTotals {
  const row = sql.exec("SELECT * FROM totals WHERE id = 1").one() as StoredTotals;
  const [last] = sql.exec("SELECT totals FROM events WHERE seq > ? AND totals IS NOT NULL ORDER BY seq DESC LIMIT 1", row.seq).toArray();
  if (!last) return row;
  const carried = JSON.parse(String(last.totals)) as StoredTotals;
  return { ...row, ...carried, synced_seq: Math.max(Number(carried.synced_seq), Number(row.synced_seq)) };
}

/**
 * Sets some of the stored totals, as if a write had stored them: the totals row, made the newest.
 * The object keeps a copy of its totals in memory (workflow/totals): given its `instance`, that
 * copy is dropped too, so it reads them back as an object started again would.
 */
export function setStoredTotals(sql: SqlStorage, fields: StoredTotals, instance?: unknown): void {
  (instance as { totals?: { forgetUncommitted(): void } } | undefined)?.totals?.forgetUncommitted();
  const { id: _id, ...next } = { ...storedTotals(sql), ...fields };
  next.seq = Number(sql.exec("SELECT coalesce(max(seq), 0) AS seq FROM events").one().seq);
  const columns = Object.keys(next);
  sql.exec(`UPDATE totals SET ${columns.map((c) => `${c} = ?`).join(", ")} WHERE id = 1`, ...columns.map((c) => next[c] ?? null));
}
