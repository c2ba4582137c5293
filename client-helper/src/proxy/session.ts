/**
 * @module proxy/session
 * What the proxy keeps between the tool calls of one agent session: the connection to the
 * endpoint, the task store, the git contexts, the last checksum scan (the next one re-hashes only
 * files that moved), this device's signing key and the bookkeeping still running after an answer
 * went out. The tool
 * handlers (./start-task.ts, ./complete-task.ts, ./start-workflow.ts) share it.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { helperWarnings } from "@waymark/protocol/helper-warnings";
import type { Changes, DurabilityObservation, Snapshot, Unavailable } from "@waymark/protocol/wire";
import { HELPER_INPUTS } from "@waymark/protocol/wire-constants";
import type { Found } from "../config-cache.js";
import { DeviceKey } from "../device-key.js";
import { type LedgerTask, lookAgain, recordCompletion } from "../durability.js";
import type { GitContext } from "../git/process.js";
import { noteWorkflowState } from "../hooks/record.js";
import type { LocalSnapshot } from "../local.js";
import { Remote } from "../remote.js";
import { RootCommits } from "../repository.js";
import type { CountsNeeded } from "../review-measures.js";
import { takeSnapshot } from "../snapshot.js";
import { cacheRoot, TaskStore } from "../store.js";
import { recoverFollowUps } from "./follow-up.js";
import { GitSessions } from "./git-session.js";
import { type KeptWorkflowState, takeWorkflowState, unavailable, withWarnings } from "./results.js";

export type McpOptions = {
  url: string;
  token: string | undefined;
  dir: string | undefined;
  timeoutMs: number;
  version: string;
  cacheDir?: string;
  log?: (line: string) => void;
  /** Where the user's config (and this device's key) is found; the process's environment by default. */
  env?: NodeJS.ProcessEnv;
};

export class ProxySession {
  readonly remote: Remote;
  readonly store: TaskStore;
  readonly log: (line: string) => void;
  readonly git = new GitSessions();
  /** Root commits of the HEADs tasks started on (the repository identity's fingerprint). */
  readonly roots = new RootCommits();
  /** The last checksum scan, so the next one only re-hashes files whose (mtime, size) moved. */
  lastScan: LocalSnapshot | null = null;
  /**
   * What the last complete_task's line counts needed beyond the bytes at hand; the next one starts
   * those git processes while git status runs (their start-up off its path), and not the others:
   * a process started for nothing takes the CPU status needs. Both at first.
   */
  countsNeeded: CountsNeeded = { objects: true, scratch: true };
  /**
   * What the last call left to do after its answer went out (a completed task's local records,
   * ./follow-up.ts; a started task's snapshot saved): every later call, and the end of the process,
   * waits for it. At first, what an earlier helper left undone after a completion's answer.
   */
  bookkeeping: Promise<unknown> = Promise.resolve();
  private device: Promise<DeviceKey | null> | null = null;
  /** The workflow's state being written to the hooks' journal: no call waits for it, the end of the process does. */
  private stateKept: Promise<unknown> = Promise.resolve();
  /** The durability ledger's updates (quick; the end of the process waits for them). Its looks with git nothing waits for. */
  private ledgerKept: Promise<unknown> = Promise.resolve();
  /** Repositories whose ledger is being looked at with git: one look at a time each (the next completion starts the next). */
  private readonly looking = new Set<string>();

  constructor(readonly options: McpOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.remote = new Remote({
      url: options.url,
      token: options.token,
      timeoutMs: options.timeoutMs,
      version: options.version,
    });
    this.store = new TaskStore(options.url, options.cacheDir);
    // What an earlier helper left undone after a completion's answer (it ended meanwhile): done before the first call.
    this.bookkeeping = recoverFollowUps(this, options.url);
  }

  /** The user cache dir (task records, start contents, line-count scratch repository). */
  get cache(): string {
    return this.options.cacheDir ?? cacheRoot();
  }

  get version(): string {
    return this.options.version;
  }

  /**
   * This device's signing key (made by `waymark init` or `waymark device`, never here: a key no
   * owner approved signs nothing that counts); null when there is none or it cannot be used (said
   * once on stderr): then what the helper sends is recorded as the client's claim.
   */
  deviceKey(): Promise<DeviceKey | null> {
    this.device ??= Promise.resolve()
      .then(() => DeviceKey.load(this.options.env))
      .catch((error: unknown) => {
        this.log(`waymark: not signing (${error instanceof Error ? error.message : String(error)})`);
        return null;
      });
    return this.device;
  }

  /** The last checksum scan, when the last snapshot was one. */
  previousScan() {
    return this.lastScan?.type === "checksum" ? this.lastScan : null;
  }

  /** A snapshot of `dir`, or what prevented it (the task is still recorded, with the reason). */
  async snapshot(dir: string, context: Promise<GitContext>, toplevel: Promise<Found | null>): Promise<LocalSnapshot | Unavailable> {
    try {
      const snapshot = await takeSnapshot(dir, { previous: this.previousScan(), progress: this.log, context, toplevel });
      if (snapshot.type === "checksum") this.lastScan = snapshot;
      return snapshot;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.log(`waymark: could not snapshot ${dir}: ${reason}`);
      return unavailable(reason);
    }
  }

  /**
   * Forwards a call with the helper's data attached (one request), and shows the agent what the
   * helper has to say about it; the workflow's state the endpoint answered with comes apart.
   */
  async callWithHelperData(
    tool: keyof typeof HELPER_INPUTS,
    args: Record<string, unknown>,
    data: Snapshot | Changes,
  ): Promise<{ result: CallToolResult; state: KeptWorkflowState | null }> {
    const answer = await this.remote.request("tools/call", { name: tool, arguments: { ...args, [HELPER_INPUTS[tool]]: data } });
    const { result, state } = takeWorkflowState(answer);
    return { result: withWarnings(result, helperWarnings(data)), state };
  }

  /**
   * `work` once the answer of the current call is written out (stdout to a pipe is written
   * synchronously, on this turn of the event loop); every later call, and the end of the process, waits for it.
   */
  afterAnswer(work: () => Promise<unknown>): void {
    const after = new Promise<void>((done) => setImmediate(done)).then(work);
    this.bookkeeping = Promise.all([this.bookkeeping, after.catch(() => {})]);
  }

  /**
   * Hooks: the workflow's state once a task of it started or completed, as the endpoint answered
   * the call with it, kept for the next session's context (../hooks/workflow-state.ts) after the
   * answer went out.
   */
  keepWorkflowState(dir: string, state: KeptWorkflowState | null, top: string | undefined): void {
    if (!state) return;
    // Its file is written synchronously: on the next turn of the event loop, once the answer is written out.
    const kept = new Promise<void>((done) => setImmediate(done)).then(() =>
      noteWorkflowState(dir, state.workflow_id, state.text, this.options.cacheDir, top),
    );
    this.stateKept = Promise.all([this.stateKept, kept]);
  }

  /**
   * After a completion in the repository at `repoRoot` was answered: the observations it sent leave
   * the durability ledger, its task joins it, then the ledger's tasks are looked at again with git
   * (../durability.ts), off every call's path.
   */
  afterDurability(repoRoot: string, sent: readonly DurabilityObservation[], entry: LedgerTask | null): void {
    const recorded = this.ledgerKept.then(() => recordCompletion(this.cache, repoRoot, sent, entry));
    this.ledgerKept = recorded.catch(() => {});
    if (this.looking.has(repoRoot)) return;
    this.looking.add(repoRoot);
    recorded
      .then(() => lookAgain(this.cache, repoRoot))
      .catch((error: unknown) => this.log(`waymark: durability not observed (${error instanceof Error ? error.message : String(error)})`))
      .finally(() => this.looking.delete(repoRoot));
  }

  async close(): Promise<void> {
    await Promise.all([this.bookkeeping, this.stateKept, this.ledgerKept]);
    await this.remote.close();
  }
}

/**
 * The repository top level of `dir` when a git snapshot taken there (`takenIn`) already named it (so the
 * hooks' journal is found without asking git again); undefined otherwise.
 */
export function gitTop(snapshot: LocalSnapshot | null, takenIn: string, dir: string): string | undefined {
  return snapshot?.type === "git" && takenIn === dir ? snapshot.root : undefined;
}
