/**
 * @module proxy/complete-task
 * complete_task through the helper, in the order its parts depend on each other:
 * 1. the task's record (its start snapshot and idempotency key, from memory or the cache dir);
 * 2. what the task did, observed from git or checksums: the changes since the start snapshot,
 *    line counts and commits (the review), and the other tasks open on this working tree;
 * 3. what the hooks recorded meanwhile: the agent's own edits, the shell commands it ran, and its
 *    usage from its transcript (read while the changes are computed: neither depends on the other);
 * 4. the call, with the helper's identity, signed by this device over the changes (commands and
 *    what it found of earlier tasks' lines included) and the usage for this task; then, once the
 *    edge accepted it, the task's record is attached to its commits as git notes
 *    (../notes/record.ts: the one thing the helper writes to a repository) and the answer goes out;
 *    after it, the marks other processes read are written, this process's own copies are removed
 *    (./follow-up.ts, kept on disk first so that a helper ending in between leaves them to the next),
 *    and the task joins the durability ledger, whose tasks are looked at again (../durability.ts).
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { CompletionCheckpoint } from "@waymark/protocol/git-note";
import { redactDeep } from "@waymark/protocol/redact";
import type { Changes } from "@waymark/protocol/wire";
import { ledgerEntry, pendingObservations } from "../durability.js";
import { inertContext } from "../git/inert-config.js";
import { observedCommands } from "../hooks/commands.js";
import { holdStopStates } from "../hooks/journal.js";
import { transcriptMetrics } from "../hooks/record.js";
import type { LineInputs } from "../lines/attribute.js";
import { lineInputs } from "../lines/inputs.js";
import { taskNoteEntries } from "../notes/record.js";
import { writeNotes } from "../notes/store.js";
import { changedPaths, outgoingChanges } from "../outgoing.js";
import { PrestartedGit } from "../prestarted-git.js";
import { agentEdits, agentMetrics, signedChanges, transcriptSourced, withProvenance } from "../provenance-fields.js";
import { type CountsNeeded, clearLeftovers, type Leftovers, OBJECT_SIZES } from "../review-measures.js";
import { ScratchRepository } from "../scratch.js";
import { computeChanges } from "../snapshot.js";
import { MARK_PATHS, type TaskRecord, type WorktreeMark } from "../store.js";
import { attachReview } from "../task-review.js";
import { type FollowUp, type KeptFollowUp, runFollowUp, writeFollowUp } from "./follow-up.js";
import { type KeptWorkflowState, unavailable } from "./results.js";
import { gitTop, type ProxySession } from "./session.js";

/** What the helper observed of a task, and what must be cleaned up once the call is answered. */
type Observed = {
  changes: Changes;
  /** Repository-relative paths the task changed (for the working tree's marks). */
  changed: string[];
  /** The task's mark on the working tree, as read before the call. */
  mark: WorktreeMark | null;
  /** Removals of scratch files, started after the answer went out. */
  leftovers: Leftovers;
};

/**
 * `callId`: the agent's id of this call, when it sends one (its transcript names the calling response by it).
 * The hooks' stop state is written once, when the call is done (../hooks/journal.ts holdStopStates):
 * the spool drained and then the task closed would each have written it. A completed task's local
 * records are written after the answer went out (./follow-up.ts), and the stop state with them.
 */
export async function completeTask(
  session: ProxySession,
  dir: string,
  input: Record<string, unknown>,
  callId?: string,
): Promise<CallToolResult> {
  const release = holdStopStates();
  let after: (() => Promise<void>) | undefined;
  try {
    const done = await completing(session, dir, input, callId);
    after = done.after;
    return done.result;
  } finally {
    if (after) {
      const followUp = after;
      session.afterAnswer(() => followUp().finally(release));
    } else await release();
  }
}

/** The call's answer, and what is left to do once it is written out (a completed task's local records). */
type Completed = { result: CallToolResult; after?: () => Promise<void> };

async function completing(session: ProxySession, dir: string, input: Record<string, unknown>, callId?: string): Promise<Completed> {
  const { changes: _ignored, ...args } = input;
  const taskId = typeof args.task_id === "string" ? args.task_id : undefined;
  if (taskId === undefined) return { result: await session.remote.request("tools/call", { name: "complete_task", arguments: args }) };
  const record = (await session.store.load(taskId, dir)) ?? { task_id: taskId, dir, snapshot: null };
  // The hooks' journal of this repository, where the task was noted at its start.
  const top = gitTop(record.snapshot, record.dir, dir);
  // What the task did, from git: its git status is started first, and everything below that does
  // not need its answer runs while it does (the line inputs are handed in once they are being read).
  let handLines: (lines: Promise<LineInputs>) => void = () => {};
  const observing = observe(
    session,
    record,
    dir,
    new Promise<LineInputs>((resolve) => {
      handLines = resolve;
    }),
  );
  const keySaved = ensureIdempotencyKey(session, record, args);
  // Provenance: the agent's own edits recorded by the hooks, read while the changes are computed.
  const edits = agentEdits(dir, taskId, session.options.cacheDir, top);
  edits.catch(() => {});
  // Hooks: an agent that reports no usage gets its real usage, read from its transcript, once the
  // spool is in the journal (agentEdits drains it first): its tool calls name the agent's session.
  const usage =
    args.metrics === undefined
      ? edits.catch(() => undefined).then(() => transcriptMetrics(dir, taskId, session.options.cacheDir, top, callId))
      : undefined;
  // Its failure surfaces where it is awaited, not as an unhandled rejection meanwhile.
  usage?.catch(() => {});
  // Line attribution: the hooks' record of the agent's edits, read once the edits above are (a spool drained first).
  const lines = edits
    .catch(() => undefined)
    .then(() => lineInputs(dir, taskId, session.options.cacheDir, join(session.cache, "line-counts"), top));
  handLines(lines);
  // Evidence: the shell commands the hooks saw the agent run during the task (never their output),
  // read once the spool is in the journal (agentEdits drains it first; it never rejects).
  const commands = edits.then(() => observedCommands(dir, taskId, session.options.cacheDir, top));
  // Durability: what the helper found of earlier tasks' lines since the last completion here (a file read).
  const repoRoot = record.snapshot?.type === "git" ? record.snapshot.root : null;
  const lasting = repoRoot ? pendingObservations(session.cache, repoRoot).catch(() => []) : Promise.resolve([]);
  const observed = await observing;
  // Provenance: usage says whether it is the transcript's or the agent's claim.
  if (usage === undefined) args.metrics = agentMetrics(args.metrics);
  else {
    const fromTranscript = (await usage)?.metrics;
    if (fromTranscript) args.metrics = transcriptSourced(fromTranscript);
  }
  // Provenance: the helper's identity on what it computed, with the agent's own edits when the hooks
  // observed the task, and the commands they saw; signed by this device with the usage for this
  // task and its signed start's nonce, so the signature covers the commands too.
  // The usage is sent as signed: redacted as the edge will redact it (a transcript's model name included).
  if (args.metrics !== undefined) args.metrics = redactDeep(args.metrics).value;
  const identified = withProvenance(observed.changes, session.version, await edits);
  const ran = await commands;
  if (ran) identified.commands = ran;
  const sentDurability = identified.type === "unavailable" ? [] : await lasting;
  if (sentDurability.length > 0 && identified.type !== "unavailable") identified.durability = sentDurability;
  const key = await session.deviceKey();
  const changes = signedChanges(identified, args.metrics, key, taskId, record.start_nonce);
  await keySaved;
  // What the local records need once the edge has the task (./follow-up.ts): written while the
  // request is in flight, and made the one the next helper finds only once the edge accepted it.
  const start = record.snapshot;
  const followUp: FollowUp = {
    endpoint: session.options.url,
    pid: process.pid,
    at: Date.now(),
    task_id: taskId,
    dir,
    record_dir: record.dir,
    ...(top === undefined ? {} : { top }),
    ...(start ? { root: start.root } : {}),
    mark: observed.mark,
    changed: observed.changed.slice(0, MARK_PATHS),
    changed_count: observed.changed.length,
  };
  let result: CallToolResult;
  let state: KeptWorkflowState | null;
  const call = session.callWithHelperData("complete_task", args, changes);
  // On the next turn of the event loop: the request is on its way by then.
  const kept = new Promise<KeptFollowUp>((done) => setImmediate(() => done(writeFollowUp(session.cache, followUp))));
  try {
    ({ result, state } = await call);
  } catch (error) {
    (await kept).drop();
    session.bookkeeping = clearLeftovers(observed.leftovers);
    throw error;
  }
  if (result.isError) {
    (await kept).drop();
    session.bookkeeping = clearLeftovers(observed.leftovers);
    return { result };
  }
  // The edge has the task: the local records are written after the answer goes out; the note on
  // the task's commits before it.
  (await kept).keep();
  await attachRecord(session, record, changes, args.metrics, result);
  session.keepWorkflowState(dir, state, top);
  const ledger = ledgerEntry(taskId, changes, Date.now());
  return {
    result,
    after: async () => {
      // The usage the request read from the transcript is the done record's: the transcript is not read again.
      await runFollowUp(session, followUp, [clearLeftovers(observed.leftovers)], (await usage)?.read);
      if (repoRoot) session.afterDurability(repoRoot, sentDurability, ledger);
    },
  };
}

/**
 * The task's record, attached to its commits in the repository (../notes/record.ts). The endpoint's
 * checkpoint is taken out of the agent's result: it is for the note, and the agent has no use for it.
 * A failure is logged and costs the agent nothing: the endpoint holds the record either way.
 */
async function attachRecord(
  session: ProxySession,
  record: TaskRecord,
  changes: Changes,
  metrics: unknown,
  result: CallToolResult,
): Promise<void> {
  const taskId = record.task_id;
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  const checkpoint = structured?.checkpoint as CompletionCheckpoint | undefined;
  if (structured) delete structured.checkpoint;
  if (changes.type !== "git" || !checkpoint || typeof checkpoint.workflow_id !== "string") return;
  // A note goes on the task's commits: a task that made none needs no git context (a git process) at all.
  if (!changes.review || changes.review.commits.length === 0) return;
  const model =
    metrics !== null && typeof metrics === "object" && "model" in metrics && typeof metrics.model === "string" ? metrics.model : null;
  try {
    if (record.snapshot?.type !== "git") return;
    const context = await inertContext(record.snapshot.root);
    const entries = await taskNoteEntries(context, { taskId, checkpoint, changes, model, origin: new URL(session.options.url).origin });
    if (entries.length > 0) await writeNotes(context, entries, `waymark: record of task ${taskId}`);
  } catch (error) {
    session.log(
      `waymark: could not attach task ${taskId}'s record to its commits (refs/notes/waymark): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * The call's idempotency key: the agent's own, else the one kept with the task's record (chosen at
 * start_task) and reused on every retry (persisted before sending: if this process dies mid-call,
 * the retry from a new helper still carries the same key, so the edge counts the completion once).
 * A record without one (kept by an earlier helper) gets one, saved before the call.
 */
function ensureIdempotencyKey(session: ProxySession, record: TaskRecord, args: Record<string, unknown>): Promise<void> | undefined {
  if (typeof args.idempotency_key === "string") return undefined;
  let saved: Promise<void> | undefined;
  if (!record.idempotency_key) {
    record.idempotency_key = randomUUID();
    saved = session.store.save(record).catch(() => {});
  }
  args.idempotency_key = record.idempotency_key;
  return saved;
}

/** What the task did since its start snapshot; the reason instead when it cannot be observed. */
async function observe(session: ProxySession, record: TaskRecord, dir: string, lines?: Promise<LineInputs>): Promise<Observed> {
  const start = record.snapshot;
  const taskId = record.task_id;
  if (!start) {
    const reason = `the helper has no start snapshot of task ${taskId} in ${dir}: the task was started without the helper, the start snapshot failed, or it was started from another machine or cache directory ($XDG_CACHE_HOME/waymark). Start tasks through the helper in the project directory to record their file changes.`;
    return { changes: unavailable(reason), changed: [], mark: null, leftovers: [] };
  }
  const leftovers: Leftovers = [];
  const ready = new PrestartedGit();
  // The line counts' scratch repository, opened while git status runs when the last task's counts needed it.
  let scratch: ScratchRepository | undefined;
  const ahead = session.countsNeeded;
  const needed: CountsNeeded = { objects: false, scratch: false };
  let changed: string[] = [];
  let mark: WorktreeMark | null = null;
  try {
    // The repository's config is read once for the changes and the review (or kept from an earlier
    // call); the hashing of the dirty files and the lookup of stored contents start while git status runs.
    const context =
      start.type === "git"
        ? session.git.forRoot(start.root, start.git_dir, ready, (inRoot) => {
            if (ahead.objects) ready.startAfterNext(inRoot, OBJECT_SIZES);
            if (ahead.scratch) {
              ready.afterNext(() => {
                try {
                  scratch = ScratchRepository.open(join(session.cache, "line-counts"));
                } catch {
                  // Opened when the counts are taken, as without this.
                }
              });
            }
          })
        : undefined;
    const [observed, startMark] = await Promise.all([
      computeChanges(start, { previous: session.previousScan() ?? undefined, progress: session.log, context }),
      session.store.mark(start.root, taskId).catch(() => null),
    ]);
    mark = startMark;
    changed = changedPaths(start, observed);
    const changes = outgoingChanges(start, observed);
    // The line counts and the other tasks on this working tree are independent reads.
    const [, others] = await Promise.all([
      attachReview(start, observed, changes, session.log, session.cache, context, leftovers, scratch, needed, lines),
      session.store.concurrent(start.root, taskId, mark?.started_at ?? 0, changed, mark?.ancestors).catch(() => []),
    ]);
    if (others.length > 0 && changes.type !== "unavailable") changes.concurrent = others;
    if ((changes.type === "git" || changes.type === "net") && changes.review) session.countsNeeded = needed;
    return { changes, changed, mark, leftovers };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    session.log(`waymark: could not compute changes of task ${taskId}: ${reason}`);
    return { changes: unavailable(reason), changed, mark, leftovers };
  } finally {
    ready.close();
    const opened = scratch;
    if (opened) leftovers.push(() => opened.remove());
  }
}
