/**
 * @module mcp
 * The stdio MCP server an agent is configured with: it forwards everything to the remote
 * endpoint, in every protocol version the SDK speaks, with the secrets agents wrote in tool calls
 * redacted (./proxy/redaction.ts), and hands the three calls the helper adds
 * data to (start_workflow, start_task, complete_task) to their handlers in ./proxy/. It also
 * decides which directory a call is about: the client's first file:// root, else --dir, else
 * the working directory.
 */
import { fileURLToPath } from "node:url";
import type { ListToolsResult } from "@modelcontextprotocol/server";
import { McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { redactToolArguments } from "@waymark/protocol/redact";
import { AGENTS } from "./agents/registry.js";
import { startGitThroughShell } from "./git/spawner.js";
import { completeTask } from "./proxy/complete-task.js";
import type { OpeningFront } from "./proxy/opening.js";
import { withRedactionNote } from "./proxy/redaction.js";
import { failureResult, hideHelperInputs } from "./proxy/results.js";
import { type McpOptions, ProxySession } from "./proxy/session.js";
import { startTask } from "./proxy/start-task.js";
import { startWorkflow } from "./proxy/start-workflow.js";
import { RemoteFailure } from "./remote.js";

export type { McpOptions } from "./proxy/session.js";

const HANDLERS = { start_workflow: startWorkflow, start_task: startTask, complete_task: completeTask } as const;

export class HelperProxy {
  /** The server instance of the current stdio connection (one per protocol era the client opened with). */
  server: McpServer;
  private readonly session: ProxySession;
  private rootDir: Promise<string | null> | null = null;

  constructor(private readonly options: McpOptions) {
    this.session = new ProxySession(options);
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
      return { ...result, tools: result.tools.map(hideHelperInputs) } satisfies ListToolsResult;
    });
    server.setRequestHandler("tools/call", async (request) => {
      const { name, arguments: written = {} } = request.params;
      // Secrets the agent wrote never leave the machine (./proxy/redaction.ts).
      const { args, redactions } = redactToolArguments(written);
      await this.session.bookkeeping;
      try {
        const dir = await this.projectDir();
        // The agent names the call: the usage read at complete_task waits for the response that made it.
        const result =
          name === "complete_task"
            ? await completeTask(this.session, dir, args, callIdOf(request.params._meta))
            : Object.hasOwn(HANDLERS, name)
              ? await HANDLERS[name as keyof typeof HANDLERS](this.session, dir, args)
              : await this.session.remote.request("tools/call", { name, arguments: args });
        return withRedactionNote(result, redactions);
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
      return await this.session.remote.request(method, params as Record<string, unknown> | undefined);
    } catch (error) {
      if (error instanceof RemoteFailure) throw new ProtocolError(ProtocolErrorCode.InternalError, error.message);
      throw error;
    }
  }

  private async remoteHasResources(): Promise<boolean> {
    if (!this.session.remote.capabilities()) {
      // Connects (and reports a failure to the caller the same way as any request).
      await this.forward("tools/list", undefined);
    }
    return this.session.remote.capabilities()?.resources !== undefined;
  }

  /** The client's first file:// root, else --dir, else the working directory. */
  async projectDir(): Promise<string> {
    const server = this.server.server;
    if (server.getClientCapabilities()?.roots) {
      this.rootDir ??= server
        .listRoots(undefined, { timeout: Math.min(this.options.timeoutMs, 10_000) })
        .then((result) => {
          const root = result.roots.find((r) => r.uri.startsWith("file://"));
          return root ? fileURLToPath(root.uri) : null;
        })
        .catch((error: unknown) => {
          this.session.log(`waymark: roots/list failed (${String(error)}); using ${this.options.dir ?? process.cwd()}`);
          this.rootDir = null;
          return null;
        });
      const root = await this.rootDir;
      if (root) return root;
    }
    return this.options.dir ?? process.cwd();
  }

  async close(): Promise<void> {
    await this.session.close();
    await this.server.close();
  }
}

/** The agent's id of a tool call, sent in the call's `_meta`, as the agent that sent it names it (each agent's `callId`). */
function callIdOf(meta: Record<string, unknown> | undefined): string | undefined {
  if (!meta) return undefined;
  for (const agent of AGENTS) {
    const id = agent.callId?.(meta);
    if (id !== undefined) return id;
  }
  return undefined;
}

/**
 * Serves the proxy on stdin/stdout, in every protocol version the SDK speaks, until the client
 * closes stdin. `opening`: what already read stdin and answered the session's opening from the
 * last one's (./proxy/opening.ts): the SDK reads and writes through it.
 */
export async function runMcp(options: McpOptions, opening?: OpeningFront): Promise<void> {
  // A long-lived process: its git processes are started by a small shell, not by forking it (./git/spawner.ts).
  startGitThroughShell();
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
    {
      onerror: (error) => (options.log ?? ((line) => process.stderr.write(`${line}\n`)))(`waymark: ${error.message}`),
      ...(opening ? { transport: new StdioServerTransport(opening.input, opening.output) } : {}),
    },
  );
  // A list the client was answered from the last session's opening and that changed since: it is told, and asks again.
  opening?.attach((method) => (method === "tools/list" ? proxy.server.sendToolListChanged() : proxy.server.sendResourceListChanged()));
  // A connection on the 2026-07-28 revision has no instance close to report the end of stdin.
  process.stdin.once("end", closed);
  process.stdin.once("close", closed);
  await done;
  await handle.close().catch(() => {});
  await proxy.close().catch(() => {});
}
