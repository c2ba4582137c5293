/**
 * @module proxy/start-task
 * start_task through the helper: the start snapshot (HEAD plus every dirty file's state, or a
 * checksum list outside git), the repository and branch, and the other tasks open on this working
 * tree are sent with the call; the start contents that are in no git object are copied for the
 * task's line counts while the call is out; once the edge answers, the task is noted where other
 * processes look for it (the hooks' journal, the working tree's marks) and its snapshot is kept
 * for complete_task.
 */
import { randomUUID } from "node:crypto";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { Snapshot, Unavailable } from "@waymark/protocol/wire";
import type { Found } from "../config-cache.js";
import type { GitContext } from "../git/process.js";
import { noteTaskStarted } from "../hooks/record.js";
import type { LocalSnapshot } from "../local.js";
import { outgoingSnapshot } from "../outgoing.js";
import { signedSnapshot } from "../provenance-fields.js";
import { snapshotRepository } from "../repository.js";
import { keepStartContents } from "../task-review.js";
import { taskIdOf } from "./results.js";
import { gitTop, type ProxySession } from "./session.js";

export async function startTask(session: ProxySession, dir: string, input: Record<string, unknown>): Promise<CallToolResult> {
  const { snapshot: _ignored, ...args } = input;
  const startedAt = Date.now();
  // The hashing of the dirty files starts while git status runs (which start contents to copy is
  // known from status itself: ../review-measures.ts's saveStartContents).
  const { toplevel, context, ready } = session.git.forDirectory(dir, []);
  try {
    return await startTaskIn(session, dir, args, startedAt, toplevel, context);
  } finally {
    ready.close();
  }
}

/** The start snapshot as sent: with the repository's identity and the other tasks open on this working tree. */
async function outgoingStart(
  session: ProxySession,
  observed: LocalSnapshot | Unavailable,
  ancestors: readonly string[],
  startedAt: number,
  context: Promise<GitContext>,
): Promise<Snapshot> {
  if (observed.type === "unavailable") return observed;
  const sent = outgoingSnapshot(observed);
  if (sent.type === "git" && observed.type === "git") {
    const identity = await context.then((known) => snapshotRepository(known, observed, session.roots)).catch(() => null);
    if (identity) sent.repository = identity;
  }
  const open = await session.store.concurrent(observed.root, "", startedAt, null, ancestors).catch(() => []);
  if (sent.type !== "unavailable" && open.length > 0) sent.concurrent = open;
  return sent;
}

async function startTaskIn(
  session: ProxySession,
  dir: string,
  args: Record<string, unknown>,
  startedAt: number,
  toplevel: Promise<Found | null>,
  context: Promise<GitContext>,
): Promise<CallToolResult> {
  const observed = await session.snapshot(dir, context, toplevel);
  const local = observed.type === "unavailable" ? null : observed;
  // A subtask's parent chain: a parent and its subtasks are never concurrent tasks.
  const parentId = typeof args.parent_task_id === "string" ? args.parent_task_id : undefined;
  const ancestors = local && parentId !== undefined ? await session.store.lineage(local.root, parentId).catch(() => [parentId]) : [];
  // Provenance: signed by this device for the workflow the task starts in; its completion names the nonce.
  const [unsigned, key] = await Promise.all([outgoingStart(session, observed, ancestors, startedAt, context), session.deviceKey()]);
  const { snapshot: sent, nonce } = signedSnapshot(unsigned, session.version, key, args.workflow_id);
  const call = session.callWithHelperData("start_task", args, sent);
  call.catch(() => {});
  // Review: start contents that are in no git object are copied for the task's line counts
  // while the call is out (the agent edits nothing before it has the answer): after a turn
  // of the event loop, so that the request is on its way first.
  if (local) {
    await new Promise((resolve) => setImmediate(resolve));
    await keepStartContents(local, session.cache, session.log, context);
  }
  const { result, state } = await call;
  const taskId = result.isError ? undefined : taskIdOf(result);
  if (taskId === undefined) return result;
  // What other processes read (the hooks' journal, the working tree's marks) is written before
  // the answer; the task's start snapshot, which only complete_task reads, after it (every later
  // call and the end of the process wait for it).
  // The completion's idempotency key is chosen now and kept with the snapshot: complete_task then
  // sends it (and every retry of it, from any helper) without writing the record again first.
  session.bookkeeping = local
    ? session.store
        .save({ task_id: taskId, dir, snapshot: local, idempotency_key: randomUUID(), ...(nonce ? { start_nonce: nonce } : {}) })
        .catch((error: unknown) => {
          session.log(`waymark: could not persist the snapshot of task ${taskId}: ${String(error)}`);
        })
    : Promise.resolve();
  await Promise.all([
    // Hooks: the task is open in this repository (edits are attributed to it, stop reminds of it).
    noteTaskStarted(dir, taskId, args, session.options.cacheDir, session.log, gitTop(local, dir, dir)),
    local && session.store.markStarted(local.root, taskId, startedAt, ancestors).catch(() => {}),
  ]);
  session.keepWorkflowState(dir, state, gitTop(local, dir, dir));
  return result;
}
