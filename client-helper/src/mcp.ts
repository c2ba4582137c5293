import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { CallToolResult, ListToolsResult, Tool } from "@modelcontextprotocol/server";
import { McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { noteTaskCompleted, noteTaskStarted, transcriptMetrics } from "./hooks/record.js";
import { Remote, RemoteFailure } from "./remote.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "./snapshot.js";
import { TaskStore } from "./store.js";
import type { LocalSnapshot } from "./types.js";

// The stdio MCP server an agent is configured with: it forwards everything to the
// remote endpoint and adds what the agent cannot be trusted to report itself.

/** Inputs the helper fills in; agents never see them and cannot supply them. */
export const HIDDEN_INPUTS: Readonly<Record<string, string>> = {
  start_task: "snapshot",
  complete_task: "changes",
};

export type McpOptions = {
  url: string;
  token: string | undefined;
  dir: string | undefined;
  timeoutMs: number;
  version: string;
  cacheDir?: string;
  log?: (line: string) => void;
};

/** The tool as listed to the agent: the helper-only input removed from its schema. */
export function hideHelperInputs(tool: Tool): Tool {
  const hidden = HIDDEN_INPUTS[tool.name];
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
  readonly server: McpServer;
  private readonly remote: Remote;
  private readonly store: TaskStore;
  private readonly log: (line: string) => void;
  private rootDir: Promise<string | null> | null = null;
  /** The last checksum scan, so the next one only re-hashes files whose (mtime, size) moved. */
  private lastScan: LocalSnapshot | null = null;

  constructor(private readonly options: McpOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.remote = new Remote({
      url: options.url,
      token: options.token,
      timeoutMs: options.timeoutMs,
      version: options.version,
    });
    this.store = new TaskStore(options.url, options.cacheDir);
    this.server = new McpServer({ name: "waymark-helper", version: options.version }, { capabilities: { tools: {}, resources: {} } });
    this.register();
  }

  private register(): void {
    const server = this.server.server;
    server.setRequestHandler("tools/list", async (request) => {
      const result = await this.forward("tools/list", request.params);
      return {
        ...result,
        tools: result.tools.map(hideHelperInputs),
      } satisfies ListToolsResult;
    });
    server.setRequestHandler("tools/call", async (request) => {
      const { name, arguments: args = {} } = request.params;
      try {
        if (name === "start_task") return await this.startTask(args);
        if (name === "complete_task") return await this.completeTask(args);
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

  private async snapshot(dir: string): Promise<LocalSnapshot | null> {
    try {
      const previous = this.lastScan?.type === "checksum" ? this.lastScan : null;
      const snapshot = await takeSnapshot(dir, {
        previous,
        progress: this.log,
      });
      if (snapshot.type === "checksum") this.lastScan = snapshot;
      return snapshot;
    } catch (error) {
      // The task is still recorded; the edge says file changes were not computed.
      this.log(`waymark: could not snapshot ${dir}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  private async startTask(input: Record<string, unknown>): Promise<CallToolResult> {
    const { snapshot: _ignored, ...args } = input;
    const dir = await this.projectDir();
    const local = await this.snapshot(dir);
    if (local) args.snapshot = wireSnapshot(local);
    const result = await this.remote.request("tools/call", {
      name: "start_task",
      arguments: args,
    });
    const taskId = result.isError ? undefined : taskIdOf(result);
    // Hooks: the task is open in this repository (edits are attributed to it, stop reminds of it).
    if (taskId) await noteTaskStarted(dir, taskId, args, this.options.cacheDir, this.log);
    if (taskId && local) {
      await this.store.save({ task_id: taskId, dir, snapshot: local }).catch((error: unknown) => {
        this.log(`waymark: could not persist the snapshot of task ${taskId}: ${String(error)}`);
      });
    }
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
    // Hooks: an agent that reports no usage gets its real usage, read from its transcript.
    if (args.metrics === undefined) args.metrics = await transcriptMetrics(dir, taskId, this.options.cacheDir);
    const record = (await this.store.load(taskId, dir)) ?? {
      task_id: taskId,
      dir,
      snapshot: null,
    };
    if (typeof args.idempotency_key !== "string") {
      if (!record.idempotency_key) {
        record.idempotency_key = randomUUID();
        // Persisted before sending: if this process dies mid-call, the retry from a new
        // helper still carries the same key.
        await this.store.save(record).catch(() => {});
      }
      args.idempotency_key = record.idempotency_key;
    }
    if (record.snapshot) {
      try {
        const previous = this.lastScan?.type === "checksum" ? this.lastScan : undefined;
        args.changes = await computeChanges(record.snapshot, {
          previous,
          progress: this.log,
        });
      } catch (error) {
        this.log(`waymark: could not compute changes of task ${taskId}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const result = await this.remote.request("tools/call", {
      name: "complete_task",
      arguments: args,
    });
    if (!result.isError) await this.store.remove(taskId, record.dir).catch(() => {});
    // Hooks: the task's edited paths and transcript usage are kept locally.
    if (!result.isError) await noteTaskCompleted(dir, taskId, this.options.cacheDir, this.log);
    return result;
  }

  async close(): Promise<void> {
    await this.remote.close();
    await this.server.close();
  }
}

/** Serves the proxy on stdin/stdout until the client closes stdin. */
export async function runMcp(options: McpOptions): Promise<void> {
  const proxy = new HelperProxy(options);
  const closed = new Promise<void>((resolve) => {
    proxy.server.server.onclose = () => resolve();
  });
  await proxy.server.connect(new StdioServerTransport());
  await closed;
  await proxy.close().catch(() => {});
}
