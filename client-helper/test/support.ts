import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

export const HELPER_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO_ROOT = join(HELPER_DIR, "..");
export const BIN = join(HELPER_DIR, "dist", "bin.js");

/**
 * The machine's own Node (20 here), not the Node 22 that npm puts first on PATH: the
 * helper is published for Node >= 20 and must run there.
 */
export const SYSTEM_NODE = ["/usr/local/bin/node", "/usr/bin/node"].find((p) => existsSync(p)) ?? process.execPath;

let built = false;
/**
 * Builds the helper's dist/ once per test file: tests run the real bin, as users do. Under vitest
 * the global setup has built it once for the whole run (test/support/worker-build-setup.ts sets
 * WAYMARK_TEST_HELPER_BUILT): files running side by side must not rewrite what others execute.
 */
export function ensureBuilt(): void {
  if (built || process.env.WAYMARK_TEST_HELPER_BUILT === "1") return;
  execFileSync(process.execPath, [join(HELPER_DIR, "build.mjs")], { cwd: HELPER_DIR, stdio: "inherit" });
  built = true;
}

export type Received = { tool: string; args: Record<string, unknown> };

/** The smallest workflow view `waymark summary` renders. */
/** One workflow's Markdown export as `waymark summary` reads it (GET /api/workflows/<id>/export.md): named after its id. */
function markdownExport(id: string): string {
  return `## Workflow ${id}\n\n**Status:** active · **Tasks:** 0\n\n<sub>Recorded by Waymark</sub>\n`;
}

/**
 * A stand-in for the Waymark edge: a real Streamable HTTP MCP server (SDK v2) that
 * requires a bearer token, exposes start_task / complete_task with the helper-only
 * inputs, and records every call it receives. It does no attribution itself: the
 * tests assert on what the helper sent it.
 */
export class FakeRemote {
  readonly received: Received[] = [];
  /** When > 0, that many complete_task requests are recorded and then cut off mid-flight. */
  dropCompletes = 0;
  /** Bodies above this many bytes are refused with 413, as the edge refuses them. */
  maxBodyBytes = Number.POSITIVE_INFINITY;
  /** start_task's description in the tool list (a test changes it to change the list). */
  startTaskDescription = "Start a new task";
  /** Requests that reached the server; while `held` is set they wait for it before they are answered. */
  requests = 0;
  held: Promise<void> | null = null;
  private server: Server | null = null;
  private nextTask = 1;
  url = "";
  readonly token: string;

  // A plain field, not a parameter property: scripts load this file through Node's type stripping.
  constructor(token: string) {
    this.token = token;
  }

  private build(): McpServer {
    const server = new McpServer({ name: "fake-waymark", version: "0.0.0" });
    const record = (tool: string) => (args: Record<string, unknown>) => this.received.push({ tool, args });
    server.registerTool(
      "start_task",
      {
        description: this.startTaskDescription,
        inputSchema: z.object({
          workflow_id: z.string(),
          name: z.string(),
          goal: z.string(),
          areas: z.array(z.string()).optional(),
          snapshot: z.record(z.string(), z.unknown()).optional(),
          idempotency_key: z.string().optional(),
        }),
      },
      async (args) => {
        record("start_task")(args);
        const task_id = `task-${this.nextTask++}`;
        return {
          content: [{ type: "text", text: JSON.stringify({ task_id }) }],
          structuredContent: { task_id },
        };
      },
    );
    server.registerTool(
      "complete_task",
      {
        description: "Complete a task",
        inputSchema: z.object({
          task_id: z.string(),
          status: z.enum(["success", "partial_success", "failed"]),
          outcome: z.object({ summary: z.string() }),
          changes: z.record(z.string(), z.unknown()).optional(),
          metrics: z.record(z.string(), z.unknown()).optional(),
          idempotency_key: z.string().optional(),
        }),
      },
      async (args) => {
        record("complete_task")(args);
        return {
          content: [
            {
              type: "text",
              text: JSON.stringify({ task_id: args.task_id, ok: true }),
            },
          ],
        };
      },
    );
    server.registerTool(
      "log_milestone",
      {
        description: "Log a milestone",
        inputSchema: z.object({ task_id: z.string(), message: z.string() }),
      },
      async (args) => {
        record("log_milestone")(args);
        return { content: [{ type: "text", text: "logged" }] };
      },
    );
    server.registerResource("workflows", "waymark://workflows", { mimeType: "application/json" }, async (uri) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: "application/json",
          text: '{"workflows":[]}',
        },
      ],
    }));
    return server;
  }

  async start(): Promise<void> {
    const handler = createMcpHandler(() => this.build());
    this.server = createServer((req, res) => {
      void this.handle(handler.fetch, req, res);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/mcp`;
  }

  private async handle(fetchHandler: (request: Request) => Promise<Response>, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    this.requests++;
    if (this.held) await this.held;
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true}');
      return;
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      res.writeHead(401, {
        "content-type": "application/json",
        "www-authenticate": 'Bearer realm="waymark"',
      });
      res.end(JSON.stringify({ error: "invalid_token" }));
      return;
    }
    // The workflow API `waymark summary` reads: the Markdown export, and the workflow's active share link.
    const api = /^\/api\/workflows\/([\w-]+)\/(export\.md|share)$/.exec(req.url ?? "");
    if (api && req.method === "GET") {
      const [, id = "", file] = api;
      res.writeHead(200, { "content-type": file === "share" ? "application/json" : "text/markdown; charset=utf-8" });
      res.end(
        file === "share"
          ? JSON.stringify({ workflow_id: id, status: "active", share_url: `http://${req.headers.host}/s/share-of-${id}` })
          : markdownExport(id),
      );
      return;
    }
    if (body.length > this.maxBodyBytes) {
      res.writeHead(413, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "payload too large" }));
      return;
    }
    if (this.dropCompletes > 0 && body.includes('"complete_task"')) {
      this.dropCompletes--;
      this.received.push({
        tool: "complete_task(dropped)",
        args: JSON.parse(body.toString()).params.arguments,
      });
      req.socket.destroy();
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const response = await fetchHandler(
      new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
      }),
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  }

  calls(tool: string): Received[] {
    return this.received.filter((r) => r.tool === tool);
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A TCP server that accepts connections and never answers: the worst kind of outage. */
export async function blackHole(): Promise<{
  url: string;
  stop: () => Promise<void>;
}> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL on which nothing listens. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/mcp`;
}

/** What the helper is run with by an agent's MCP server entry (the words after `waymark` in its npx fallback). */
export function mcpServerArgs(entry: { args: string[] }): string[] {
  const line = entry.args.at(-1) ?? "";
  return line.slice(line.lastIndexOf(" waymark ") + " waymark ".length).split(" ");
}
