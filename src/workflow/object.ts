import { DurableObject } from "cloudflare:workers";
import { documentsFromEvents } from "../account/memory";
import { roundCost } from "../account/object";
import { notificationsFromEvents } from "../account/webhooks";
import { computeNetChanges, type FilesChanged, type PathChange, type Snapshot, summarizeChanges } from "../domain/changes";
import { attributeOverlaps, type CompletedTaskChanges } from "../domain/overlap";
import { checkScope } from "../domain/scope";
import { type Failure, fail, ok, type Result, WaymarkError } from "../errors";
import { newRowId, newTaskId, workflowOfTask } from "../ids";
import { LIMITS } from "../limits";
import type {
  CompleteTaskInput,
  CompleteWorkflowInput,
  LogDecisionInput,
  LogIssueInput,
  LogMilestoneInput,
  StartTaskInput,
  StartWorkflowInput,
} from "./inputs";
import { migrate, WORKFLOW_MIGRATIONS } from "./schema";
import { MAX_SHARE_SECONDS, type ShareAction, type ShareInfo, ShareLinks, type ShareStatus } from "./share";
import { type Sql, sqlFor } from "./sql";
import type {
  DecisionView,
  EventType,
  IssueView,
  JsonObject,
  MilestoneView,
  TaskView,
  Verification,
  WorkflowEvent,
  WorkflowHeader,
  WorkflowSummary,
  WorkflowView,
} from "./view";

export interface StartWorkflowOutput {
  workflow_id: string;
  created_at: string;
}
export interface StartTaskOutput {
  task_id: string;
  snapshot_id: string;
  snapshot_type: "git" | "checksum" | "unavailable" | "none";
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
  files_changed: FilesChanged;
  verification: Verification;
}
export interface CompleteWorkflowOutput {
  workflow_id: string;
  status: string;
  completed_at: string;
  duration_seconds: number;
  totals: WorkflowView["totals"];
}
export interface ResumeInfo {
  workflow: Pick<WorkflowHeader, "id" | "name" | "status" | "description" | "plan">;
  open_tasks: { task_id: string; parent_task_id: string | null; name: string; goal: string; started_at: string; last_milestone?: string }[];
  recent_decisions: { task_id: string; question: string; chosen: string }[];
  recent_issues: { task_id: string; type: string; description: string; requires_human_review: boolean }[];
  next_steps: string[];
  totals: WorkflowView["totals"];
}
export interface EventsPage {
  events: WorkflowEvent[];
  next_seq: number;
  has_more: boolean;
}

type TaskRow = {
  id: string;
  parent_id: string | null;
  name: string;
  goal: string;
  areas: string;
  status: string;
  snapshot_type: string;
  snapshot_head: string | null;
  snapshot_meta: string | null;
  started_at: number;
  completed_at: number | null;
  duration_seconds: number | null;
  outcome: string | null;
  metadata: string | null;
  files_changed: string | null;
  verification: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  model: string | null;
  cost_usd: number | null;
};
type WorkflowRow = {
  id: string;
  account: string;
  name: string;
  description: string | null;
  plan: string;
  status: string;
  outcome: string | null;
  created_at: number;
  completed_at: number | null;
  updated_at: number;
};

/** How long a failed push to the account index waits before the alarm tries again. */
const ACCOUNT_SYNC_RETRY_MS = 10_000;

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));
const parse = <T>(json: string | null): T | null => (json === null ? null : (JSON.parse(json) as T));

/** Same input → same hash: decides whether a reused idempotency key is a retry or a mistake. */
async function requestHash(tool: string, input: object): Promise<string> {
  const { idempotency_key: _key, ...rest } = input as Record<string, unknown>;
  const bytes = new TextEncoder().encode(`${tool}\n${JSON.stringify(rest)}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * One workflow: its tasks, logs, file changes and event log, in this object's SQLite.
 * Every public method is an RPC entry point; each checks that the caller's account
 * owns the workflow and answers NOT_FOUND otherwise, so ids of other accounts reveal nothing.
 * Writes run synchronously inside one transaction: a request is stored whole or not at all.
 */
export class WorkflowObject extends DurableObject<Env> {
  private readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = sqlFor(ctx.storage);
    ctx.blockConcurrencyWhile(async () => migrate(ctx.storage, WORKFLOW_MIGRATIONS));
  }

  // ── RPC: tools ────────────────────────────────────────────────────────────

  async startWorkflow(account: string, id: string, input: StartWorkflowInput): Promise<Result<StartWorkflowOutput>> {
    const hash = await requestHash("start_workflow", input);
    const existing = this.workflowRow();
    if (existing) {
      // Only an idempotent retry can reach an existing object: ids are random otherwise.
      if (existing.account !== account) return notFound("workflow_id", id);
      const replay = this.replay<StartWorkflowOutput>("start_workflow", input.idempotency_key, hash);
      return replay ?? fail("CONFLICT", `idempotency_key: already used for another request (workflow ${id})`);
    }
    const result = this.write("start_workflow", input.idempotency_key, hash, () => {
      const now = Date.now();
      this.sql`INSERT INTO workflow (id, account, name, description, plan, created_at, updated_at)
        VALUES (${id}, ${account}, ${input.name}, ${input.description ?? null}, ${JSON.stringify(input.plan ?? [])}, ${now}, ${now})`;
      this.appendEvent(now, "workflow.started", null, this.header());
      return { workflow_id: id, created_at: iso(now) };
    });
    await this.afterWrite(result);
    return result;
  }

  async startTask(account: string, input: StartTaskInput): Promise<Result<StartTaskOutput>> {
    const hash = await requestHash("start_task", input);
    const result = this.write("start_task", input.idempotency_key, hash, () => {
      const workflow = this.ownedWorkflow(account, "workflow_id", input.workflow_id);
      if (workflow.status !== "active") {
        throw new WaymarkError("CONFLICT", `workflow_id: workflow ${workflow.id} is already completed (${workflow.status})`);
      }
      const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM tasks`[0]?.n ?? 0;
      if (count >= LIMITS.TASKS_PER_WORKFLOW) {
        throw new WaymarkError("PAYLOAD_TOO_LARGE", `workflow_id: at most ${LIMITS.TASKS_PER_WORKFLOW} tasks per workflow`);
      }
      if (input.parent_task_id !== undefined) {
        const parent = this.taskRow(input.parent_task_id);
        if (!parent) throw notFoundError("parent_task_id", input.parent_task_id);
        if (parent.status !== "in_progress") {
          throw new WaymarkError("CONFLICT", `parent_task_id: task ${parent.id} is already completed (${parent.status})`);
        }
      }
      const now = Date.now();
      const taskId = newTaskId(workflow.id);
      const snapshot = input.snapshot;
      const snapshotType = snapshot?.type ?? "none";
      const head = snapshot?.type === "git" ? snapshot.head : null;
      const meta =
        snapshot?.type === "checksum"
          ? { files: snapshot.files, digest: snapshot.digest }
          : snapshot?.type === "git"
            ? { branch: snapshot.branch ?? null, dirty: snapshot.dirty.length }
            : null;
      this.sql`INSERT INTO tasks (id, parent_id, name, goal, areas, snapshot_type, snapshot_head, snapshot_meta, started_at)
        VALUES (${taskId}, ${input.parent_task_id ?? null}, ${input.name}, ${input.goal}, ${JSON.stringify(input.areas ?? [])},
                ${snapshotType}, ${head}, ${meta ? JSON.stringify(meta) : null}, ${now})`;
      if (snapshot?.type === "git") {
        for (const entry of snapshot.dirty) {
          this.sql`INSERT INTO snapshot_entries (task_id, path, head_mode, head_blob, worktree_mode, worktree_blob)
            VALUES (${taskId}, ${entry.path}, ${entry.head?.mode ?? null}, ${entry.head?.blob ?? null},
                    ${entry.worktree?.mode ?? null}, ${entry.worktree?.blob ?? null})
            ON CONFLICT (task_id, path) DO UPDATE SET head_mode = excluded.head_mode, head_blob = excluded.head_blob,
              worktree_mode = excluded.worktree_mode, worktree_blob = excluded.worktree_blob`;
        }
      }
      this.touch(now);
      const task = this.taskView(this.requireTask(taskId));
      this.appendEvent(now, "task.started", taskId, task);
      const output: StartTaskOutput = {
        task_id: taskId,
        snapshot_id: snapshotId(snapshot, taskId),
        snapshot_type: snapshotType,
        started_at: iso(now),
      };
      if (!snapshot) {
        output.warnings = [
          "No snapshot: file changes will not be computed. Run the agent through the Waymark helper (npx waymark-helper mcp) to record them.",
        ];
      }
      return output;
    });
    await this.afterWrite(result);
    return result;
  }

  async logDecision(account: string, input: LogDecisionInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_decision", input, (now, task) => {
      const id = newRowId("dc");
      this.sql`INSERT INTO decisions (id, task_id, category, question, options, chosen, reasoning, trade_offs, created_at)
        VALUES (${id}, ${task.id}, ${input.category}, ${input.question}, ${JSON.stringify(input.options_considered ?? [])},
                ${input.chosen}, ${input.reasoning}, ${input.trade_offs ?? null}, ${now})`;
      const decision = this.decisions(id)[0];
      if (decision) this.appendEvent(now, "decision.logged", task.id, decision);
      return { id, task_id: task.id };
    });
  }

  async logIssue(account: string, input: LogIssueInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_issue", input, (now, task) => {
      const id = newRowId("is");
      this.sql`INSERT INTO issues (id, task_id, type, description, resolution, requires_human_review, created_at)
        VALUES (${id}, ${task.id}, ${input.type}, ${input.description}, ${input.resolution}, ${input.requires_human_review ? 1 : 0}, ${now})`;
      const issue = this.issues(id)[0];
      if (issue) this.appendEvent(now, "issue.logged", task.id, issue);
      return { id, task_id: task.id };
    });
  }

  async logMilestone(account: string, input: LogMilestoneInput): Promise<Result<LogOutput>> {
    return this.logOnTask(account, "log_milestone", input, (now, task) => {
      const id = newRowId("ms");
      this.sql`INSERT INTO milestones (id, task_id, message, progress, metadata, created_at)
        VALUES (${id}, ${task.id}, ${input.message}, ${input.progress ?? null}, ${input.metadata ? JSON.stringify(input.metadata) : null}, ${now})`;
      const milestone = this.milestones(id)[0];
      if (milestone) this.appendEvent(now, "milestone.logged", task.id, milestone);
      const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM milestones WHERE task_id = ${task.id}`[0]?.n ?? 0;
      const output: LogOutput = { id, task_id: task.id };
      if (count > LIMITS.MILESTONES_ADVISED) {
        output.warnings = [`${count} milestones on this task; the protocol advises at most ${LIMITS.MILESTONES_ADVISED}.`];
      }
      return output;
    });
  }

  async completeTask(account: string, input: CompleteTaskInput): Promise<Result<CompleteTaskOutput>> {
    const hash = await requestHash("complete_task", input);
    const result = this.write("complete_task", input.idempotency_key, hash, () => {
      this.ownedWorkflow(account, "task_id", input.task_id);
      const task = this.taskRow(input.task_id);
      if (!task) throw notFoundError("task_id", input.task_id);
      if (task.status !== "in_progress") {
        throw new WaymarkError(
          "CONFLICT",
          `task_id: task ${task.id} was already completed (${task.status}) at ${isoOrNull(task.completed_at)}; retry with the same idempotency_key to get the first result`,
        );
      }
      const openChildren = this.sql<{
        id: string;
        name: string;
      }>`SELECT id, name FROM tasks WHERE parent_id = ${task.id} AND status = 'in_progress' ORDER BY started_at`;
      if (openChildren.length > 0) {
        const names = openChildren.map((c) => `${c.id} (${c.name})`).join(", ");
        throw new WaymarkError("CONFLICT", `task_id: subtasks still open: ${names}; complete them first`);
      }
      const now = Date.now();
      const warnings: string[] = [];
      let changes: PathChange[] = [];
      let overlapping: Verification["overlapping"];
      if (input.changes) {
        const snapshot = this.storedSnapshot(task);
        try {
          changes = snapshot ? computeNetChanges(snapshot, input.changes) : this.changesWithoutSnapshot(input.changes.type, input);
        } catch (error) {
          if (error instanceof WaymarkError) throw error;
          const message = error instanceof Error ? error.message : String(error);
          throw new WaymarkError("INPUT_VALIDATION_ERROR", message.startsWith("changes") ? message : `changes: ${message}`);
        }
        const attributed = attributeOverlaps({ window: this.window(task, now), changes }, this.completedDuring(task));
        changes = attributed.kept;
        if (attributed.overlaps.length > 0) {
          overlapping = attributed.overlaps;
          const others = [...new Set(attributed.overlaps.map((o) => o.task_id))].join(", ");
          warnings.push(
            `${attributed.overlaps.length} file(s) also changed by concurrently open task(s) ${others}; identical changes are attributed once, to the task that completed first.`,
          );
        }
      } else {
        warnings.push(
          "File changes were not computed: complete_task was called without helper data. Run the agent through the Waymark helper (npx waymark-helper mcp) so start_task and complete_task carry git snapshots.",
        );
      }
      const areas = JSON.parse(task.areas) as string[];
      const scope = checkScope(
        areas,
        changes.map((c) => c.path),
      );
      const unexpected = new Set(scope.unexpected_files);
      const filesChanged = summarizeChanges(changes);
      const verification: Verification = {
        scope_match: scope.scope_match,
        unexpected_files: scope.unexpected_files,
        warnings: [...scope.warnings, ...warnings],
      };
      if (overlapping) verification.overlapping = overlapping;
      if (input.outcome.manual_review_needed) {
        verification.warnings.push(
          `Manual review needed${input.outcome.manual_review_reason ? `: ${input.outcome.manual_review_reason}` : "."}`,
        );
      }
      for (const change of changes) {
        this.sql`INSERT INTO file_changes (task_id, path, status, before_mode, before_blob, after_mode, after_blob, committed, in_scope)
          VALUES (${task.id}, ${change.path}, ${change.status}, ${change.before?.mode ?? null}, ${change.before?.blob ?? null},
                  ${change.after?.mode ?? null}, ${change.after?.blob ?? null}, ${change.committed ? 1 : 0}, ${unexpected.has(change.path) ? 0 : 1})`;
      }
      const duration = Math.max(0, Math.round((now - task.started_at) / 1000));
      this.sql`UPDATE tasks SET status = ${input.status}, completed_at = ${now}, duration_seconds = ${duration},
        outcome = ${JSON.stringify(input.outcome)}, metadata = ${input.metadata ? JSON.stringify(input.metadata) : null},
        files_changed = ${JSON.stringify(filesChanged)}, verification = ${JSON.stringify(verification)},
        input_tokens = ${input.metrics?.input_tokens ?? null}, output_tokens = ${input.metrics?.output_tokens ?? null},
        model = ${input.metrics?.model ?? null}, cost_usd = ${input.metrics?.cost_usd ?? null}
        WHERE id = ${task.id}`;
      this.touch(now);
      this.appendEvent(now, "task.completed", task.id, this.taskView(this.requireTask(task.id)));
      return { task_id: task.id, status: input.status, duration_seconds: duration, files_changed: filesChanged, verification };
    });
    await this.afterWrite(result);
    return result;
  }

  async completeWorkflow(account: string, input: CompleteWorkflowInput): Promise<Result<CompleteWorkflowOutput>> {
    const hash = await requestHash("complete_workflow", input);
    const result = this.write("complete_workflow", input.idempotency_key, hash, () => {
      const workflow = this.ownedWorkflow(account, "workflow_id", input.workflow_id);
      if (workflow.status !== "active") {
        throw new WaymarkError(
          "CONFLICT",
          `workflow_id: workflow ${workflow.id} was already completed (${workflow.status}); retry with the same idempotency_key to get the first result`,
        );
      }
      const open = this.sql<{ id: string; name: string }>`SELECT id, name FROM tasks WHERE status = 'in_progress' ORDER BY started_at`;
      if (open.length > 0) {
        throw new WaymarkError(
          "CONFLICT",
          `workflow_id: tasks still open: ${open.map((t) => `${t.id} (${t.name})`).join(", ")}; complete them first`,
        );
      }
      const now = Date.now();
      const outcome = { summary: input.summary, achievements: input.achievements ?? [], limitations: input.limitations ?? [] };
      this
        .sql`UPDATE workflow SET status = ${input.status}, outcome = ${JSON.stringify(outcome)}, completed_at = ${now}, updated_at = ${now}`;
      this.appendEvent(now, "workflow.completed", null, this.header());
      return {
        workflow_id: workflow.id,
        status: input.status,
        completed_at: iso(now),
        duration_seconds: Math.round((now - workflow.created_at) / 1000),
        totals: this.totals(),
      };
    });
    await this.afterWrite(result);
    return result;
  }

  // ── RPC: reads ────────────────────────────────────────────────────────────

  /** The whole workflow. `account` null means the caller was already authorised by a share link. */
  async view(account: string | null): Promise<Result<WorkflowView>> {
    const workflow = this.workflowRow();
    if (!workflow || (account !== null && workflow.account !== account)) return notFound("workflow_id", "this id");
    return ok(this.buildView());
  }

  async summary(account: string | null): Promise<Result<WorkflowSummary>> {
    const workflow = this.workflowRow();
    if (!workflow || (account !== null && workflow.account !== account)) return notFound("workflow_id", "this id");
    return ok(this.summaryOf(workflow));
  }

  /** What an agent needs to pick up after losing its context: open tasks, recent logs, next steps. */
  async resume(account: string, recent: number): Promise<Result<ResumeInfo>> {
    const workflow = this.workflowRow();
    if (!workflow || workflow.account !== account) return notFound("workflow_id", "this id");
    const header = this.header();
    const open = this.sql<TaskRow>`SELECT * FROM tasks WHERE status = 'in_progress' ORDER BY started_at`;
    const lastMilestone = (taskId: string) =>
      this.sql<{ message: string }>`SELECT message FROM milestones WHERE task_id = ${taskId} ORDER BY created_at DESC, id DESC LIMIT 1`[0]
        ?.message;
    const decisions = this.sql<{ task_id: string; question: string; chosen: string }>`
      SELECT task_id, question, chosen FROM decisions ORDER BY created_at DESC, id DESC LIMIT ${recent}`;
    const issues = this.sql<{ task_id: string; type: string; description: string; requires_human_review: number }>`
      SELECT task_id, type, description, requires_human_review FROM issues ORDER BY requires_human_review DESC, created_at DESC LIMIT ${recent}`;
    const lastDone = this.sql<{ outcome: string }>`SELECT outcome FROM tasks WHERE outcome IS NOT NULL ORDER BY completed_at DESC LIMIT 3`;
    const nextSteps = lastDone.flatMap((t) => (JSON.parse(t.outcome) as { next_steps?: string[] }).next_steps ?? []).slice(0, recent);
    return ok({
      workflow: { id: header.id, name: header.name, status: header.status, description: header.description, plan: header.plan },
      open_tasks: open.map((t) => {
        const milestone = lastMilestone(t.id);
        return {
          task_id: t.id,
          parent_task_id: t.parent_id,
          name: t.name,
          goal: t.goal,
          started_at: iso(t.started_at),
          ...(milestone === undefined ? {} : { last_milestone: milestone }),
        };
      }),
      recent_decisions: decisions.map((d) => ({ task_id: d.task_id, question: d.question, chosen: d.chosen })),
      recent_issues: issues.map((i) => ({
        task_id: i.task_id,
        type: i.type,
        description: i.description,
        requires_human_review: i.requires_human_review === 1,
      })),
      next_steps: nextSteps,
      totals: this.totals(),
    });
  }

  /** One task in full: outcome, files changed, verification. */
  async task(account: string, taskId: string): Promise<Result<TaskView>> {
    const workflow = this.workflowRow();
    const task = this.taskRow(taskId);
    if (!workflow || workflow.account !== account || !task) return notFound("task_id", taskId);
    return ok(this.taskView(task));
  }

  /** Events with seq > fromSeq, oldest first, at most `limit`. */
  async events(account: string | null, fromSeq: number, limit: number): Promise<Result<EventsPage & { last_seq: number }>> {
    const workflow = this.workflowRow();
    if (!workflow || (account !== null && workflow.account !== account)) return notFound("workflow_id", "this id");
    return ok({ ...this.eventsAfter(fromSeq, limit), last_seq: this.lastSeq() });
  }

  // ── Live followers (WebSocket hibernation) ───────────────────────────────

  async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const refused = await this.refuseUnshared(request);
    if (refused) return refused;
    const after = Number(new URL(request.url).searchParams.get("after") ?? "0");
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    this.sendCatchUp(pair[1], Number.isFinite(after) && after >= 0 ? after : 0);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  async webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): Promise<void> {
    // A follower that noticed a gap asks again from its last seq: {"after": n}.
    if (typeof message !== "string") return;
    try {
      const after = Number((JSON.parse(message) as { after?: unknown }).after);
      if (Number.isFinite(after) && after >= 0) this.sendCatchUp(socket, after);
    } catch {
      socket.send(JSON.stringify({ type: "error", message: 'expected {"after": <seq>}' }));
    }
  }

  async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    socket.close(code === 1005 ? 1000 : code, "closing");
  }

  // ── Share links (src/workflow/share.ts) ──────────────────────────────────

  // Field initializers run before the constructor body, so this builds its own sql tag.
  private readonly shareLinks = new ShareLinks(sqlFor(this.ctx.storage), this.env, () => this.workflowRow()?.id ?? "");

  /** The owner's link, created on first request (start_workflow asks right after creating the workflow). */
  async shareLink(account: string): Promise<Result<ShareInfo>> {
    const workflow = this.workflowRow();
    if (!workflow || workflow.account !== account) return notFound("workflow_id", "this id");
    await this.shareLinks.ensure();
    return ok(await this.shareChanged(workflow.id, account));
  }

  /** Owner only. Rotating or revoking closes every open live page: they were let in by the old token. */
  async manageShare(account: string, action: ShareAction, expiresInSeconds: number | null): Promise<Result<ShareInfo>> {
    const workflow = this.workflowRow();
    if (!workflow || workflow.account !== account) return notFound("workflow_id", "this id");
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
    if (action !== "set_expiry") this.closeFollowers();
    if (action !== "revoke") await this.scheduleAlarm(null);
    return ok(await this.shareChanged(workflow.id, account));
  }

  /** The whole workflow for a share-link reader, or why not ("revoked"/"expired" → the page says "no longer shared"). */
  async sharedView(token: string): Promise<{ status: ShareStatus | "not_found"; view: WorkflowView | null }> {
    const status = await this.shareLinks.check(token);
    return { status, view: status === "active" ? this.buildView() : null };
  }

  /** Expiry of the link: live pages opened with it are closed. */
  async alarm(): Promise<void> {
    if ((await this.shareLinks.info()).status !== "active") this.closeFollowers();
    if (this.workflowRow() && this.syncedSeq() < this.lastSeq()) await this.syncAccount();
    await this.scheduleAlarm(null);
  }

  /** A WebSocket for /s/<token>/ws is accepted only while the token is valid; other callers are the Worker's own. */
  private async refuseUnshared(request: Request): Promise<Response | null> {
    const match = /^\/s\/([^/]+)\/ws$/.exec(new URL(request.url).pathname);
    if (!match?.[1]) return null;
    const status = await this.shareLinks.check(match[1]);
    if (status === "active") return null;
    return new Response("This workflow is no longer shared.", { status: status === "not_found" ? 404 : 410 });
  }

  private closeFollowers(): void {
    for (const socket of this.ctx.getWebSockets()) {
      try {
        socket.close(4410, "no longer shared");
      } catch {
        // Already closing.
      }
    }
  }

  private async shareChanged(workflowId: string, account: string): Promise<ShareInfo> {
    const info = await this.shareLinks.info();
    const index = this.env.ACCOUNT.get(this.env.ACCOUNT.idFromName(account));
    await index.recordShare(workflowId, { ...info, token: null });
    return info;
  }

  // ── internals ─────────────────────────────────────────────────────────────

  private sendCatchUp(socket: WebSocket, after: number): void {
    let from = after;
    for (;;) {
      const page = this.eventsAfter(from, LIMITS.EVENTS_PAGE);
      for (const event of page.events) socket.send(JSON.stringify({ type: "event", event }));
      from = page.next_seq;
      if (!page.has_more) break;
    }
    socket.send(JSON.stringify({ type: "caught_up", seq: from }));
  }

  private broadcast(events: WorkflowEvent[]): void {
    if (events.length === 0) return;
    for (const socket of this.ctx.getWebSockets()) {
      for (const event of events) {
        try {
          socket.send(JSON.stringify({ type: "event", event }));
        } catch {
          // A socket that is closing gets the events on reconnect.
        }
      }
    }
  }

  private pendingEvents: WorkflowEvent[] = [];

  private appendEvent(now: number, type: EventType, taskId: string | null, data: WorkflowEvent["data"]): void {
    const seq = this.lastSeq() + 1;
    this.sql`INSERT INTO events (seq, at, type, task_id, data) VALUES (${seq}, ${now}, ${type}, ${taskId}, ${JSON.stringify(data)})`;
    this.pendingEvents.push({ seq, at: iso(now), type, task_id: taskId, data });
  }

  private eventsAfter(fromSeq: number, limit: number): EventsPage {
    const rows = this.sql<{ seq: number; at: number; type: string; task_id: string | null; data: string }>`
      SELECT seq, at, type, task_id, data FROM events WHERE seq > ${fromSeq} ORDER BY seq LIMIT ${limit + 1}`;
    const page = rows.slice(0, limit);
    const events = page.map((r) => ({
      seq: r.seq,
      at: iso(r.at),
      type: r.type as EventType,
      task_id: r.task_id,
      data: JSON.parse(r.data) as WorkflowEvent["data"],
    }));
    return { events, next_seq: events.at(-1)?.seq ?? fromSeq, has_more: rows.length > limit };
  }

  /**
   * Runs a mutation atomically. With an idempotency key, a retry of the same request
   * returns the stored first result; the same key with different input is a CONFLICT.
   */
  private write<T>(tool: string, key: string | undefined, hash: string, mutate: () => T): Result<T> {
    this.pendingEvents = [];
    try {
      return this.ctx.storage.transactionSync(() => {
        const replayed = this.replay<T>(tool, key, hash);
        if (replayed) return replayed;
        const value = mutate();
        if (key !== undefined) {
          this
            .sql`INSERT INTO idempotency (key, tool, request_hash, result, created_at) VALUES (${key}, ${tool}, ${hash}, ${JSON.stringify(value)}, ${Date.now()})`;
        }
        return ok(value);
      });
    } catch (error) {
      this.pendingEvents = [];
      if (error instanceof WaymarkError) return error.toFailure();
      throw error;
    }
  }

  private replay<T>(tool: string, key: string | undefined, hash: string): Result<T> | null {
    if (key === undefined) return null;
    const row = this.sql<{
      tool: string;
      request_hash: string;
      result: string;
    }>`SELECT tool, request_hash, result FROM idempotency WHERE key = ${key}`[0];
    if (!row) return null;
    if (row.tool !== tool || row.request_hash !== hash) {
      return fail("CONFLICT", `idempotency_key: "${key}" was already used for a different ${row.tool} request`);
    }
    return ok(JSON.parse(row.result) as T);
  }

  private async afterWrite(result: Result<unknown>): Promise<void> {
    const events = this.pendingEvents;
    this.pendingEvents = [];
    if (!result.ok || events.length === 0) return;
    this.broadcast(events);
    await this.syncAccount();
  }

  /**
   * Pushes the summary, memory documents and webhook notifications of every event the account
   * index has not acknowledged yet. The account applies them idempotently (documents by entity
   * id, notifications by workflow and seq), so pushing a range twice is harmless. A failure never
   * fails the tool call whose write is already committed: an alarm retries, and the next write
   * carries the backlog too.
   */
  private async syncAccount(): Promise<void> {
    const workflow = this.workflowRow();
    if (!workflow) return;
    const account = this.env.ACCOUNT.get(this.env.ACCOUNT.idFromName(workflow.account));
    try {
      for (;;) {
        const page = this.eventsAfter(this.syncedSeq(), LIMITS.EVENTS_PAGE);
        const documents = documentsFromEvents(workflow.id, page.events, (taskId) => this.taskContext(taskId));
        const notifications = notificationsFromEvents(page.events, this.header());
        await account.recordWorkflow(workflow.account, this.summaryOf(this.workflowRow() ?? workflow), { documents, notifications });
        this.sql`INSERT INTO account_sync (id, synced_seq) VALUES (1, ${page.next_seq})
          ON CONFLICT (id) DO UPDATE SET synced_seq = max(synced_seq, excluded.synced_seq)`;
        if (!page.has_more) return;
      }
    } catch (error) {
      console.error("account index push failed; retrying from the alarm", error);
      await this.scheduleAlarm(Date.now() + ACCOUNT_SYNC_RETRY_MS);
    }
  }

  private lastSeq(): number {
    return this.sql<{ seq: number | null }>`SELECT max(seq) AS seq FROM events`[0]?.seq ?? 0;
  }

  private syncedSeq(): number {
    return this.sql<{ synced_seq: number }>`SELECT synced_seq FROM account_sync WHERE id = 1`[0]?.synced_seq ?? 0;
  }

  /** One alarm serves both timers: a link's expiry and an account push retry; the earliest wins. */
  private async scheduleAlarm(retryAt: number | null): Promise<void> {
    const expiry = this.shareLinks.expiresAt();
    const times = [retryAt, expiry !== null && expiry > Date.now() ? expiry : null].filter((t): t is number => t !== null);
    const current = await this.ctx.storage.getAlarm();
    const next = Math.min(...times, current ?? Number.POSITIVE_INFINITY);
    if (Number.isFinite(next) && next !== current) await this.ctx.storage.setAlarm(next);
  }

  /** A task's name and areas, indexed with its decisions and issues. */
  private taskContext(taskId: string): string {
    const task = this.taskRow(taskId);
    return task ? `${task.name}\n${(JSON.parse(task.areas) as string[]).join(" ")}` : "";
  }

  private logOnTask(
    account: string,
    tool: string,
    input: { task_id: string; idempotency_key?: string },
    insert: (now: number, task: TaskRow) => LogOutput,
  ): Promise<Result<LogOutput>> {
    return requestHash(tool, input).then(async (hash) => {
      const result = this.write(tool, input.idempotency_key, hash, () => {
        this.ownedWorkflow(account, "task_id", input.task_id);
        const task = this.taskRow(input.task_id);
        if (!task) throw notFoundError("task_id", input.task_id);
        if (task.status !== "in_progress") {
          throw new WaymarkError("CONFLICT", `task_id: task ${task.id} is already completed (${task.status}); log on an open task`);
        }
        const table = tool === "log_decision" ? "decisions" : tool === "log_issue" ? "issues" : "milestones";
        const count = this.ctx.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE task_id = ?`, task.id).one().n;
        if (count >= LIMITS.LOGS_PER_TASK) {
          throw new WaymarkError("PAYLOAD_TOO_LARGE", `task_id: at most ${LIMITS.LOGS_PER_TASK} ${table} per task`);
        }
        const now = Date.now();
        this.touch(now);
        return insert(now, task);
      });
      await this.afterWrite(result);
      return result;
    });
  }

  private workflowRow(): WorkflowRow | null {
    return this.sql<WorkflowRow>`SELECT * FROM workflow LIMIT 1`[0] ?? null;
  }

  /** The workflow, if `account` owns it; a task id must also belong to this workflow. */
  private ownedWorkflow(account: string, field: string, id: string): WorkflowRow {
    const workflow = this.workflowRow();
    const belongs = workflow && workflow.account === account && (id === workflow.id || workflowOfTask(id) === workflow.id);
    if (!workflow || !belongs) throw notFoundError(field, id);
    return workflow;
  }

  private taskRow(id: string): TaskRow | null {
    return this.sql<TaskRow>`SELECT * FROM tasks WHERE id = ${id}`[0] ?? null;
  }

  private requireTask(id: string): TaskRow {
    const task = this.taskRow(id);
    if (!task) throw new WaymarkError("INTERNAL", `task ${id} vanished during a write`);
    return task;
  }

  private touch(now: number): void {
    this.sql`UPDATE workflow SET updated_at = ${now}`;
  }

  private storedSnapshot(task: TaskRow): Snapshot | null {
    if (task.snapshot_type === "git") {
      const rows = this.sql<{
        path: string;
        head_mode: string | null;
        head_blob: string | null;
        worktree_mode: string | null;
        worktree_blob: string | null;
      }>`
        SELECT path, head_mode, head_blob, worktree_mode, worktree_blob FROM snapshot_entries WHERE task_id = ${task.id}`;
      const meta = parse<{ branch: string | null }>(task.snapshot_meta);
      return {
        type: "git",
        head: task.snapshot_head,
        branch: meta?.branch ?? null,
        dirty: rows.map((r) => ({
          path: r.path,
          head: r.head_mode !== null && r.head_blob !== null ? { mode: r.head_mode, blob: r.head_blob } : null,
          worktree: r.worktree_mode !== null && r.worktree_blob !== null ? { mode: r.worktree_mode, blob: r.worktree_blob } : null,
        })),
      };
    }
    if (task.snapshot_type === "checksum") {
      const meta = parse<{ files: number; digest: string }>(task.snapshot_meta);
      return { type: "checksum", files: meta?.files ?? 0, digest: meta?.digest ?? "" };
    }
    return null;
  }

  private changesWithoutSnapshot(type: string, input: CompleteTaskInput): PathChange[] {
    if (type === "git") {
      throw new WaymarkError(
        "INPUT_VALIDATION_ERROR",
        "changes: git changes need the git snapshot of start_task, and this task was started without one",
      );
    }
    // A checksum comparison made on the machine stands on its own.
    return computeNetChanges({ type: "checksum", files: 0, digest: "" }, input.changes as NonNullable<CompleteTaskInput["changes"]>);
  }

  private ancestors(taskId: string): string[] {
    const rows = this.sql<{ id: string }>`
      WITH RECURSIVE up(id, parent_id) AS (
        SELECT id, parent_id FROM tasks WHERE id = ${taskId}
        UNION ALL SELECT t.id, t.parent_id FROM tasks t JOIN up ON t.id = up.parent_id
      ) SELECT id FROM up WHERE id != ${taskId}`;
    return rows.map((r) => r.id);
  }

  private window(task: TaskRow, completedAt: number | null) {
    return {
      task_id: task.id,
      started_at: task.started_at,
      completed_at: completedAt ?? task.completed_at,
      ancestors: this.ancestors(task.id),
    };
  }

  /**
   * The completed tasks whose window can intersect this one's: those that completed after it
   * started (touching windows are sequential, docs/attribution.md). A workflow run task after
   * task reads nothing here, however many tasks it has.
   */
  private completedDuring(task: TaskRow): CompletedTaskChanges[] {
    const tasks = this.sql<TaskRow>`
      SELECT * FROM tasks WHERE id != ${task.id} AND status != 'in_progress' AND completed_at > ${task.started_at} ORDER BY completed_at`;
    return tasks.map((t) => ({ window: this.window(t, null), changes: this.storedChanges(t.id) }));
  }

  private storedChanges(taskId: string): PathChange[] {
    return this.sql<{
      path: string;
      status: string;
      before_mode: string | null;
      before_blob: string | null;
      after_mode: string | null;
      after_blob: string | null;
      committed: number;
    }>`SELECT path, status, before_mode, before_blob, after_mode, after_blob, committed FROM file_changes WHERE task_id = ${taskId}`.map(
      (r) => ({
        path: r.path,
        status: r.status as PathChange["status"],
        before: r.before_mode !== null && r.before_blob !== null ? { mode: r.before_mode, blob: r.before_blob } : null,
        after: r.after_mode !== null && r.after_blob !== null ? { mode: r.after_mode, blob: r.after_blob } : null,
        committed: r.committed === 1,
      }),
    );
  }

  private header(): WorkflowHeader {
    const w = this.workflowRow();
    if (!w) throw new WaymarkError("INTERNAL", "workflow row missing");
    return {
      id: w.id,
      name: w.name,
      description: w.description,
      plan: JSON.parse(w.plan) as WorkflowHeader["plan"],
      status: w.status as WorkflowHeader["status"],
      outcome: parse(w.outcome),
      created_at: iso(w.created_at),
      completed_at: isoOrNull(w.completed_at),
      updated_at: iso(w.updated_at),
    };
  }

  private taskView(t: TaskRow): TaskView {
    return {
      id: t.id,
      parent_task_id: t.parent_id,
      name: t.name,
      goal: t.goal,
      areas: JSON.parse(t.areas) as string[],
      status: t.status as TaskView["status"],
      snapshot_type: t.snapshot_type as TaskView["snapshot_type"],
      started_at: iso(t.started_at),
      completed_at: isoOrNull(t.completed_at),
      duration_seconds: t.duration_seconds,
      outcome: parse(t.outcome),
      metadata: parse(t.metadata),
      files_changed: parse(t.files_changed),
      verification: parse(t.verification),
      metrics:
        t.input_tokens === null && t.output_tokens === null && t.model === null && t.cost_usd === null
          ? null
          : { input_tokens: t.input_tokens, output_tokens: t.output_tokens, model: t.model, cost_usd: t.cost_usd },
    };
  }

  private decisions(id?: string): DecisionView[] {
    const rows =
      id === undefined ? this.sql`SELECT * FROM decisions ORDER BY created_at, id` : this.sql`SELECT * FROM decisions WHERE id = ${id}`;
    return rows.map((r) => ({
      id: String(r.id),
      task_id: String(r.task_id),
      category: String(r.category) as DecisionView["category"],
      question: String(r.question),
      options_considered: JSON.parse(String(r.options)) as string[],
      chosen: String(r.chosen),
      reasoning: String(r.reasoning),
      trade_offs: r.trade_offs === null ? null : String(r.trade_offs),
      created_at: iso(Number(r.created_at)),
    }));
  }

  private issues(id?: string): IssueView[] {
    const rows =
      id === undefined ? this.sql`SELECT * FROM issues ORDER BY created_at, id` : this.sql`SELECT * FROM issues WHERE id = ${id}`;
    return rows.map((r) => ({
      id: String(r.id),
      task_id: String(r.task_id),
      type: String(r.type) as IssueView["type"],
      description: String(r.description),
      resolution: String(r.resolution),
      requires_human_review: r.requires_human_review === 1,
      created_at: iso(Number(r.created_at)),
    }));
  }

  private milestones(id?: string): MilestoneView[] {
    const rows =
      id === undefined ? this.sql`SELECT * FROM milestones ORDER BY created_at, id` : this.sql`SELECT * FROM milestones WHERE id = ${id}`;
    return rows.map((r) => ({
      id: String(r.id),
      task_id: String(r.task_id),
      message: String(r.message),
      progress: r.progress === null ? null : Number(r.progress),
      metadata: r.metadata === null ? null : (JSON.parse(String(r.metadata)) as JsonObject),
      created_at: iso(Number(r.created_at)),
    }));
  }

  private totals(): WorkflowView["totals"] {
    const t = this.sql<{
      tasks: number;
      open: number;
      duration: number | null;
      input_tokens: number | null;
      output_tokens: number | null;
      cost_usd: number | null;
    }>`
      SELECT count(*) AS tasks, sum(status = 'in_progress') AS open,
             sum(CASE WHEN parent_id IS NULL THEN duration_seconds ELSE 0 END) AS duration,
             sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd FROM tasks`[0];
    const files = this.sql<{ n: number }>`SELECT count(DISTINCT path) AS n FROM file_changes`[0]?.n ?? 0;
    const decisions = this.sql<{ n: number }>`SELECT count(*) AS n FROM decisions`[0]?.n ?? 0;
    const issues = this.sql<{
      n: number;
      review: number | null;
    }>`SELECT count(*) AS n, sum(requires_human_review) AS review FROM issues`[0];
    const reviewTasks =
      this.sql<{ n: number }>`SELECT count(*) AS n FROM tasks WHERE json_extract(outcome, '$.manual_review_needed') = 1`[0]?.n ?? 0;
    return {
      tasks: t?.tasks ?? 0,
      open_tasks: t?.open ?? 0,
      duration_seconds: t?.duration ?? 0,
      files_changed: files,
      decisions,
      issues: issues?.n ?? 0,
      reviews_needed: (issues?.review ?? 0) + reviewTasks,
      input_tokens: t?.input_tokens ?? 0,
      output_tokens: t?.output_tokens ?? 0,
      cost_usd: roundCost(t?.cost_usd ?? 0),
    };
  }

  private buildView(): WorkflowView {
    const tasks = this.sql<TaskRow>`SELECT * FROM tasks ORDER BY started_at, id`.map((t) => this.taskView(t));
    const lastSeq = this.lastSeq();
    return {
      workflow: this.header(),
      tasks,
      decisions: this.decisions(),
      issues: this.issues(),
      milestones: this.milestones(),
      totals: this.totals(),
      last_seq: lastSeq,
    };
  }

  private summaryOf(w: WorkflowRow): WorkflowSummary {
    const totals = this.totals();
    return {
      id: w.id,
      name: w.name,
      status: w.status as WorkflowSummary["status"],
      created_at: iso(w.created_at),
      updated_at: iso(w.updated_at),
      open_tasks: totals.open_tasks,
      tasks: totals.tasks,
      reviews_needed: totals.reviews_needed,
      input_tokens: totals.input_tokens,
      output_tokens: totals.output_tokens,
      cost_usd: totals.cost_usd,
    };
  }
}

function snapshotId(snapshot: Snapshot | undefined, taskId: string): string {
  if (snapshot?.type === "git") return snapshot.head ?? `git-empty:${taskId}`;
  if (snapshot?.type === "checksum") return `checksum:${snapshot.digest.slice(0, 16)}`;
  return `none:${taskId}`;
}

function notFoundError(field: string, id: string): WaymarkError {
  return new WaymarkError("NOT_FOUND", `${field}: no workflow or task ${id} in this account`);
}

function notFound(field: string, id: string): Failure {
  return notFoundError(field, id).toFailure();
}
