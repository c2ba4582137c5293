/**
 * @module workflow/workflow-object
 * One workflow: its tasks, logs, file changes and event log, in this Durable Object's SQLite.
 *
 * A thin facade: every public method is an RPC entry point (its signature is the contract the
 * MCP layer, the pages and other workflow objects call), delegating to collaborators that take
 * the object's `sql`: records (with a task's files), the lifecycle rules, the event log,
 * idempotency, totals and quotas, followers, share links, the account outbox and the paged
 * reader. Every method checks that the caller's account owns the workflow first, idempotent
 * replays included, through workflow/ownership (NOT_FOUND otherwise: ids of other accounts reveal
 * nothing); share-link readers get in only by a token checked here. Every write goes through workflow/writer (no
 * await between a commit and its broadcast).
 */
import { DurableObject } from "cloudflare:workers";
import type {
  CompleteTaskInput,
  CompleteWorkflowInput,
  LogDecisionInput,
  LogIssueInput,
  LogMilestoneInput,
  StartTaskInput,
  StartWorkflowInput,
} from "@waymark/protocol/tools";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import type { PathChange } from "../domain/changes";
import type { DeviceKeySet } from "../domain/device-signature";
import type { Overlap } from "../domain/overlap";
import { expiryProblem, type ShareInfo } from "../domain/share-status";
import type { FeedbackView, Reader, TaskPage, TaskView, WorkflowHead } from "../domain/view";
import { fail, ok, type Result } from "../errors";
import { workflowOfTask } from "../ids";
import { isoTime } from "../iso-time";
import { meter } from "../meter";
import { LazyTables } from "../storage/lazy-tables";
import { LazySchema } from "../storage/migrations";
import { type Sql, sqlFor } from "../storage/sql";
import { accountStub, workflowStub } from "../stubs";
import { AccountOutbox } from "./account-outbox";
import { DeviceKeyCache } from "./device-keys";
import { DeviceSignatures } from "./device-signatures";
import type { SignedPartsPage } from "./device-signed";
import { EventLog, type EventsPage } from "./event-log";
import { type FeedbackDigest, FeedbackRecords, type NewFeedback } from "./feedback";
import { LiveFollowers } from "./followers";
import { IdempotencyRecords, requestHash } from "./idempotency";
import { type LogTable, TaskLifecycle } from "./lifecycle";
import { LiveFeed } from "./live-feed";
import { OtherWorkflows } from "./other-workflows";
import { noWorkflowOrTask, Ownership } from "./ownership";
import { type FilesPage, type RowsPage, WorkflowReader } from "./reader";
import { type LoggedTask, type RecordKind, WorkflowRecords } from "./records";
import type { CompleteTaskOutput, CompleteWorkflowOutput, KeptState, LogOutput, StartTaskOutput, StartWorkflowOutput } from "./results";
import { resumeInfo, type WorkflowState } from "./resume";
import { type ShareAction, ShareLinks } from "./share";
import type { FileList } from "./task-files";
import { accountQuotaFailure, RunningTotals } from "./totals";
import { WORKFLOW_LAZY_TABLES, WORKFLOW_MIGRATIONS, WORKFLOW_SCHEMA, WORKFLOW_VERSION_ROW } from "./workflow-schema";
import type { WriteScope } from "./write-scope";
import { Writer } from "./writer";

export type { EventsPage } from "./event-log";
export { CLIENT_HEADER, MCP_ACCOUNT_HEADER, OWNER_ACCOUNT_HEADER, OWNER_SESSION_HEADER, SHARE_TOKEN_HEADER } from "./live-feed";
export type { RowsPage } from "./reader";
export type * from "./results";
export type { ResumeInfo, WorkflowState } from "./resume";

export class WorkflowObject extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly records: WorkflowRecords;
  private readonly log: EventLog;
  private readonly idempotency: IdempotencyRecords;
  private readonly totals: RunningTotals;
  private readonly followers: LiveFollowers;
  private readonly shareLinks: ShareLinks;
  private readonly outbox: AccountOutbox;
  private readonly writer: Writer;
  private readonly lifecycle: TaskLifecycle;
  private readonly feedback: FeedbackRecords;
  private readonly liveFeed: LiveFeed;
  private readonly reader: WorkflowReader;
  private readonly schema: LazySchema;
  private readonly otherWorkflows: OtherWorkflows;
  private readonly signatures: DeviceSignatures;
  private readonly deviceKeys: DeviceKeyCache;
  private readonly ownership: Ownership;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    meter.enableFrom(env);
    const schema = new LazySchema(
      ctx.storage,
      WORKFLOW_MIGRATIONS,
      "workflow",
      () => this.log.backfillChain(),
      WORKFLOW_SCHEMA,
      WORKFLOW_VERSION_ROW,
    );
    this.schema = schema;
    this.sql = sqlFor(ctx.storage, { kind: "workflow", id: ctx.id.toString() }, () => schema.ensure());
    const tables = new LazyTables(ctx.storage, "workflow", WORKFLOW_LAZY_TABLES);
    this.records = new WorkflowRecords(this.sql, tables, () => schema.exists());
    this.ownership = new Ownership(this.records);
    this.log = new EventLog(this.sql, () => this.records.identity()?.id ?? "");
    this.idempotency = new IdempotencyRecords(this.sql, tables);
    this.totals = new RunningTotals(this.sql);
    this.followers = new LiveFollowers(ctx, this.log);
    this.shareLinks = new ShareLinks(this.sql, env, () => this.records.workflow()?.id ?? "");
    const accountIndex = (account: string) => accountStub(env, account);
    this.deviceKeys = new DeviceKeyCache(this.sql, (account) => accountIndex(account).deviceKeys(this.records.identity()?.id ?? ""));
    this.outbox = new AccountOutbox(this.log, this.records, this.totals, accountIndex, (at) => this.scheduleAlarm(at), this.deviceKeys);
    this.feedback = new FeedbackRecords(this.sql, this.totals, this.records, tables);
    this.writer = new Writer(
      ctx,
      this.idempotency,
      this.log,
      this.totals,
      this.followers,
      this.outbox,
      (now) => this.feedback.takeDigest(() => this.records.identity()?.id ?? "", now),
      [this.log, this.totals, this.feedback, tables, this.records],
    );
    this.lifecycle = new TaskLifecycle(this.records, this.totals);
    this.liveFeed = new LiveFeed(this.followers, this.shareLinks, this.log, this.ownership, accountIndex);
    this.reader = new WorkflowReader(this.sql, this.records, this.totals, this.log, this.feedback, this.shareLinks, this.ownership);
    this.signatures = new DeviceSignatures((account, signature, message) =>
      this.deviceKeys.verdict(account, signature, message, Date.now()),
    );
    this.otherWorkflows = new OtherWorkflows(this.records, this.ownership, (id) => workflowStub(env, id));
    ctx.blockConcurrencyWhile(async () => {
      schema.open();
      // Events committed whose push died with the process: the alarm pushes them now.
      if (this.outbox.pending()) await this.scheduleAlarm(Date.now());
    });
  }

  // ── RPC: tools ────────────────────────────────────────────────────────────

  /**
   * `prepared`: what the Worker already asked the account (its quota usage, and whether new
   * workflows are shared); the link is then created in the same transaction as the workflow and
   * reaches the index with the workflow's first push, and `share_token` carries it back.
   */
  async startWorkflow(
    account: string,
    id: string,
    input: StartWorkflowInput,
    prepared?: { usage: { workflows: number; bytes_stored: number }; share: boolean },
  ): Promise<Result<StartWorkflowOutput & { share_token?: string }>> {
    if (this.records.workflow()) {
      // Only an idempotent retry can reach an existing object: ids are random otherwise.
      if (!this.ownership.of(account)) return noWorkflowOrTask("workflow_id", id).toFailure();
      const replay = this.idempotency.replay<StartWorkflowOutput>(
        "start_workflow",
        input.idempotency_key,
        await requestHash("start_workflow", input),
      );
      return replay ?? fail("CONFLICT", `idempotency_key: already used for another request (workflow ${id})`);
    }
    const usage = prepared?.usage ?? (await accountStub(this.env, account).usage());
    const overQuota = accountQuotaFailure(usage);
    if (overQuota) return overQuota;
    // The only call that creates a workflow: its schema is made here, outside the write's transaction.
    this.schema.ensure();
    const link = prepared?.share ? await this.shareLinks.newToken(id) : null;
    const started = await this.writer.run(
      "start_workflow",
      input,
      () => null,
      (_none, w) => {
        const output = this.lifecycle.startWorkflow(id, account, input, w, link);
        if (link) this.outbox.carryShare(this.shareLinks.created(link, w.now));
        return output;
      },
    );
    return started.ok && link ? ok({ ...started.value, share_token: link.token }) : started;
  }

  /**
   * `writer`: the credential the call came with (src/domain/credentials CredentialRef), kept to compare with a reviewer's.
   * `stateRecent`: the caller keeps the workflow's state (a helper's hooks): it comes back too, with this many recent entries per list.
   */
  async startTask(
    account: string,
    signedInput: StartTaskInput,
    writer?: string,
    stateRecent?: number,
  ): Promise<Result<StartTaskOutput & KeptState>> {
    // Provenance: whether an approved device signed the start snapshot, asked before the write.
    const identity = this.ownership.of(account)?.id ?? null;
    const { input, verdict, signed } = await this.signatures.start(account, identity, signedInput);
    const started = await this.writer.run(
      "start_task",
      input,
      () => this.ownership.workflow(account, "workflow_id", input.workflow_id),
      (workflow, w) => this.lifecycle.start(workflow, input, w, verdict, signed, writer ?? null),
    );
    return this.withState(started, stateRecent);
  }

  async logDecision(account: string, input: LogDecisionInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_decision", "decisions", input, (task, w) => this.lifecycle.logDecision(task, input, w));
  }

  async logIssue(account: string, input: LogIssueInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_issue", "issues", input, (task, w) => this.lifecycle.logIssue(task, input, w));
  }

  async logMilestone(account: string, input: LogMilestoneInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_milestone", "milestones", input, (task, w, earlier) =>
      this.lifecycle.logMilestone(task, input, w, earlier),
    );
  }

  /**
   * Completing a task whose helper saw tasks of other workflows open on the same working tree
   * asks those workflows (the same account's) for their changes to the files both changed, while
   * the device signature is checked (the only calls to other objects before the write, and only
   * for such a task); after the reply, each of them records the overlap on its task too.
   */
  async completeTask(
    account: string,
    signedInput: CompleteTaskInput,
    writer?: string,
    stateRecent?: number,
  ): Promise<Result<CompleteTaskOutput & KeptState>> {
    // Provenance: whether an approved device signed the changes and usage, checked before the write.
    const owned = this.ownership.of(account, signedInput.task_id) !== null;
    const [{ input, verdict, signed }, elsewhere] = await Promise.all([
      this.signatures.completion(account, owned, signedInput),
      this.otherWorkflows.tasksNamed(account, signedInput),
    ]);
    const completed = await this.writer.run(
      "complete_task",
      input,
      () => this.ownership.task(account, input.task_id),
      (task, w) => {
        const output = this.lifecycle.complete(task, input, w, elsewhere, verdict, signed, writer ?? null);
        // The chain after every event of this write: the repository's note names it (docs/evidence.md).
        const chain = this.log.chain();
        const workflowId = this.records.identity()?.id ?? "";
        output.checkpoint = {
          workflow_id: workflowId,
          task_name: task.name,
          completed_at: isoTime(w.now),
          events: chain.events,
          head: chain.head,
        };
        return output;
      },
      { enforceQuota: false },
    );
    // Read before the other workflows are told (after the reply): the state as this write left it.
    const answer = this.withState(completed, stateRecent);
    if (completed.ok && elsewhere.length > 0) this.ctx.waitUntil(this.otherWorkflows.tell(account, completed.value.task_id));
    return answer;
  }

  /** A write's result with the workflow's state after it, when its caller keeps that state (no feedback is marked delivered). */
  private withState<T extends object>(written: Result<T>, recent: number | undefined): Result<T & KeptState> {
    if (!written.ok || recent === undefined) return written;
    return ok({ ...written.value, workflow_state: this.state(recent) });
  }

  /** Resume info and every piece of reviewer feedback. */
  private state(recent: number): WorkflowState {
    const info = resumeInfo(this.sql, this.records, this.totals, recent);
    const feedback = this.feedback.list();
    return feedback.length === 0 ? info : { ...info, feedback };
  }

  async completeWorkflow(account: string, input: CompleteWorkflowInput): Promise<Result<CompleteWorkflowOutput>> {
    return this.writer.run(
      "complete_workflow",
      input,
      () => this.ownership.workflow(account, "workflow_id", input.workflow_id),
      (workflow, w) => this.lifecycle.completeWorkflow(workflow, input, w),
      { enforceQuota: false },
    );
  }

  // ── RPC: from the account ─────────────────────────────────────────────────

  /** The account's device keys changed (an approval, a revocation): signatures are verified with these from now on. */
  async deviceKeysChanged(account: string, keys: DeviceKeySet): Promise<void> {
    if (this.records.identity()?.account === account) this.deviceKeys.apply(keys);
  }

  // ── RPC: between workflows on one working tree ───────────────────────────

  /** Of a completed task of this workflow, its changes to `paths` (another workflow's task overlapped with it). */
  async changesOf(account: string, taskId: string, paths: readonly string[]): Promise<Result<PathChange[]>> {
    const task = this.ownership.of(account, taskId) ? this.records.task(taskId) : null;
    if (!task || task.status === "in_progress") return noWorkflowOrTask("task_id", taskId).toFailure();
    return ok(this.records.files.changesTo(taskId, paths.slice(0, WIRE_LIMITS.SHARED_PATHS)));
  }

  /** A task of another workflow that completed later overlapped with this workflow's `taskId`: recorded on it too. */
  async overlapsFromElsewhere(account: string, taskId: string, overlaps: readonly Overlap[]): Promise<Result<{ recorded: boolean }>> {
    const from = overlaps[0]?.workflow_id;
    const own = this.records.identity()?.id;
    const valid = overlaps.every((o) => o.workflow_id === from && o.task_id === overlaps[0]?.task_id && workflowOfTask(o.task_id) === from);
    if (from === undefined || from === own || !valid)
      return fail("INPUT_VALIDATION_ERROR", "overlaps: must name one task of another workflow");
    return this.writer.run(
      "overlaps_from_elsewhere",
      {},
      () => this.ownership.task(account, taskId),
      (task, w) => {
        this.lifecycle.overlapsFromElsewhere(task, overlaps.slice(0, WIRE_LIMITS.SHARED_PATHS), w);
        return { recorded: true };
      },
      { enforceQuota: false, deliverFeedback: false },
    );
  }

  // ── RPC: reads ────────────────────────────────────────────────────────────

  /**
   * What an agent needs after losing its context: open tasks, recent logs, next steps, and all
   * feedback, delivered from then on when `deliver` (the caller is the agent: mcp/reviewer-feedback decides).
   */
  async resume(account: string, recent: number, deliver: boolean): Promise<Result<WorkflowState>> {
    if (!this.ownership.of(account)) return noWorkflowOrTask("workflow_id", "this id").toFailure();
    const state = this.state(recent);
    if (deliver && state.feedback) this.feedback.markAllDelivered(Date.now());
    return ok(state);
  }

  /** One task: outcome, files changed (the first files when there are many: `files_changed.more`), verification. */
  async task(account: string, taskId: string): Promise<Result<TaskView>> {
    const task = this.ownership.of(account, taskId) ? this.records.task(taskId) : null;
    return task ? ok(this.records.taskView(task)) : noWorkflowOrTask("task_id", taskId).toFailure();
  }

  // Paged reads (workflow/reader): what exports, resources and pages stream from, a bounded page at a time.

  /** The workflow without its tasks and logs; `asOwner` (an account) adds the share link's state. */
  async readHead(reader: Reader, asOwner: boolean): Promise<Result<WorkflowHead>> {
    return this.reader.head(reader, asOwner);
  }

  /**
   * The timeline after `cursor` (null: from the start): at most `limit` entries and LIMITS.READ_PAGE_BYTES;
   * with `filesPerTask`, each entry lists only its first files (pages render a bounded amount).
   */
  async readTasks(reader: Reader, cursor: string | null, limit: number, filesPerTask?: number): Promise<Result<TaskPage>> {
    return this.reader.tasks(reader, cursor, limit, filesPerTask);
  }

  /** One task for any reader; with `fromFile`, its files from that one on, LIMITS.FILES_PAGE of them (a page of its files page). */
  async readTask(reader: Reader, taskId: string, fromFile?: number): Promise<Result<TaskView>> {
    return this.reader.task(reader, taskId, fromFile);
  }

  /** One of the whole view's arrays in the whole view's order, a bounded page at a time (the JSON export). */
  async readRows(reader: Reader, kind: RecordKind, cursor: string | null, limit: number): Promise<Result<RowsPage>> {
    return this.reader.rows(reader, kind, cursor, limit);
  }

  /** One list of a completed task's record (added, renamed, lines, overlapping, …) after `cursor`: at most `limit` items and LIMITS.READ_PAGE_BYTES. */
  async readFiles(reader: Reader, taskId: string, list: FileList, cursor: string | null, limit: number): Promise<Result<FilesPage>> {
    return this.reader.files(reader, taskId, list, cursor, limit);
  }

  /** The device-signed payloads kept by events up to `throughSeq`, in parts after `after` (the JSON export), and whose record it is. */
  async readDeviceSigned(reader: Reader, after: number, throughSeq: number): Promise<Result<SignedPartsPage & { account: string }>> {
    return this.reader.deviceSigned(reader, after, throughSeq);
  }

  /** Events with seq > fromSeq, oldest first: at most `limit` and LIMITS.READ_PAGE_BYTES. Null: a share link's reader, already checked. */
  async events(reader: Reader | null, fromSeq: number, limit: number): Promise<Result<EventsPage & { last_seq: number }>> {
    return this.reader.events(reader, fromSeq, limit);
  }

  // ── Reviewer feedback (src/workflow/feedback.ts) ─────────────────────────

  /** Owner only: a comment or verdict on the workflow or one of its tasks, decisions or issues. */
  async addFeedback(account: string, input: NewFeedback & { idempotency_key?: string }): Promise<Result<FeedbackView>> {
    return this.writer.run(
      "add_feedback",
      input,
      () => this.ownership.workflow(account, "workflow_id", this.records.identity()?.id ?? ""),
      (workflow, w) => this.feedback.add(workflow.id, input, w),
      { enforceQuota: true, deliverFeedback: false },
    );
  }

  /**
   * Which task of this workflow a pull-request review comment on `path` (at `line`) is about
   * (workflow/task-files `taskForLine`): `made` are the tasks the account's commit index named for
   * the comment's commits. Null when no task here changed the file, or the account does not own it.
   */
  async reviewTarget(account: string, input: { path: string; line: number | null; made: string[] }): Promise<string | null> {
    if (!this.ownership.of(account)) return null;
    return this.records.files.taskForLine(input.path, input.line, new Set(input.made));
  }

  /** The feedback an agent has not seen yet that fits in one tool result, marked delivered; null when none. */
  async takeFeedback(account: string): Promise<FeedbackDigest | null> {
    const workflow = this.ownership.of(account);
    if (!workflow) return null;
    try {
      return this.ctx.storage.transactionSync(() => this.feedback.takeDigest(() => workflow.id, Date.now()));
    } catch (error) {
      this.feedback.forgetUncommitted();
      throw error;
    }
  }

  // ── Live followers (WebSocket hibernation) ───────────────────────────────

  /** The live feed (workflow/live-feed): never opened by a URL, only by a token or session checked here. */
  async fetch(request: Request): Promise<Response> {
    return this.liveFeed.open(request);
  }

  /** Sign-out: the account's object closes the live pages this session opened. */
  async closeOwnerSockets(session: string): Promise<void> {
    this.followers.closeSession(session, 4401, "signed out");
  }

  async webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (meter.on) meter.request("workflow", "message");
    this.followers.onMessage(socket, message);
  }

  async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    // close() takes only 1000 and 3000-4999: the codes a peer can report but never send (1005 no
    // status, 1006 abnormal closure, …) are answered with 1000; an invalid code threw uncaught.
    socket.close(code === 1000 || (code >= 3000 && code <= 4999) ? code : 1000, "closing");
  }

  // ── Share links (src/workflow/share.ts) ──────────────────────────────────

  /**
   * Whether any task of the workflow was recorded with this credential (the owner's session's):
   * the owner view says so, since a verdict from it on such a task is recorded as a comment.
   */
  async recordedWith(account: string, credential: string): Promise<Result<boolean>> {
    if (!this.ownership.of(account)) return noWorkflowOrTask("workflow_id", "this id").toFailure();
    return ok(this.records.recordedWith(credential));
  }

  /** The owner's link as it is: a read, so it never creates one (manageShare "rotate" does, for a write credential). */
  async shareLink(account: string): Promise<Result<ShareInfo>> {
    if (!this.ownership.of(account)) return noWorkflowOrTask("workflow_id", "this id").toFailure();
    return ok(await this.shareLinks.info());
  }

  /** Owner only. Rotating or revoking closes every open live page: they were let in by the old token. */
  async manageShare(account: string, action: ShareAction, expiresInSeconds: number | null): Promise<Result<ShareInfo>> {
    const workflow = this.ownership.of(account);
    if (!workflow) return noWorkflowOrTask("workflow_id", "this id").toFailure();
    const problem = expiryProblem(expiresInSeconds);
    if (problem) return fail("INPUT_VALIDATION_ERROR", problem);
    if (action === "rotate") await this.shareLinks.rotate(expiresInSeconds);
    else if (action === "revoke") this.shareLinks.revoke();
    else this.shareLinks.setExpiry(expiresInSeconds);
    if (action !== "set_expiry") this.followers.closeAll(4410, "no longer shared");
    if (action !== "revoke") await this.scheduleAlarm(null);
    return ok(await this.shareChanged(workflow.id, account));
  }

  /** One alarm serves two timers: a link's expiry (its live pages are closed) and an account push retry. */
  async alarm(): Promise<void> {
    if (meter.on) meter.request("workflow", "alarm");
    this.outbox.alarmFired();
    if ((await this.shareLinks.info()).status !== "active") this.followers.closeAll(4410, "no longer shared");
    if (this.outbox.pending()) await this.outbox.flush();
    this.outbox.saveAck();
    await this.scheduleAlarm(null);
  }

  // ── internals ─────────────────────────────────────────────────────────────

  private logOnTask(
    account: string,
    tool: string,
    table: LogTable,
    input: { task_id: string; idempotency_key?: string },
    insert: (task: LoggedTask, scope: WriteScope, earlier: number) => LogOutput,
  ): Promise<Result<LogOutput>> {
    return this.writer.run(
      tool,
      input,
      () => {
        const found = this.ownership.of(account, input.task_id) ? this.records.taskWithLogCount(input.task_id, table) : null;
        if (!found) throw noWorkflowOrTask("task_id", input.task_id);
        return found;
      },
      ({ task, logs }, w) => {
        this.lifecycle.openForLogs(task, table, logs);
        return insert(task, w, logs);
      },
    );
  }

  /** One alarm serves both timers: a link's expiry and an account push retry; the earliest wins. */
  private async scheduleAlarm(retryAt: number | null): Promise<void> {
    const expiry = this.shareLinks.expiresAt();
    const times = [retryAt, expiry !== null && expiry > Date.now() ? expiry : null].filter((t): t is number => t !== null);
    const current = await this.ctx.storage.getAlarm();
    const next = Math.min(...times, current ?? Number.POSITIVE_INFINITY);
    if (!Number.isFinite(next) || next === current) return;
    await this.ctx.storage.setAlarm(next);
    // Cloudflare bills each setAlarm as one row written.
    if (meter.on) meter.statement("workflow", 0, 1, "alarm");
  }

  private async shareChanged(workflowId: string, account: string): Promise<ShareInfo> {
    const info = await this.shareLinks.info();
    const index = accountStub(this.env, account);
    await index.recordShare(workflowId, { ...info, token: null });
    return info;
  }
}
