/**
 * @module account/account-object
 * One Durable Object per account: the index of its workflows (dashboard, get_workflow without an
 * id, resume by name, quotas), its memory, path index, sessions, managed tokens, settings and
 * webhooks; never the source of truth for a workflow's content. A thin facade: its public methods
 * are the RPC contract the Worker and the workflow objects call; each concern lives in a
 * collaborator that takes the object's `sql`:
 *
 * - workflow-index.ts: the workflows' summaries; owner-search.ts: the dashboard's search and pages
 * - memory.ts: full-text memory; path-index.ts: which task changed which file; work-search.ts: both, for get_workflow
 * - sessions.ts: dashboard sessions and the live pages they follow; tokens.ts: managed API tokens
 * - devices.ts: the devices whose helpers sign, and their pairing requests
 * - settings.ts: the account's settings and public origin; webhooks.ts: registrations and deliveries
 * - insights.ts: the Insights rollups, fed by the workflows' pushes
 * - account-schema.ts: the migrations, applied in order when the object starts
 */
import { DurableObject } from "cloudflare:workers";
import type { Insights } from "@waymark/protocol/views/insights";
import { type Authority, may } from "../domain/access-scopes";
import type { CommitEntry } from "../domain/commit-entries";
import { authorityIn, authorOf, bootstrapTable, type CredentialRef, managedRef } from "../domain/credentials";
import type { DeviceKeySet, DeviceUse } from "../domain/device-signature";
import { dayNumber, readPlan, trendBucket } from "../domain/insight-buckets";
import type { InsightFacts } from "../domain/insight-facts";
import { buildInsights, type InsightRequest, OTHER_GROUP } from "../domain/insight-view";
import type { MemoryDocument } from "../domain/memory-documents";
import type { PathEntry } from "../domain/path-entries";
import type { ShareInfo } from "../domain/share-status";
import type { WorkflowSummary } from "../domain/view";
import type { Notification, WebhookEvent } from "../domain/webhook-events";
import type { WebhookFormat } from "../domain/webhook-payloads";
import { webhookUrlProblem } from "../domain/webhook-url";
import { fail, notFound, ok, type Result } from "../errors";
import { LIMITS } from "../limits";
import { meter } from "../meter";
import { migrate } from "../storage/migrations";
import { type Sql, sqlFor } from "../storage/sql";
import { workflowStub } from "../stubs";
import { ACCOUNT_MIGRATIONS } from "./account-schema";
import { type CommitHit, CommitIndex } from "./commit-index";
import { DeviceSubscribers } from "./device-subscribers";
import { type DeviceInfo, Devices, type IssuedPairing, type PairingRequest, type PendingDevice } from "./devices";
import { type ConfiguredReceiver, type DeliveryAnswer, type GithubDelivery, GithubReceiver, type ReceiverStatus } from "./github-receiver";
import { type InsightChoices, InsightRollups } from "./insights";
import { type MemoryHit, MemoryIndex, type RelatedItem } from "./memory";
import { type DashboardPage, type DashboardQuery, OwnerSearch } from "./owner-search";
import { PathIndex, type PathSearch } from "./path-index";
import { DashboardSessions } from "./sessions";
import { type AccountSettings, SettingsStore } from "./settings";
import { type ActiveToken, ApiTokens, type CreatedToken, type NewToken, type TokenInfo, type VerifiedToken } from "./tokens";
import {
  allowPrivateTargets,
  type RegisteredWebhook,
  retryBaseMs,
  type Sender,
  type WebhookOwner,
  type WebhookStatus,
  Webhooks,
} from "./webhooks";
import { WorkSearch, type WorkSearchResult } from "./work-search";
import {
  type AccountTotals,
  type CountsLeft,
  type CountsRule,
  type DashboardRow,
  type ResumeCandidate,
  WorkflowIndex,
} from "./workflow-index";

// The RPC contract's types, importable from the object as before the split.
export type { DashboardMatch, DashboardPage, DashboardQuery } from "./owner-search";
export type { AccountSettings } from "./settings";
export type { AccountTotals, DashboardRow, ResumeCandidate } from "./workflow-index";

/** What a workflow object pushes with its summary after a write. */
export interface WorkflowPush {
  documents?: MemoryDocument[];
  notifications?: Notification[];
  /** Paths the pushed events' tasks changed: the path index. */
  paths?: PathEntry[];
  /** Commits the pushed events' tasks made: the commit index. */
  commits?: CommitEntry[];
  /** The link's state when it changed with these events (a new workflow's first link). */
  share?: ShareInfo;
  /** Device signatures the workflow accepted since its last push: each device's last use. */
  device_uses?: DeviceUse[];
  /** What the Insights rollups take from these events: completed tasks, people's verdicts, durability observed. */
  insights?: InsightFacts;
  /**
   * Whether the summary's counts may wait (account/workflow-index): "may_wait" when the workflow's
   * alarm is due within ACCOUNT_LAZY_PUSH_MS anyway, and its push will settle them; "settle" for that
   * push (the summary is stored if anything it counts differs). Absent: stored at once.
   */
  counts?: CountsRule;
}

/** What a push answers: the generation of the devices' keys, so a workflow learns its copy is stale even if a push of the keys failed. */
export interface PushAnswer {
  device_generation: number;
  /** Whether the summary's counts were left for the workflow's alarm to settle (absent from an account before it said). */
  counts?: CountsLeft;
}

/** What creating a workflow needs from its account, in one call: resume candidate, quota usage, settings. */
export interface NewWorkflowContext {
  candidate: ResumeCandidate | null;
  usage: { workflows: number; bytes_stored: number };
  settings: AccountSettings;
}

/** How many workflows a change of the devices' keys is pushed to at once. */
const DEVICE_KEY_PUSHES_AT_ONCE = 8;

/** Runs `job` over `items`, at most `width` at a time. */
async function pool<T>(items: readonly T[], width: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) await job(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/** A caller's result count, bounded to 1..SEARCH_RESULTS. */
const searchLimit = (limit: number) => Math.min(Math.max(Math.trunc(limit), 1), LIMITS.SEARCH_RESULTS);

export class AccountObject extends DurableObject<Env> {
  // Field initializers run in order, right after super() has set ctx and env.
  private readonly sql: Sql = sqlFor(this.ctx.storage, { kind: "account", id: this.ctx.id.toString() });
  private readonly workflows = new WorkflowIndex(this.sql);
  private readonly memory = new MemoryIndex(this.sql);
  private readonly paths = new PathIndex(this.sql);
  private readonly commits = new CommitIndex(this.sql);
  private readonly github = new GithubReceiver(this.sql, this.commits);
  private readonly ownerSearch = new OwnerSearch(this.memory, this.paths, this.workflows);
  private readonly workSearch = new WorkSearch(this.memory, this.paths);
  private readonly webhooks = new Webhooks(this.sql, retryBaseMs(this.env));
  private readonly sessions = new DashboardSessions(this.ctx.storage, this.sql, (workflowId, session) =>
    workflowStub(this.env, workflowId).closeOwnerSockets(session),
  );
  private readonly tokens = new ApiTokens(this.sql);
  private readonly devices = new Devices(this.sql);
  private readonly deviceSubscribers = new DeviceSubscribers(this.sql);
  private readonly storedSettings = new SettingsStore(this.sql);
  private readonly rollups = new InsightRollups(this.sql);
  /** How webhook requests leave; a test may substitute a recorder. */
  sender: Sender = (url, init) => fetch(url, init);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    meter.enableFrom(env);
    ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, ACCOUNT_MIGRATIONS, "account");
      this.rollups.open();
    });
  }

  // ── Workflow index (pushed by workflow objects) ──────────────────────────

  /**
   * The workflow object's push after a write: its summary, the memory documents its new
   * events changed, the paths its tasks changed and the webhook notifications they raise,
   * applied in one transaction. Replays are harmless: documents upsert by entity id, paths
   * by (path, workflow, task), notifications are keyed by event.
   */
  async recordWorkflow(account: string, summary: WorkflowSummary, push: WorkflowPush = {}): Promise<PushAnswer> {
    let queued = false;
    const holds = push.notifications ? await this.credentialCheck(account) : () => false;
    let answer: PushAnswer;
    try {
      answer = this.ctx.storage.transactionSync(() => {
        // The paths first: the summary's one row written counts what they added (and holds the link state the push carries).
        const counts = this.workflows.record(summary, {
          pathsAdded: push.paths ? this.paths.record(summary.id, push.paths) : 0,
          share: push.share,
          counts: push.counts,
        });
        if (push.documents) this.memory.upsert(push.documents);
        if (push.commits) this.commits.record(summary.id, push.commits);
        if (push.insights) this.rollups.apply(push.insights);
        if (push.notifications) queued = this.webhooks.enqueue(account, push.notifications, this.storedSettings.origin(), holds);
        if (push.device_uses) this.devices.touchUsed(push.device_uses);
        return { device_generation: this.devices.generation(), counts };
      });
    } catch (error) {
      this.workflows.forgetUsage();
      throw error;
    }
    if (queued) await this.scheduleAlarm(Date.now());
    return answer;
  }

  /** The workflow object pushes its link state after each change; a row is only updated, never created, here. */
  async recordShare(workflowId: string, share: ShareInfo): Promise<void> {
    this.workflows.recordShare(workflowId, share);
  }

  /**
   * start_workflow's questions to the account in one call: an open workflow of that name and
   * repository to resume (unless `resume` is false), the usage its quotas count, and the
   * settings a new workflow follows; the public origin the caller saw is recorded (webhook payloads' owner URL).
   */
  async prepareWorkflow(input: { name: string; fingerprint: string | null; origin: string; resume: boolean }): Promise<NewWorkflowContext> {
    this.storedSettings.recordOrigin(input.origin);
    return {
      candidate: input.resume ? this.workflows.openNamed(input.name, input.fingerprint) : null,
      usage: this.workflows.usage(),
      settings: this.storedSettings.get(),
    };
  }

  /** What the account's quotas count: workflows and the bytes they store. */
  async usage(): Promise<{ workflows: number; bytes_stored: number }> {
    return this.workflows.usage();
  }

  async totals(): Promise<AccountTotals> {
    return this.workflows.totals();
  }

  /** The most recently updated workflows (default 50, at most 500). */
  async listWorkflows(options: { openOnly?: boolean; limit?: number } = {}): Promise<WorkflowSummary[]> {
    return this.workflows.list(options.openOnly === true, options.limit ?? 50);
  }

  async dashboardRows(limit = 200): Promise<DashboardRow[]> {
    return this.workflows.dashboardRows(limit);
  }

  /** The Insights of a period (docs/insights.md): summed from the rollups' day rows, never from the tasks. */
  async insights(request: InsightRequest): Promise<Insights> {
    const f = request.filters;
    const rows = this.rollups.rows({
      ranges: readPlan(request.from, request.to, trendBucket(dayNumber(request.to) - dayNumber(request.from) + 1)),
      agent: f.agent === undefined ? null : (f.agent ?? ""),
      model: f.model === undefined ? null : (f.model ?? ""),
      repository: f.repository === undefined ? null : (f.repository ?? ""),
    });
    const fingerprints = new Set(rows.map((row) => row.repository).filter((fp) => fp !== "" && fp !== OTHER_GROUP));
    if (f.repository) fingerprints.add(f.repository);
    return buildInsights(request, rows, this.rollups.remotes([...fingerprints]));
  }

  /** What the Insights page's filters offer: the agents, models and repositories the rollups have seen. */
  async insightChoices(): Promise<InsightChoices> {
    return this.rollups.choices();
  }

  // ── Search ────────────────────────────────────────────────────────────────

  /** Full-text search of the account's memory (REST `/api/search`). */
  async search(query: string, limit: number): Promise<{ match: "all" | "any"; results: MemoryHit[] }> {
    return this.memory.search(query, limit);
  }

  /** get_workflow's query: files the account's tasks changed when the query is a path, then memory hits. */
  async searchWork(query: string, limit: number): Promise<WorkSearchResult> {
    return this.workSearch.search(query, searchLimit(limit));
  }

  /** Earlier decisions and issues related to a task being started. */
  async related(input: { workflow_id: string; task_id: string; name: string; goal: string; areas: string[] }): Promise<RelatedItem[]> {
    return this.memory.related(input);
  }

  /** One page of the owner view: search by text and path, filters, newest activity first. */
  async dashboardPage(query: DashboardQuery): Promise<DashboardPage> {
    return this.ownerSearch.page(query);
  }

  /** Which tasks changed `path` (exactly, or anything under it when `prefix`), newest first, and whether every completion was searched. */
  async searchPaths(path: string, prefix: boolean, limit: number): Promise<PathSearch> {
    return this.paths.search(path, prefix, searchLimit(limit));
  }

  /** Which tasks made any of `shas` (full commit ids), newest first. */
  async searchCommits(shas: string[], limit: number): Promise<CommitHit[]> {
    return this.commits.find(shas.slice(0, LIMITS.COMMITS_QUERY), Math.min(Math.max(Math.trunc(limit), 1), 2 * LIMITS.COMMITS_QUERY));
  }

  // ── GitHub receiver (pull-request reviews as reviewer feedback) ──────────

  /** A new receiver (its URL's id and its secret, shown once), delivering while `credential` may configure it. */
  async configureGithub(account: string, credential: CredentialRef): Promise<ConfiguredReceiver | null> {
    const authority = await this.credentialAuthority(account, credential);
    if (!authority || !may(authority.scopes, "github.configure")) return null;
    return this.github.configure(credential);
  }

  async githubStatus(): Promise<ReceiverStatus | null> {
    return this.github.status();
  }

  async removeGithub(): Promise<boolean> {
    return this.github.remove();
  }

  /** One delivery from GitHub: checked (signature, delivery id), mapped to a task, recorded as feedback. */
  async receiveGithub(account: string, delivery: GithubDelivery): Promise<DeliveryAnswer> {
    return this.github.receive(delivery, {
      holds: async (credential) => {
        const authority = await this.credentialAuthority(account, credential);
        return authority !== null && may(authority.scopes, "github.configure");
      },
      author: (credential) => authorOf({ credential }, "github"),
      reviewTarget: (workflowId, input) => workflowStub(this.env, workflowId).reviewTarget(account, input),
      addFeedback: (workflowId, input) => workflowStub(this.env, workflowId).addFeedback(account, input),
    });
  }

  // ── Webhooks ──────────────────────────────────────────────────────────────

  /** A webhook that delivers while the credential registering it (`owner`) holds, and no longer than it does. */
  async registerWebhook(
    account: string,
    url: string,
    events: WebhookEvent[],
    format: WebhookFormat,
    owner: WebhookOwner,
  ): Promise<Result<RegisteredWebhook>> {
    // Checked again here against this deployment's own rule (the Worker checked the request).
    const problem = webhookUrlProblem(url, allowPrivateTargets(this.env));
    if (problem) return fail("INPUT_VALIDATION_ERROR", problem);
    const authority = await this.credentialAuthority(account, owner.credential);
    if (!authority || !may(authority.scopes, "webhook.create"))
      return fail("UNAUTHORIZED", "credential: no longer valid for registering webhooks");
    const expiresAt = Math.min(owner.expiresAt ?? Infinity, authority.expiresAt ?? Infinity);
    return this.webhooks.register(url, events, format, {
      credential: owner.credential,
      expiresAt: Number.isFinite(expiresAt) ? expiresAt : null,
    });
  }

  async listWebhooks(): Promise<WebhookStatus[]> {
    return this.webhooks.list();
  }

  async deleteWebhook(id: string): Promise<Result<{ id: string; deleted: true }>> {
    return this.webhooks.remove(id) ? ok({ id, deleted: true }) : notFound("id", `webhook ${id}`);
  }

  /** One alarm serves two timers: sessions that expire (their live pages close) and webhook deliveries that are due. */
  async alarm(): Promise<void> {
    if (meter.on) meter.request("account", "alarm");
    await this.sessions.endExpired();
    const next = await this.webhooks.deliverDue(this.sender);
    const sessionExpiry = this.sessions.nextExpiry();
    for (const at of [next, sessionExpiry]) if (at !== null) await this.scheduleAlarm(at);
  }

  /** Moves the alarm earlier when `at` comes first. */
  private async scheduleAlarm(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current !== null && current <= at) return;
    await this.ctx.storage.setAlarm(at);
    // Cloudflare bills each setAlarm as one row written.
    if (meter.on) meter.statement("account", 0, 1, "alarm");
  }

  // ── Dashboard sessions ────────────────────────────────────────────────────

  /**
   * A new session of `account` opened with `credential`, lasting at most `maxMs` and never past the
   * credential's own expiry; null when the credential no longer holds (checked again here).
   */
  async startSession(account: string, credential: CredentialRef, maxMs: number): Promise<{ id: string; expiresAt: number } | null> {
    const authority = await this.credentialAuthority(account, credential);
    if (!authority) return null;
    const now = Date.now();
    const expiresAt = Math.min(now + maxMs, authority.expiresAt ?? Infinity);
    const id = await this.sessions.start(credential, expiresAt, now);
    await this.scheduleAlarm(expiresAt);
    return { id, expiresAt };
  }

  /**
   * The open session's credential and what that credential holds now (its scopes and its own
   * expiry: what the session's owner creates is bounded by the credential, not by the session),
   * or null: a session past its expiry, signed out, or whose credential was revoked, expired or
   * removed from configuration (the session ends then, and the live pages it opened close).
   */
  async sessionAuthority(account: string, id: string): Promise<(Authority & { credential: CredentialRef }) | null> {
    const session = this.sessions.get(id);
    if (!session) return null;
    const authority = await this.credentialAuthority(account, session.credential);
    if (!authority) {
      await this.sessions.end(id);
      return null;
    }
    return { credential: session.credential, scopes: authority.scopes, expiresAt: authority.expiresAt };
  }

  /** Ends the session, and closes the live owner pages it opened. */
  async endSession(id: string): Promise<void> {
    await this.sessions.end(id);
  }

  /** Whether `session` is open and may read workflows; if so, notes that it follows `workflowId` live (bounded per session). */
  async followAsOwner(account: string, session: string, workflowId: string): Promise<boolean> {
    const authority = await this.sessionAuthority(account, session);
    return authority !== null && may(authority.scopes, "workflow.read") && this.sessions.follow(session, workflowId);
  }

  // ── Managed API tokens ────────────────────────────────────────────────────

  async createToken(account: string, input: NewToken): Promise<Result<CreatedToken>> {
    return this.tokens.create(account, input);
  }

  async listTokens(): Promise<TokenInfo[]> {
    return this.tokens.list();
  }

  /** Revokes the token and ends what was derived from it here: its dashboard sessions (and their live pages) and its webhooks. */
  async revokeToken(id: string): Promise<Result<TokenInfo>> {
    const revoked = this.tokens.revoke(id);
    if (revoked.ok) {
      this.webhooks.endCredential(managedRef(id));
      this.github.endCredential(managedRef(id));
      this.devices.forgetPairingsOf(managedRef(id));
      await this.sessions.endCredential(managedRef(id));
    }
    return revoked;
  }

  async verifyToken(id: string, hash: string): Promise<VerifiedToken | null> {
    return this.tokens.verify(id, hash);
  }

  /** The token while it is active (what sessions, OAuth grants and webhooks derived from it check). */
  async activeToken(id: string): Promise<ActiveToken | null> {
    return this.tokens.active(id);
  }

  async touchToken(id: string): Promise<void> {
    this.tokens.touch(id);
  }

  // ── Devices (their helpers sign what they compute) ───────────────────────

  async requestDevicePairing(input: { key: string; name: string; credential: CredentialRef }): Promise<Result<IssuedPairing>> {
    return this.devices.requestPairing(input);
  }

  async devicePairingRequests(): Promise<PairingRequest[]> {
    return this.devices.pairingRequests();
  }

  async clearDevicePairings(): Promise<number> {
    return this.devices.clearPairings();
  }

  async pendingDevice(code: string): Promise<Result<PendingDevice>> {
    return this.devices.pending(code);
  }

  async approveDevice(account: string, code: string, name: string): Promise<Result<DeviceInfo>> {
    return this.devicesChanged(account, await this.devices.approve(code, name));
  }

  async addDevice(account: string, name: string, key: string): Promise<Result<DeviceInfo>> {
    return this.devicesChanged(account, this.devices.add(name, key));
  }

  async listDevices(): Promise<DeviceInfo[]> {
    return this.devices.list();
  }

  /** Revoked for every workflow that keeps a copy of the keys before this answers (workflow/device-keys). */
  async revokeDevice(account: string, id: string): Promise<Result<DeviceInfo>> {
    return this.devicesChanged(account, this.devices.revoke(id));
  }

  /**
   * A workflow object's copy of the devices' keys, to verify signatures itself: it is subscribed,
   * so every change reaches it (`devicesChanged`) while it trusts the copy.
   */
  async deviceKeys(workflowId: string): Promise<DeviceKeySet> {
    this.deviceSubscribers.subscribe(workflowId, Date.now());
    return this.devices.keySet();
  }

  /**
   * After an approval or a revocation, every subscribed workflow gets the new keys before the
   * caller is answered (a few at a time; one that fails learns the new generation with its next
   * push's answer, and its copy's trust runs out within LIMITS.DEVICE_KEYS_FRESH_MS anyway).
   */
  private async devicesChanged<T>(account: string, result: Result<T>): Promise<Result<T>> {
    if (!result.ok) return result;
    const keys = this.devices.keySet();
    const subscribers = this.deviceSubscribers.current(Date.now());
    await pool(subscribers, DEVICE_KEY_PUSHES_AT_ONCE, async (workflowId) => {
      try {
        await workflowStub(this.env, workflowId).deviceKeysChanged(account, keys);
      } catch (error) {
        console.error(`device keys not pushed to ${workflowId}`, error);
      }
    });
    return result;
  }

  /** Whether a credential of `account` still holds, answered without waiting (inside a transaction). */
  private async credentialCheck(account: string): Promise<(credential: string) => boolean> {
    const table = await bootstrapTable(this.env);
    return (credential) => authorityIn(table, account, credential, (id) => this.tokens.active(id)) !== null;
  }

  /** What `credential` holds for `account` now (a bootstrap token per this object's configuration, a managed token per its table). */
  private async credentialAuthority(account: string, credential: CredentialRef): Promise<Authority | null> {
    return authorityIn(await bootstrapTable(this.env), account, credential, (id) => this.tokens.active(id));
  }

  // ── Settings ──────────────────────────────────────────────────────────────

  async settings(): Promise<AccountSettings> {
    return this.storedSettings.get();
  }

  async updateSettings(settings: AccountSettings): Promise<AccountSettings> {
    return this.storedSettings.update(settings);
  }

  /** The dashboard records the origin it is served from at sign-in. */
  async recordOrigin(origin: string): Promise<void> {
    this.storedSettings.recordOrigin(origin);
  }
}
