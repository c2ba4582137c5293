/**
 * @module mcp
 * The stdio MCP server an agent is configured with: it forwards everything to the
 * remote endpoint and adds what the agent cannot be trusted to report itself.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallToolResult, ListToolsResult, Tool } from "@modelcontextprotocol/server";
import { McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { helperWarnings } from "@waymark/protocol/helper-warnings";
import type { Changes, Snapshot, Unavailable } from "@waymark/protocol/wire";
import { HELPER_INPUTS } from "@waymark/protocol/wire-constants";
import { type Found, InertContexts } from "./config-cache.js";
import { inertContext, plainContext } from "./git/inert-config.js";
import type { GitContext } from "./git/process.js";
import { gitToplevel, HASH_FILES } from "./git/queries.js";
import { noteTaskCompleted, noteTaskStarted, transcriptMetrics } from "./hooks/record.js";
import type { LocalSnapshot } from "./local.js";
import { changedPaths, outgoingChanges, outgoingSnapshot, readableWarning } from "./outgoing.js";
import { PrestartedGit } from "./prestarted-git.js";
import { agentEdits, agentMetrics, helperSource, transcriptSourced, withProvenance } from "./provenance-fields.js";
import { Remote, RemoteFailure } from "./remote.js";
import { RootCommits, readRepository, snapshotRepository } from "./repository.js";
import { type CountsNeeded, clearLeftovers, type Leftovers, OBJECT_SIZES } from "./review-measures.js";
import { ScratchRepository } from "./scratch.js";
import { computeChanges, takeSnapshot } from "./snapshot.js";
import { cacheRoot, TaskStore, type WorktreeMark } from "./store.js";
import { recordWorkflow } from "./summary-command.js";
import { attachReview, keepStartContents, startContentsOf } from "./task-review.js";
import { repositoryStoresVerbatim } from "./verbatim-blobs.js";

export type McpOptions = {
  url: string;
  token: string | undefined;
  dir: string | undefined;
  timeoutMs: number;
  version: string;
  cacheDir?: string;
  log?: (line: string) => void;
};

function helperInputOf(tool: string): string | undefined {
  return Object.hasOwn(HELPER_INPUTS, tool) ? HELPER_INPUTS[tool as keyof typeof HELPER_INPUTS] : undefined;
}

/** The tool as listed to the agent: the helper-only input removed from its schema. */
export function hideHelperInputs(tool: Tool): Tool {
  const hidden = helperInputOf(tool.name);
  const schema = tool.inputSchema;
  if (!hidden || !schema.properties || !(hidden in schema.properties)) return tool;
  const { [hidden]: _removed, ...properties } = schema.properties;
  const required = schema.required?.filter((name) => name !== hidden);
  const inputSchema: Tool["inputSchema"] = { ...schema, properties };
  if (required) inputSchema.required = required;
  else delete inputSchema.required;
  return { ...tool, inputSchema };
}

function failureResult(error: RemoteFailure): CallToolResult {
  return { isError: true, content: [{ type: "text", text: error.message }] };
}

/** task_id from a start_task result: structuredContent first, else the JSON text. */
export function taskIdOf(result: CallToolResult): string | undefined {
  const structured = result.structuredContent as { task_id?: unknown } | undefined;
  if (typeof structured?.task_id === "string") return structured.task_id;
  for (const block of result.content ?? []) {
    if (block.type !== "text") continue;
    try {
      const parsed = JSON.parse(block.text) as { task_id?: unknown } | null;
      if (typeof parsed?.task_id === "string") return parsed.task_id;
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined;
}

export class HelperProxy {
  /** The server instance of the current stdio connection (one per protocol era the client opened with). */
  server: McpServer;
  private readonly remote: Remote;
  private readonly store: TaskStore;
  private readonly log: (line: string) => void;
  private rootDir: Promise<string | null> | null = null;
  /** Root commits of the HEADs tasks started on (the repository identity's fingerprint). */
  private readonly roots = new RootCommits();
  /** Inert git contexts kept while the config files they were read from are unchanged. */
  private readonly contexts = new InertContexts();
  /** The last checksum scan, so the next one only re-hashes files whose (mtime, size) moved. */
  private lastScan: LocalSnapshot | null = null;
  /**
   * What the last complete_task's line counts needed beyond the bytes at hand; the next one starts
   * those git processes while git status runs (their start-up off its path), and not the others:
   * a process started for nothing takes the CPU status needs. Both at first.
   */
  private countsNeeded: CountsNeeded = { objects: true, scratch: true };
  /**
   * The last completed task's record and start-content copies being removed, after its answer
   * went out: every later call, and the end of the process, waits for it.
   */
  private bookkeeping: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: McpOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.remote = new Remote({
      url: options.url,
      token: options.token,
      timeoutMs: options.timeoutMs,
      version: options.version,
    });
    this.store = new TaskStore(options.url, options.cacheDir);
    this.server = this.newServer();
  }

  /**
   * A fresh server for one connection, in whichever protocol era the client opens with
   * (serveStdio asks for one per connection, plus a probe for 2026-07-28 discovery):
   * every version the SDK speaks is served, so a client pinned to the newest one works.
   */
  newServer(): McpServer {
    const server = new McpServer({ name: "waymark-helper", version: this.options.version }, { capabilities: { tools: {}, resources: {} } });
    this.register(server.server);
    this.server = server;
    this.rootDir = null;
    return server;
  }

  private register(server: McpServer["server"]): void {
    server.setRequestHandler("tools/list", async (request) => {
      const result = await this.forward("tools/list", request.params);
      return {
        ...result,
        tools: result.tools.map(hideHelperInputs),
      } satisfies ListToolsResult;
    });
    server.setRequestHandler("tools/call", async (request) => {
      const { name, arguments: args = {} } = request.params;
      await this.bookkeeping;
      try {
        if (name === "start_workflow") return await this.startWorkflow(args);
        if (name === "start_task") return await this.startTask(args);
        if (name === "complete_task") return await this.completeTask(args);
        if (name === "start_workflow") return await this.startWorkflow(args);
        return await this.remote.request("tools/call", {
          name,
          arguments: args,
        });
      } catch (error) {
        if (error instanceof RemoteFailure) return failureResult(error);
        throw error;
      }
    });
    server.setRequestHandler("resources/list", async (request) => {
      if (!(await this.remoteHasResources())) return { resources: [] };
      return this.forward("resources/list", request.params);
    });
    server.setRequestHandler("resources/templates/list", async (request) => {
      if (!(await this.remoteHasResources())) return { resourceTemplates: [] };
      return this.forward("resources/templates/list", request.params);
    });
    server.setRequestHandler("resources/read", async (request) => {
      if (!(await this.remoteHasResources())) {
        throw new ProtocolError(ProtocolErrorCode.ResourceNotFound, `Resource not found: ${request.params.uri}`);
      }
      return this.forward("resources/read", request.params);
    });
    server.setNotificationHandler("notifications/roots/list_changed", () => {
      this.rootDir = null;
    });
  }

  /** Forwards a non-tool request; a failure to reach the endpoint becomes a JSON-RPC error with the same text. */
  private async forward<M extends "tools/list" | "resources/list" | "resources/templates/list" | "resources/read">(
    method: M,
    params: object | undefined,
  ) {
    try {
      return await this.remote.request(method, params as Record<string, unknown> | undefined);
    } catch (error) {
      if (error instanceof RemoteFailure) throw new ProtocolError(ProtocolErrorCode.InternalError, error.message);
      throw error;
    }
  }

  private async remoteHasResources(): Promise<boolean> {
    if (!this.remote.capabilities()) {
      // Connects (and reports a failure to the caller the same way as any request).
      await this.forward("tools/list", undefined);
    }
    return this.remote.capabilities()?.resources !== undefined;
  }

  /** The client's first file:// root, else --dir, else the working directory. */
  async projectDir(): Promise<string> {
    const server = this.server.server;
    if (server.getClientCapabilities()?.roots) {
      this.rootDir ??= server
        .listRoots(undefined, {
          timeout: Math.min(this.options.timeoutMs, 10_000),
        })
        .then((result) => {
          const root = result.roots.find((r) => r.uri.startsWith("file://"));
          return root ? fileURLToPath(root.uri) : null;
        })
        .catch((error: unknown) => {
          this.log(`waymark: roots/list failed (${String(error)}); using ${this.options.dir ?? process.cwd()}`);
          this.rootDir = null;
          return null;
        });
      const root = await this.rootDir;
      if (root) return root;
    }
    return this.options.dir ?? process.cwd();
  }

  private async snapshot(
    dir: string,
    context: Promise<GitContext>,
    toplevel: Promise<{ root: string; gitDir: string } | null>,
  ): Promise<LocalSnapshot | Unavailable> {
    try {
      const previous = this.lastScan?.type === "checksum" ? this.lastScan : null;
      const snapshot = await takeSnapshot(dir, {
        previous,
        progress: this.log,
        context,
        toplevel,
      });
      if (snapshot.type === "checksum") this.lastScan = snapshot;
      return snapshot;
    } catch (error) {
      // The task is still recorded; the edge is told what happened instead of seeing no helper at all.
      const reason = error instanceof Error ? error.message : String(error);
      this.log(`waymark: could not snapshot ${dir}: ${reason}`);
      return unavailable(reason);
    }
  }

  /** Forwards a call with the helper's data attached, and shows the agent what the helper has to say about it. */
  private async callWithHelperData(
    tool: keyof typeof HELPER_INPUTS,
    args: Record<string, unknown>,
    data: Snapshot | Changes,
  ): Promise<CallToolResult> {
    const result = await this.remote.request("tools/call", { name: tool, arguments: { ...args, [HELPER_INPUTS[tool]]: data } });
    return withWarnings(result, helperWarnings(data));
  }

  /**
   * Forwarded with the repository's identity (resume by name stays within this repository);
   * its id and share link are kept for `waymark summary` in this directory.
   */
  private async startWorkflow(input: Record<string, unknown>): Promise<CallToolResult> {
    const { repository: _ignored, ...args } = input;
    const dir = await this.projectDir();
    const repository = await readRepository(dir);
    const result = await this.remote.request("tools/call", {
      name: "start_workflow",
      arguments: repository ? { ...args, repository } : args,
    });
    if (!result.isError) await recordWorkflow(this.cache, this.options.url, dir, result).catch(() => {});
    return result;
  }

  private get cache(): string {
    return this.options.cacheDir ?? cacheRoot();
  }

  private async startTask(input: Record<string, unknown>): Promise<CallToolResult> {
    const { snapshot: _ignored, ...args } = input;
    const dir = await this.projectDir();
    const startedAt = Date.now();
    // The hashing of the dirty files, and the lookup of which of them are stored (the start
    // contents to copy), start while git status runs.
    const { toplevel, context, ready } = this.gitOf(dir, (inert, found) => [...hashing(inert, found.gitDir), OBJECT_SIZES]);
    try {
      return await this.startTaskIn(dir, args, startedAt, toplevel, context);
    } finally {
      ready.close();
    }
  }

  /**
   * Where git finds the repository of `dir` and its inert context: kept from an earlier call while
   * `.git` and the config files are unchanged, else asked of git. `prestart`: git queries started
   * in the repository's top level while the call's `git status` runs (./prestarted-git.ts); the caller
   * closes `ready` when the call is done.
   */
  private gitOf(dir: string, prestart: (inert: GitContext, found: Found) => (readonly string[])[]) {
    const kept = this.contexts.kept(dir);
    const toplevel = kept ? Promise.resolve(kept) : gitToplevel(plainContext(dir));
    toplevel.catch(() => {});
    const known = kept
      ? Promise.resolve(kept.context)
      : toplevel.then(
          (found) => this.contexts.of(dir, found),
          () => inertContext(dir),
        );
    const ready = new PrestartedGit();
    const context: Promise<GitContext> = known.then(async (inert) => {
      const found = await toplevel.catch(() => null);
      if (found) for (const args of prestart(inert, found)) ready.startAfterNext({ ...inert, cwd: found.root }, args);
      return { ...inert, ready };
    });
    context.catch(() => {});
    return { toplevel, context, ready };
  }

  private async startTaskIn(
    dir: string,
    args: Record<string, unknown>,
    startedAt: number,
    toplevel: Promise<Found | null>,
    context: Promise<GitContext>,
  ): Promise<CallToolResult> {
    const observed = await this.snapshot(dir, context, toplevel);
    const local = observed.type === "unavailable" ? null : observed;
    // Other tasks open on this working tree.
    const parentId = typeof args.parent_task_id === "string" ? args.parent_task_id : undefined;
    const ancestors = local && parentId !== undefined ? await this.store.lineage(local.root, parentId).catch(() => [parentId]) : [];
    const open = local ? await this.store.concurrent(local.root, "", startedAt, null, ancestors).catch(() => []) : [];
    const sent: Snapshot = local ? outgoingSnapshot(local) : { ...(observed as Unavailable), source: helperSource(this.options.version) };
    // Repository identity: the task records which repository and branch it ran in.
    if (sent.type === "git" && local?.type === "git") {
      const identity = await context.then((known) => snapshotRepository(known, local, this.roots)).catch(() => null);
      if (identity) sent.repository = identity;
    }
    if (sent.type !== "unavailable" && open.length > 0) sent.concurrent = open;
    const call = this.callWithHelperData("start_task", args, sent);
    call.catch(() => {});
    // Review: start contents that are in no git object are copied for the task's line counts
    // while the call is out (the agent edits nothing before it has the answer): after a turn
    // of the event loop, so that the request is on its way first.
    if (local) {
      await new Promise((resolve) => setImmediate(resolve));
      await keepStartContents(local, this.cache, this.log, context);
    }
    const result = await call;
    const taskId = result.isError ? undefined : taskIdOf(result);
    if (taskId === undefined) return result;
    // What other processes read (the hooks' journal, the working tree's marks) is written before
    // the answer; the task's start snapshot, which only complete_task reads, after it (every later
    // call and the end of the process wait for it).
    this.bookkeeping = local
      ? this.store.save({ task_id: taskId, dir, snapshot: local }).catch((error: unknown) => {
          this.log(`waymark: could not persist the snapshot of task ${taskId}: ${String(error)}`);
        })
      : Promise.resolve();
    await Promise.all([
      // Hooks: the task is open in this repository (edits are attributed to it, stop reminds of it).
      noteTaskStarted(dir, taskId, args, this.options.cacheDir, this.log, gitTop(local, dir, dir)),
      local && this.store.markStarted(local.root, taskId, startedAt, ancestors).catch(() => {}),
    ]);
    return result;
  }

  private async completeTask(input: Record<string, unknown>): Promise<CallToolResult> {
    const { changes: _ignored, ...args } = input;
    const taskId = typeof args.task_id === "string" ? args.task_id : undefined;
    if (taskId === undefined)
      return this.remote.request("tools/call", {
        name: "complete_task",
        arguments: args,
      });
    const dir = await this.projectDir();
    const record = (await this.store.load(taskId, dir)) ?? {
      task_id: taskId,
      dir,
      snapshot: null,
    };
    // The hooks' journal of this repository, where the task was noted at its start.
    const top = gitTop(record.snapshot, record.dir, dir);
    // Hooks: an agent that reports no usage gets its real usage, read from its transcript.
    // Read while the changes are computed: neither depends on the other.
    const metrics = args.metrics === undefined ? transcriptMetrics(dir, taskId, this.options.cacheDir, top) : undefined;
    // Its failure surfaces where it is awaited, not as an unhandled rejection meanwhile.
    metrics?.catch(() => {});
    let keySaved: Promise<void> | undefined;
    if (typeof args.idempotency_key !== "string") {
      if (!record.idempotency_key) {
        record.idempotency_key = randomUUID();
        // Persisted before sending: if this process dies mid-call, the retry from a new
        // helper still carries the same key.
        keySaved = this.store.save(record).catch(() => {});
      }
      args.idempotency_key = record.idempotency_key;
    }
    // Provenance: the agent's own edits recorded by the hooks, read while the changes are computed.
    const edits = agentEdits(dir, taskId, this.options.cacheDir, top);
    edits.catch(() => {});
    let changes: Changes;
    let changed: string[] = [];
    let mark: WorktreeMark | null = null;
    // Removals of scratch files, started after the answer went out.
    const leftovers: Leftovers = [];
    const start = record.snapshot;
    const ready = new PrestartedGit();
    // The line counts' scratch repository, opened while git status runs.
    let scratch: ScratchRepository | undefined;
    const ahead = this.countsNeeded;
    const needed: CountsNeeded = { objects: false, scratch: false };
    if (start) {
      try {
        const previous = this.lastScan?.type === "checksum" ? this.lastScan : undefined;
        // The repository's config is read once for the changes and the review (or kept from an earlier
        // call); the hashing of the dirty files and the lookup of stored contents start while git status runs.
        const context =
          start.type === "git"
            ? this.contexts.of(start.root, start.git_dir ? { root: start.root, gitDir: start.git_dir } : null).then((inert) => {
                const inRoot = { ...inert, cwd: start.root, ready };
                for (const args of hashing(inert, start.git_dir)) ready.startAfterNext(inRoot, args);
                if (ahead.objects) ready.startAfterNext(inRoot, OBJECT_SIZES);
                if (ahead.scratch) {
                  ready.afterNext(() => {
                    try {
                      scratch = ScratchRepository.open(join(this.cache, "line-counts"));
                    } catch {
                      // Opened when the counts are taken, as without this.
                    }
                  });
                }
                return inRoot;
              })
            : undefined;
        context?.catch(() => {});
        const [observed, startMark] = await Promise.all([
          computeChanges(start, { previous, progress: this.log, context }),
          this.store.mark(start.root, taskId).catch(() => null),
        ]);
        mark = startMark;
        changed = changedPaths(start, observed);
        changes = outgoingChanges(start, observed);
        // The line counts and the other tasks on this working tree are independent reads.
        const [, others] = await Promise.all([
          attachReview(start, observed, changes, this.log, this.cache, context, leftovers, scratch, needed),
          this.store.concurrent(start.root, taskId, mark?.started_at ?? 0, changed, mark?.ancestors).catch(() => []),
        ]);
        if (others.length > 0 && changes.type !== "unavailable") changes.concurrent = others;
        if ((changes.type === "git" || changes.type === "net") && changes.review) this.countsNeeded = needed;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.log(`waymark: could not compute changes of task ${taskId}: ${reason}`);
        changes = unavailable(reason);
      } finally {
        ready.close();
        const opened = scratch;
        if (opened) leftovers.push(() => opened.remove());
      }
    } else {
      changes = unavailable(
        `the helper has no start snapshot of task ${taskId} in ${dir}: the task was started without the helper, the start snapshot failed, or it was started from another machine or cache directory ($XDG_CACHE_HOME/waymark). Start tasks through the helper in the project directory to record their file changes.`,
      );
    }
    // Provenance: usage says whether it is the transcript's or the agent's claim.
    if (metrics !== undefined) {
      const fromTranscript = await metrics;
      if (fromTranscript) args.metrics = transcriptSourced(fromTranscript);
    } else {
      args.metrics = agentMetrics(args.metrics);
    }
    // Provenance: the helper signs what it computed, with the agent's own edits when hooks recorded them.
    changes = withProvenance(changes, this.options.version, await edits);
    await keySaved;
    let result: CallToolResult;
    try {
      result = await this.callWithHelperData("complete_task", args, changes);
    } catch (error) {
      this.bookkeeping = clearLeftovers(leftovers);
      throw error;
    }
    if (result.isError) {
      this.bookkeeping = clearLeftovers(leftovers);
      return result;
    }
    // What other processes read (the working tree's marks, the hooks' journal) is written before
    // the answer; this process's own records and copies are removed after it.
    await Promise.all([
      start && this.markCompleted(start.root, taskId, mark, changed),
      // Hooks: the task's edited paths and transcript usage are kept locally.
      noteTaskCompleted(dir, taskId, this.options.cacheDir, this.log, top),
    ]);
    this.bookkeeping = Promise.all([
      clearLeftovers(leftovers),
      this.store.remove(taskId, record.dir).catch(() => {}),
      start && startContentsOf(start)?.remove(),
    ]);
    return result;
  }

  /** `mark`: the task's mark as read before the call, if it was. */
  private async markCompleted(root: string, taskId: string, mark: WorktreeMark | null, changed: readonly string[]): Promise<void> {
    const known = mark ?? (await this.store.mark(root, taskId).catch(() => null));
    await this.store.markCompleted(root, known ?? { task_id: taskId, started_at: 0, completed_at: null }, changed).catch(() => {});
  }

  async close(): Promise<void> {
    await this.bookkeeping;
    await this.remote.close();
    await this.server.close();
  }
}

/** git's hashing of dirty files, unless the helper hashes them itself in this repository (./verbatim-blobs.ts). */
function hashing(context: GitContext, gitDir: string | undefined): (readonly string[])[] {
  return gitDir !== undefined && repositoryStoresVerbatim(context, gitDir) ? [] : [HASH_FILES];
}

/**
 * The repository top level of `dir` when a git snapshot taken there (`takenIn`) already named it (so the
 * hooks' journal is found without asking git again); undefined otherwise.
 */
function gitTop(snapshot: LocalSnapshot | null, takenIn: string, dir: string): string | undefined {
  return snapshot?.type === "git" && takenIn === dir ? snapshot.root : undefined;
}

function unavailable(reason: string): Unavailable {
  return { type: "unavailable", reason: readableWarning(reason) };
}

/**
 * The helper's own warnings shown to the agent in the tool result's text, unless the edge
 * already repeated them (it records them with the task too).
 */
function withWarnings(result: CallToolResult, warnings: readonly string[]): CallToolResult {
  if (result.isError || warnings.length === 0) return result;
  const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  const missing = warnings.filter((warning) => !text.includes(warning));
  if (missing.length === 0) return result;
  return { ...result, content: [...result.content, { type: "text", text: missing.map((w) => `warning: ${w}`).join("\n") }] };
}

/** Serves the proxy on stdin/stdout, in every protocol version the SDK speaks, until the client closes stdin. */
export async function runMcp(options: McpOptions): Promise<void> {
  const proxy = new HelperProxy(options);
  let closed: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    closed = resolve;
  });
  const handle = serveStdio(
    () => {
      const server = proxy.newServer();
      // Only the instance the connection is pinned to ends it (a discarded discovery probe does not).
      server.server.onclose = () => {
        if (proxy.server === server) closed();
      };
      return server;
    },
    { onerror: (error) => (options.log ?? ((line) => process.stderr.write(`${line}\n`)))(`waymark: ${error.message}`) },
  );
  // A connection on the 2026-07-28 revision has no instance close to report the end of stdin.
  process.stdin.once("end", closed);
  process.stdin.once("close", closed);
  await done;
  await handle.close().catch(() => {});
  await proxy.close().catch(() => {});
}
