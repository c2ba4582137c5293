/**
 * @module bench/floor-worker — the platform's own floor for a write under `wrangler dev`, for
 * `npm run bench -- --only floor` (bench/sections/floor.ts): the least a Worker can do to answer a
 * request, to make one RPC into a SQLite-backed Durable Object, to have that object commit one row,
 * and to do that as the one tool of an MCP server built with the same SDK as Waymark's. No Waymark
 * code: what it costs is what any implementation on this platform pays before doing anything of its
 * own. No authentication and no input checks: it serves 127.0.0.1 for a bench and is never deployed.
 *
 *   GET  /health    answered by the Worker alone
 *   POST /rpc       one RPC into the object, which returns at once
 *   POST /write     one RPC; the object INSERTs the body (a JSON text) as one row
 *   POST /complete  the body's 100 changed files (a signed completion's essentials) in one RPC; one row INSERTed
 *   POST /mcp       an MCP server with one tool, `write`, that INSERTs its arguments as one row (JSON responses)
 *   POST /lean/mcp  the same server, but a `tools/call` of `write` is answered without the SDK's per-request
 *                   transport (the least an MCP server can do: parse, write, answer the result's JSON), as
 *                   Waymark's mcp/lean-call.ts answers its tool calls; every other message goes to the SDK
 */

import { DurableObject } from "cloudflare:workers";
import { createMcpHandler, McpServer, SERVER_INFO_META_KEY } from "@modelcontextprotocol/server";
import { z } from "zod";

/** The floor Worker's bindings (its wrangler.toml). The runtime's types: worker-configuration.d.ts, which `npm run typecheck` generates. */
interface FloorEnv {
  FLOOR: DurableObjectNamespace<FloorObject>;
}

/** One object holds every row: Waymark's calls in the bench all go to one workflow's object too. */
export class FloorObject extends DurableObject<FloorEnv> {
  constructor(ctx: DurableObjectState, env: FloorEnv) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  }

  /** A round trip into the object and back, nothing stored. */
  ping(): true {
    return true;
  }

  /** One row committed (the RPC's implicit transaction; its commit is the write's fsync). */
  write(body: string): number {
    this.ctx.storage.sql.exec("INSERT INTO entries (body) VALUES (?)", body);
    return 1;
  }

  /** A completion's changed files carried by the RPC itself, stored as one row. */
  complete(files: { path: string; blob: string }[]): number {
    return this.write(JSON.stringify(files));
  }
}

const SERVER_INFO = { name: "floor", version: "0.0.0" };

const stubOf = (env: FloorEnv) => env.FLOOR.get(env.FLOOR.idFromName("floor"));

/** The one tool's server, a new one per exchange as the SDK's stateless handler wants. */
const mcp = (env: FloorEnv) =>
  createMcpHandler(
    () => {
      const server = new McpServer(SERVER_INFO);
      server.registerTool(
        "write",
        {
          description: "Stores its arguments as one row.",
          inputSchema: z.object({ task_id: z.string(), message: z.string(), progress: z.number() }),
        },
        async (args) => {
          await stubOf(env).write(JSON.stringify(args));
          return { content: [{ type: "text", text: "ok" }] };
        },
      );
      return server;
    },
    { responseMode: "json" },
  );

let handler: ReturnType<typeof mcp> | null = null;

/** A `tools/call` of `write` answered directly (the result as the SDK encodes it for 2026-07-28); anything else to the SDK. */
async function leanMcp(request: Request, env: FloorEnv, sdk: ReturnType<typeof mcp>): Promise<Response> {
  const text = await request.text();
  const message = JSON.parse(text) as { method?: string; id?: unknown; params?: { name?: string; arguments?: unknown } };
  if (message.method !== "tools/call" || message.params?.name !== "write") {
    return sdk.fetch(new Request(request.url, { method: "POST", headers: request.headers, body: text }));
  }
  await stubOf(env).write(JSON.stringify(message.params.arguments));
  const result = { content: [{ type: "text", text: "ok" }], resultType: "complete", _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  return Response.json({ result, jsonrpc: "2.0", id: message.id });
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/health") return Response.json({ ok: true });
    if (request.method !== "POST") return new Response("not found", { status: 404 });
    if (pathname === "/rpc") return Response.json({ ok: await stubOf(env).ping() });
    if (pathname === "/write") return Response.json({ rows: await stubOf(env).write(await request.text()) });
    if (pathname === "/complete") {
      const { files } = (await request.json()) as { files: { path: string; blob: string }[] };
      return Response.json({ rows: await stubOf(env).complete(files) });
    }
    if (pathname === "/mcp" || pathname === "/lean/mcp") {
      handler ??= mcp(env);
      return pathname === "/mcp" ? handler.fetch(request) : leanMcp(request, env, handler);
    }
    return new Response("not found", { status: 404 });
  },
} satisfies ExportedHandler<FloorEnv>;
