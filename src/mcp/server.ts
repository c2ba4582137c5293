/**
 * @module server — Waymark's MCP server: the tool definitions and their JSON Schemas are built
 * once per isolate (module scope), and so are the servers around them: every handler reads the
 * account it acts for from the request it serves (context.ts, requestContext), never from the
 * server, so a server that finished an exchange serves the next one. The SDK's stateless handler
 * wants an instance that serves no other exchange, and sets each exchange's protocol version
 * and client on it: a 2026-era exchange gets an idle server from the pool (each exchange sets
 * both afresh); a 2025-era one, whose version and client a server would keep from an earlier
 * `initialize`, a new server every time.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { registerApp, UI_EXTENSION } from "./app";
import { requestContext } from "./context";
import type { ToolDefinition } from "./define";
import { PROMPT_NAMES, registerPrompts } from "./prompts";
import { registerResources } from "./resources";
import { completeTaskTool } from "./tools/complete_task";
import { completeWorkflowTool } from "./tools/complete_workflow";
import { getWorkflowTool } from "./tools/get_workflow";
import { logDecisionTool } from "./tools/log_decision";
import { logIssueTool } from "./tools/log_issue";
import { logMilestoneTool } from "./tools/log_milestone";
import { startTaskTool } from "./tools/start_task";
import { startWorkflowTool } from "./tools/start_workflow";

export const SERVER_INFO = { name: "waymark", version: "0.1.0" } as const;

/** Every tool, in the order tools/list shows them. */
export const TOOLS: readonly ToolDefinition[] = [
  startWorkflowTool,
  startTaskTool,
  logDecisionTool,
  logIssueTool,
  logMilestoneTool,
  completeTaskTool,
  completeWorkflowTool,
  getWorkflowTool,
];

const INSTRUCTIONS =
  "Waymark records your work: start_workflow once, start_task before each task (declare areas), log_decision/log_issue/log_milestone sparingly, complete_task when done. After losing context, call get_workflow; get_workflow with query searches past work. Every writing tool accepts idempotency_key: a retry with the same key returns the first result. Areas are words (auth) or path globs (src/api/**).";

const TOOL_NAMES = TOOLS.map((tool) => tool.name);

/**
 * The endpoint is stateless and can never send list_changed notifications, so it does not
 * advertise them (the SDK would otherwise default listChanged to true).
 */
export const CAPABILITIES = {
  tools: { listChanged: false },
  // Subscriptions are answered by ./subscriptions, before the SDK's handler sees them.
  resources: { listChanged: false, subscribe: true },
  prompts: { listChanged: false },
  extensions: { [UI_EXTENSION]: {} },
};

/** A server around the shared definitions; the app's own tools only for clients that render apps. */
function buildServer(rendersApps: boolean): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, capabilities: CAPABILITIES });
  for (const tool of TOOLS)
    server.registerTool(tool.name, tool.config, (args: unknown, request) => tool.call(args, requestContext(request)));
  registerResources(server, { ...SERVER_INFO, tools: TOOL_NAMES, prompts: PROMPT_NAMES });
  registerPrompts(server);
  registerApp(server, rendersApps);
  return server;
}

/** Idle 2026-era servers, for clients that render apps and for the others; at most IDLE_SERVERS of each kept. */
const idle = { apps: [] as McpServer[], plain: [] as McpServer[] };
const IDLE_SERVERS = 16;

/** The server for one exchange (createMcpHandler's factory): an idle one back in its pool once the exchange closes. */
export function serverFor(era: "modern" | "legacy", rendersApps: boolean): McpServer {
  if (era !== "modern") return buildServer(rendersApps);
  const pool = rendersApps ? idle.apps : idle.plain;
  const server = pool.pop() ?? buildServer(rendersApps);
  // The SDK calls this once the exchange closed (its transport gone); a server whose exchange never opened is left to the collector.
  server.server.onclose = () => {
    if (pool.length < IDLE_SERVERS) pool.push(server);
  };
  return server;
}
