/**
 * @module workflow/object
 * One workflow: its tasks, logs, file changes and event log, in this Durable Object's SQLite.
 *
 * A thin facade: every public method is an RPC entry point (its signature is the contract the
 * MCP layer and the pages call), and each delegates to small collaborators that take the
 * object's `sql`: records (typed rows → views), the event log, idempotency records, running
 * totals and quotas, live followers, share links and the account outbox. Attribution of file
 * changes is the pure `attributeTask` of domain/attribution.
 *
 * Access: every method checks that the caller's account owns the workflow before anything
 * else, idempotent replays included, and answers NOT_FOUND otherwise, so ids of other
 * accounts reveal nothing. Share-link readers are let in only by a token this object checks.
 *
 * The one invariant the fan-out relies on is enforced in `write`: a write runs synchronously
 * in one transaction, and its events are broadcast to live followers before the next `await`,
 * so no other request can interleave between a commit and its broadcast (followers see events
 * in seq order, each once).
 */
import { DurableObject } from "cloudflare:workers";
import { AttributionInputError, attributeTask } from "../domain/attribution";
import type { Snapshot } from "../domain/changes";
import type { EventType, TaskView, Verification, WorkflowEvent, WorkflowSummary, WorkflowView } from "../domain/view";
import { fail, ok, type Result, WaymarkError } from "../errors";
import { newRowId, newTaskId, workflowOfTask } from "../ids";
import { LIMITS } from "../limits";
import { migrate } from "../storage/migrations";
import { type Sql, sqlFor } from "../storage/sql";
import { AccountOutbox, needsPromptPush } from "./account-outbox";
import { EventLog, type EventsPage } from "./event-log";
import { LiveFollowers } from "./followers";
import { IdempotencyRecords, requestHash } from "./idempotency";
import type {
  CompleteTaskInput,
  CompleteWorkflowInput,
  LogDecisionInput,
  LogIssueInput,
  LogMilestoneInput,
  StartTaskInput,
  StartWorkflowInput,
} from "./inputs";
import { iso, notFoundError, type WorkflowRecords as Records, type TaskRow, taskView, WorkflowRecords, type WorkflowRow } from "./records";
import { type ResumeInfo, resumeInfo } from "./resume";
import { WORKFLOW_MIGRATIONS } from "./schema";
import { MAX_SHARE_SECONDS, type ShareAction, type ShareInfo, ShareLinks, type ShareStatus } from "./share";
import { RunningTotals } from "./totals";

export type { EventsPage } from "./event-log";
export type { ResumeInfo } from "./resume";

export interface StartWorkflowOutput {
  workflow_id: string;
  created_at: string;
}
export interface StartTaskOutput {
  task_id: string;
  snapshot_id: string;
  snapshot_type: "git" | "checksum" | "none";
  started_at: string;
  warnings?: string[];
}
export interface LogOutput {
  id: string;
  task_id: string;
  warnings?: string[];
}
export interface CompleteTaskOutput {
  task_id: string;
  status: string;
  duration_seconds: number;
  files_changed: TaskView["files_changed"] & object;
  verification: Verification;
}
export interface CompleteWorkflowOutput {
  workflow_id: string;
  status: string;
  completed_at: string;
  duration_seconds: number;
  totals: WorkflowView["totals"];
}

/** The header a Worker route sets after verifying a share token; the object checks it again. */
export const SHARE_TOKEN_HEADER = "Waymark-Share-Token";
/** The client a live follower is counted against (the Worker passes CF-Connecting-IP). */
export const CLIENT_HEADER = "Waymark-Client";

/** What a write's mutation can do besides SQL: record events and count stored bytes. */
interface WriteScope {
  now: number;
  emit(type: EventType, taskId: string | null, data: WorkflowEvent["data"]): void;
  countBytes(bytes: number): void;
}

type LogTable = "decisions" | "issues" | "milestones";

export class WorkflowObject extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly records: Records;
  private readonly log: EventLog;
  private readonly idempotency: IdempotencyRecords;
  private readonly totals: RunningTotals;
  private readonly followers: LiveFollowers;
  private readonly shareLinks: ShareLinks;
  private readonly outbox: AccountOutbox;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = sqlFor(ctx.storage);
    this.records = new WorkflowRecords(this.sql);
    this.log = new EventLog(this.sql);
    this.idempotency = new IdempotencyRecords(this.sql);
    this.totals = new RunningTotals(this.sql);
    this.followers = new LiveFollowers(ctx, this.log);
    this.shareLinks = new ShareLinks(this.sql, env, () => this.records.workflow()?.id ?? "");
    this.outbox = new AccountOutbox(
      this.sql,
      this.log,
      this.records,
      this.totals,
      (account) => env.ACCOUNT.get(env.ACCOUNT.idFromName(account)),
      (at) => this.scheduleAlarm(at),
    );
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage, WORKFLOW_MIGRATIONS));
  }

  // ── RPC: tools ────────────────────────────────────────────────────────────

  async startWorkflow(account: string, id: string, input: StartWorkflowInput): Promise<Result<StartWorkflowOutput>> {
    const existing = this.records.workflow();
    if (existing) {
      // Only an idempotent retry can reach an existing object: ids are random otherwise.
      if (existing.account !== account) return notFoundError("workflow_id", id).toFailure();
      const replay = this.idempotency.replay<StartWorkflowOutput>(
        "start_workflow",
        input.idempotency_key,
        await requestHash("start_workflow", input),
      );
      return replay ?? fail("CONFLICT", `idempotency_key: already used for another request (workflow ${id})`);
    }
    const usage = await this.env.ACCOUNT.get(this.env.ACCOUNT.idFromName(account)).usage();
    if (usage.workflows >= LIMITS.ACCOUNT_WORKFLOWS) {
      return fail("QUOTA_EXCEEDED", `account: at most ${LIMITS.ACCOUNT_WORKFLOWS} workflows per account`);
    }
    if (usage.bytes_stored >= LIMITS.ACCOUNT_BYTES) {
      return fail("QUOTA_EXCEEDED", `account: at most ${LIMITS.ACCOUNT_BYTES} bytes stored per account`);
    }
    return this.write(
      "start_workflow",
      input,
      () => null,
      (_none, w) => {
        this.sql`INSERT INTO workflow (id, account, name, description, plan, created_at, updated_at)
        VALUES (${id}, ${account}, ${input.name}, ${input.description ?? null}, ${JSON.stringify(input.plan ?? [])}, ${w.now}, ${w.now})`;
        w.emit("workflow.started", null, this.records.header());
        return { workflow_id: id, created_at: iso(w.now) };
      },
    );
  }

  async startTask(account: string, input: StartTaskInput): Promise<Result<StartTaskOutput>> {
    return this.write(
      "start_task",
      input,
      () => this.owned(account, "workflow_id", input.workflow_id),
      (workflow, w) => {
        if (workflow.status !== "active") {
          throw new WaymarkError("CONFLICT", `workflow_id: workflow ${workflow.id} is already completed (${workflow.status})`);
        }
        if (this.totals.read().tasks >= LIMITS.TASKS_PER_WORKFLOW) {
          throw new WaymarkError("PAYLOAD_TOO_LARGE", `workflow_id: at most ${LIMITS.TASKS_PER_WORKFLOW} tasks per workflow`);
        }
        if (input.parent_task_id !== undefined) {
          const parent = this.records.task(input.parent_task_id);
          if (!parent) throw notFoundError("parent_task_id", input.parent_task_id);
          if (parent.status !== "in_progress") {
            throw new WaymarkError("CONFLICT", `parent_task_id: task ${parent.id} is already completed (${parent.status})`);
          }
        }
        const taskId = newTaskId(workflow.id);
        this.insertTask(taskId, input, w);
        this.totals.taskStarted();
        this.records.touch(w.now);
        w.emit("task.started", taskId, taskView(this.records.written(taskId)));
        const output: StartTaskOutput = {
          task_id: taskId,
          snapshot_id: snapshotId(input.snapshot, taskId),
          snapshot_type: input.snapshot?.type ?? "none",
          started_at: iso(w.now),
        };
        if (!input.snapshot) {
          output.warnings = [
            "No snapshot: file changes will not be computed. Run the agent through the Waymark helper (npx waymark-helper mcp) to record them.",
          ];
        }
        return output;
      },
    );
  }

  async logDecision(account: string, input: LogDecisionInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_decision", "decisions", input, (task, w) => {
      const id = newRowId("dc");
      this.sql`INSERT INTO decisions (id, task_id, category, question, options, chosen, reasoning, trade_offs, created_at)
        VALUES (${id}, ${task.id}, ${input.category}, ${input.question}, ${JSON.stringify(input.options_considered ?? [])},
                ${input.chosen}, ${input.reasoning}, ${input.trade_offs ?? null}, ${w.now})`;
      this.totals.decisionLogged();
      const decision = this.records.decision(id);
      if (decision) w.emit("decision.logged", task.id, decision);
      return { id, task_id: task.id };
    });
  }

  async logIssue(account: string, input: LogIssueInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_issue", "issues", input, (task, w) => {
      const id = newRowId("is");
      this.sql`INSERT INTO issues (id, task_id, type, description, resolution, requires_human_review, created_at)
        VALUES (${id}, ${task.id}, ${input.type}, ${input.description}, ${input.resolution}, ${input.requires_human_review ? 1 : 0}, ${w.now})`;
      this.totals.issueLogged(input.requires_human_review === true);
      const issue = this.records.issue(id);
      if (issue) w.emit("issue.logged", task.id, issue);
      return { id, task_id: task.id };
    });
  }

  async logMilestone(account: string, input: LogMilestoneInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_milestone", "milestones", input, (task, w) => {
      const id = newRowId("ms");
      this.sql`INSERT INTO milestones (id, task_id, message, progress, metadata, created_at)
        VALUES (${id}, ${task.id}, ${input.message}, ${input.progress ?? null}, ${input.metadata ? JSON.stringify(input.metadata) : null}, ${w.now})`;
      const milestone = this.records.milestone(id);
      if (milestone) w.emit("milestone.logged", task.id, milestone);
      const count = this.records.logCount("milestones", task.id);
      const output: LogOutput = { id, task_id: task.id };
      if (count > LIMITS.MILESTONES_ADVISED) {
        output.warnings = [`${count} milestones on this task; the protocol advises at most ${LIMITS.MILESTONES_ADVISED}.`];
      }
      return output;
    });
  }

  async completeTask(account: string, input: CompleteTaskInput): Promise<Result<CompleteTaskOutput>> {
    return this.write(
      "complete_task",
      input,
      () => this.ownedTask(account, input.task_id),
      (task, w) => {
        if (task.status !== "in_progress") {
          throw new WaymarkError(
            "CONFLICT",
            `task_id: task ${task.id} was already completed (${task.status}) at ${task.completed_at === null ? "?" : iso(task.completed_at)}; retry with the same idempotency_key to get the first result`,
          );
        }
        const openChildren = this.records.openChildren(task.id);
        if (openChildren.length > 0) {
          const names = openChildren.map((c) => `${c.id} (${c.name})`).join(", ");
          throw new WaymarkError("CONFLICT", `task_id: subtasks still open: ${names}; complete them first`);
        }
        const attribution = this.attribute(task, input, w.now);
        const newPaths = this.records.storeChanges(task.id, attribution.changes, attribution.unexpected);
        const duration = Math.max(0, Math.round((w.now - task.started_at) / 1000));
        this.sql`UPDATE tasks SET status = ${input.status}, completed_at = ${w.now}, duration_seconds = ${duration},
          outcome = ${JSON.stringify(input.outcome)}, metadata = ${input.metadata ? JSON.stringify(input.metadata) : null},
          files_changed = ${JSON.stringify(attribution.files_changed)}, verification = ${JSON.stringify(attribution.verification)},
          input_tokens = ${input.metrics?.input_tokens ?? null}, output_tokens = ${input.metrics?.output_tokens ?? null},
          model = ${input.metrics?.model ?? null}, cost_usd = ${input.metrics?.cost_usd ?? null}
          WHERE id = ${task.id}`;
        this.totals.taskCompleted({
          topLevel: task.parent_id === null,
          duration,
          newPaths,
          review: input.outcome.manual_review_needed === true,
          input_tokens: input.metrics?.input_tokens ?? 0,
          output_tokens: input.metrics?.output_tokens ?? 0,
          cost_usd: input.metrics?.cost_usd ?? 0,
        });
        this.records.touch(w.now);
        w.emit("task.completed", task.id, taskView(this.records.written(task.id)));
        this.reportOverlapToEarlierTasks(task.id, attribution.verification, w);
        return {
          task_id: task.id,
          status: input.status,
          duration_seconds: duration,
          files_changed: attribution.files_changed,
          verification: attribution.verification,
        };
      },
      { enforceQuota: false },
    );
  }

  async completeWorkflow(account: string, input: CompleteWorkflowInput): Promise<Result<CompleteWorkflowOutput>> {
    return this.write(
      "complete_workflow",
      input,
      () => this.owned(account, "workflow_id", input.workflow_id),
      (workflow, w) => {
        if (workflow.status !== "active") {
          throw new WaymarkError(
            "CONFLICT",
            `workflow_id: workflow ${workflow.id} was already completed (${workflow.status}); retry with the same idempotency_key to get the first result`,
          );
        }
        const open = this.records.openTasks();
        if (open.length > 0) {
          throw new WaymarkError(
            "CONFLICT",
            `workflow_id: tasks still open: ${open.map((t) => `${t.id} (${t.name})`).join(", ")}; complete them first`,
          );
        }
        const outcome = { summary: input.summary, achievements: input.achievements ?? [], limitations: input.limitations ?? [] };
        this
          .sql`UPDATE workflow SET status = ${input.status}, outcome = ${JSON.stringify(outcome)}, completed_at = ${w.now}, updated_at = ${w.now}`;
        w.emit("workflow.completed", null, this.records.header());
        return {
          workflow_id: workflow.id,
          status: input.status,
          completed_at: iso(w.now),
          duration_seconds: Math.round((w.now - workflow.created_at) / 1000),
          totals: this.totals.read(),
        };
      },
      { enforceQuota: false },
    );
  }

  // ── RPC: reads ────────────────────────────────────────────────────────────

  /** The whole workflow. `account` null means the caller was already authorised by a share link. */
  async view(account: string | null): Promise<Result<WorkflowView>> {
    if (!this.readable(account)) return notFoundError("workflow_id", "this id").toFailure();
    return ok(this.buildView());
  }

  async summary(account: string | null): Promise<Result<WorkflowSummary>> {
    if (!this.readable(account)) return notFoundError("workflow_id", "this id").toFailure();
    return ok(this.records.summary(this.totals));
  }

  /** What an agent needs to pick up after losing its context: open tasks, recent logs, next steps. */
  async resume(account: string, recent: number): Promise<Result<ResumeInfo>> {
    if (!this.readable(account)) return notFoundError("workflow_id", "this id").toFailure();
    return ok(resumeInfo(this.sql, this.records, this.totals, recent));
  }

  /** One task in full: outcome, files changed, verification. */
  async task(account: string, taskId: string): Promise<Result<TaskView>> {
    const task = this.readable(account) ? this.records.task(taskId) : null;
    return task ? ok(taskView(task)) : notFoundError("task_id", taskId).toFailure();
  }

  /** Events with seq > fromSeq, oldest first, at most `limit`. */
  async events(account: string | null, fromSeq: number, limit: number): Promise<Result<EventsPage & { last_seq: number }>> {
    if (!this.readable(account)) return notFoundError("workflow_id", "this id").toFailure();
    return ok({ ...this.log.after(fromSeq, limit), last_seq: this.log.lastSeq() });
  }

  /** Waits until the account index has every event (tests and tools that read the index right after a write). */
  async flushAccount(): Promise<void> {
    await this.outbox.flush();
  }

  // ── Live followers (WebSocket hibernation) ───────────────────────────────

  /**
   * The live feed. The URL is never trusted: only a request carrying a share token that this
   * object verifies now is let in; anything else is refused.
   */
  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const token = request.headers.get(SHARE_TOKEN_HEADER);
    if (!token) return new Response("forbidden", { status: 403 });
    const status = await this.shareLinks.check(token);
    if (status !== "active")
      return new Response("This workflow is no longer shared.", { status: status === "not_found" || status === "none" ? 404 : 410 });
    const client = request.headers.get(CLIENT_HEADER) ?? "unknown";
    const refusal = this.followers.refusal(client);
    if (refusal) return new Response(`Too many live pages: ${refusal}.`, { status: 429, headers: { "Retry-After": "60" } });
    const after = Number(new URL(request.url).searchParams.get("after") ?? "0");
    const pair = new WebSocketPair();
    this.followers.accept(pair[1], client, Number.isInteger(after) && after >= 0 ? Math.min(after, this.log.lastSeq()) : 0);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  async webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.followers.onMessage(socket, message);
  }

  async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    socket.close(code === 1005 ? 1000 : code, "closing");
  }

  // ── Share links (src/workflow/share.ts) ──────────────────────────────────

  /** The owner's link, created on first request (start_workflow asks right after creating the workflow). */
  async shareLink(account: string): Promise<Result<ShareInfo>> {
    const workflow = this.records.workflow();
    if (!workflow || workflow.account !== account) return notFoundError("workflow_id", "this id").toFailure();
    await this.shareLinks.ensure();
    return ok(await this.shareChanged(workflow.id, account));
  }

  /** Owner only. Rotating or revoking closes every open live page: they were let in by the old token. */
  async manageShare(account: string, action: ShareAction, expiresInSeconds: number | null): Promise<Result<ShareInfo>> {
    const workflow = this.records.workflow();
    if (!workflow || workflow.account !== account) return notFoundError("workflow_id", "this id").toFailure();
    if (
      expiresInSeconds !== null &&
      !(Number.isInteger(expiresInSeconds) && expiresInSeconds > 0 && expiresInSeconds <= MAX_SHARE_SECONDS)
    ) {
      return fail(
        "INPUT_VALIDATION_ERROR",
        `expires_in_seconds: must be a whole number of seconds from 1 to ${MAX_SHARE_SECONDS}, or null for no expiry`,
      );
    }
    if (action === "rotate") await this.shareLinks.rotate(expiresInSeconds);
    else if (action === "revoke") this.shareLinks.revoke();
    else this.shareLinks.setExpiry(expiresInSeconds);
    if (action !== "set_expiry") this.followers.closeAll(4410, "no longer shared");
    if (action !== "revoke") await this.scheduleAlarm(null);
    return ok(await this.shareChanged(workflow.id, account));
  }

  /** The whole workflow for a share-link reader, or why not ("revoked"/"expired" → the page says "no longer shared"). */
  async sharedView(token: string): Promise<{ status: ShareStatus | "not_found"; view: WorkflowView | null }> {
    const status = await this.shareLinks.check(token);
    return { status, view: status === "active" ? this.buildView() : null };
  }

  /** One alarm serves two timers: a link's expiry (its live pages are closed) and an account push retry. */
  async alarm(): Promise<void> {
    if ((await this.shareLinks.info()).status !== "active") this.followers.closeAll(4410, "no longer shared");
    if (this.outbox.pending()) await this.outbox.flush();
    await this.scheduleAlarm(null);
  }

  // ── internals ─────────────────────────────────────────────────────────────

  /**
   * Runs a mutation atomically. `authorize` runs first, inside the transaction, so an
   * idempotent replay is only ever returned to the workflow's owner. With an idempotency key a
   * retry of the same request returns the stored first result; the same key with other input
   * is a CONFLICT. Events are broadcast before the first await after the commit (see the
   * module comment); the account index is updated off the reply path, except for the events
   * resume-by-name depends on.
   */
  private async write<C, T>(
    tool: string,
    input: { idempotency_key?: string },
    authorize: () => C,
    mutate: (context: C, scope: WriteScope) => T,
    options: { enforceQuota: boolean } = { enforceQuota: true },
  ): Promise<Result<T>> {
    const hash = await requestHash(tool, input);
    let events: WorkflowEvent[] = [];
    let result: Result<T>;
    try {
      result = this.ctx.storage.transactionSync(() => {
        const context = authorize();
        const replayed = this.idempotency.replay<T>(tool, input.idempotency_key, hash);
        if (replayed) return replayed;
        const written: WorkflowEvent[] = [];
        let bytes = 0;
        const scope: WriteScope = {
          now: Date.now(),
          emit: (type, taskId, data) => {
            const appended = this.log.append(scope.now, type, taskId, data);
            written.push(appended.event);
            bytes += appended.bytes;
          },
          countBytes: (n) => {
            bytes += n;
          },
        };
        const value = mutate(context, scope);
        this.totals.countWrite(written.length, bytes, options.enforceQuota);
        this.idempotency.record(tool, input.idempotency_key, hash, value, scope.now);
        events = written;
        return ok(value);
      });
    } catch (error) {
      if (error instanceof WaymarkError) return error.toFailure();
      throw error;
    }
    this.followers.broadcast(events);
    if (events.length > 0) {
      const pushed = this.outbox.flush();
      if (needsPromptPush(events)) await pushed;
      else this.ctx.waitUntil(pushed);
    }
    return result;
  }

  private logOnTask(
    account: string,
    tool: string,
    table: LogTable,
    input: { task_id: string; idempotency_key?: string },
    insert: (task: TaskRow, scope: WriteScope) => LogOutput,
  ): Promise<Result<LogOutput>> {
    return this.write(
      tool,
      input,
      () => this.ownedTask(account, input.task_id),
      (task, w) => {
        if (task.status !== "in_progress") {
          throw new WaymarkError("CONFLICT", `task_id: task ${task.id} is already completed (${task.status}); log on an open task`);
        }
        if (this.records.logCount(table, task.id) >= LIMITS.LOGS_PER_TASK) {
          throw new WaymarkError("PAYLOAD_TOO_LARGE", `task_id: at most ${LIMITS.LOGS_PER_TASK} ${table} per task`);
        }
        this.records.touch(w.now);
        return insert(task, w);
      },
    );
  }

  /** The workflow, if `account` owns it; a task id must also belong to this workflow. */
  private owned(account: string, field: string, id: string): WorkflowRow {
    const workflow = this.records.workflow();
    const belongs = workflow && workflow.account === account && (id === workflow.id || workflowOfTask(id) === workflow.id);
    if (!workflow || !belongs) throw notFoundError(field, id);
    return workflow;
  }

  private ownedTask(account: string, taskId: string): TaskRow {
    this.owned(account, "task_id", taskId);
    const task = this.records.task(taskId);
    if (!task) throw notFoundError("task_id", taskId);
    return task;
  }

  private readable(account: string | null): boolean {
    const workflow = this.records.workflow();
    return workflow !== null && (account === null || workflow.account === account);
  }

  private insertTask(taskId: string, input: StartTaskInput, w: WriteScope): void {
    const snapshot = input.snapshot;
    const meta =
      snapshot?.type === "checksum"
        ? { files: snapshot.files, digest: snapshot.digest }
        : snapshot?.type === "git"
          ? { branch: snapshot.branch ?? null, dirty: snapshot.dirty.length }
          : null;
    this.sql`INSERT INTO tasks (id, parent_id, name, goal, areas, snapshot_type, snapshot_head, snapshot_meta, started_at)
      VALUES (${taskId}, ${input.parent_task_id ?? null}, ${input.name}, ${input.goal}, ${JSON.stringify(input.areas ?? [])},
              ${snapshot?.type ?? "none"}, ${snapshot?.type === "git" ? snapshot.head : null}, ${meta ? JSON.stringify(meta) : null}, ${w.now})`;
    if (snapshot?.type !== "git") return;
    for (const entry of snapshot.dirty) {
      this.sql`INSERT INTO snapshot_entries (task_id, path, head_mode, head_blob, worktree_mode, worktree_blob)
        VALUES (${taskId}, ${entry.path}, ${entry.head?.mode ?? null}, ${entry.head?.blob ?? null},
                ${entry.worktree?.mode ?? null}, ${entry.worktree?.blob ?? null})
        ON CONFLICT (task_id, path) DO UPDATE SET head_mode = excluded.head_mode, head_blob = excluded.head_blob,
          worktree_mode = excluded.worktree_mode, worktree_blob = excluded.worktree_blob`;
      w.countBytes(entry.path.length + 100);
    }
  }

  private attribute(task: TaskRow, input: CompleteTaskInput, now: number) {
    try {
      return attributeTask({
        snapshot: this.records.storedSnapshot(task),
        changes: input.changes ?? null,
        areas: JSON.parse(task.areas) as string[],
        task: this.records.window(task, now),
        concurrent: this.records.completedDuring(task),
        manualReview: { needed: input.outcome.manual_review_needed === true, reason: input.outcome.manual_review_reason },
      });
    } catch (error) {
      if (error instanceof AttributionInputError) throw new WaymarkError("INPUT_VALIDATION_ERROR", error.message);
      throw error;
    }
  }

  /** Overlap is reported on both tasks: the earlier one learns of it when the later one completes. */
  private reportOverlapToEarlierTasks(taskId: string, verification: Verification, w: WriteScope): void {
    const byTask = new Map<string, { path: string; task_id: string; same_change: boolean }[]>();
    for (const overlap of verification.overlapping ?? []) {
      const list = byTask.get(overlap.task_id) ?? [];
      list.push({ path: overlap.path, task_id: taskId, same_change: overlap.same_change });
      byTask.set(overlap.task_id, list);
    }
    for (const [otherId, added] of byTask) {
      const other = this.records.task(otherId);
      if (!other?.verification) continue;
      const current = JSON.parse(other.verification) as Verification;
      const merged: Verification = { ...current, overlapping: [...(current.overlapping ?? []), ...added] };
      this.sql`UPDATE tasks SET verification = ${JSON.stringify(merged)} WHERE id = ${otherId}`;
      w.emit("task.updated", otherId, taskView(this.records.written(otherId)));
    }
  }

  private buildView(): WorkflowView {
    return {
      workflow: this.records.header(),
      tasks: this.records.tasks(),
      decisions: this.records.decisions(),
      issues: this.records.issues(),
      milestones: this.records.milestones(),
      totals: this.totals.read(),
      last_seq: this.log.lastSeq(),
    };
  }

  /** One alarm serves both timers: a link's expiry and an account push retry; the earliest wins. */
  private async scheduleAlarm(retryAt: number | null): Promise<void> {
    const expiry = this.shareLinks.expiresAt();
    const times = [retryAt, expiry !== null && expiry > Date.now() ? expiry : null].filter((t): t is number => t !== null);
    const current = await this.ctx.storage.getAlarm();
    const next = Math.min(...times, current ?? Number.POSITIVE_INFINITY);
    if (Number.isFinite(next) && next !== current) await this.ctx.storage.setAlarm(next);
  }

  private async shareChanged(workflowId: string, account: string): Promise<ShareInfo> {
    const info = await this.shareLinks.info();
    const index = this.env.ACCOUNT.get(this.env.ACCOUNT.idFromName(account));
    await index.recordShare(workflowId, { ...info, token: null });
    return info;
  }
}

function snapshotId(snapshot: Snapshot | undefined, taskId: string): string {
  if (snapshot?.type === "git") return snapshot.head ?? `git-empty:${taskId}`;
  if (snapshot?.type === "checksum") return `checksum:${snapshot.digest.slice(0, 16)}`;
  return `none:${taskId}`;
}
