/**
 * @module server — Waymark's MCP server: the tool definitions and their JSON Schemas are built
 * once per isolate (module scope); per request only a light McpServer is assembled around them,
 * bound to the authenticated account (the SDK's stateless handler wants a fresh instance each time).
 */
import { McpServer } from "@modelcontextprotocol/server";
import { registerApp, UI_EXTENSION } from "./app";
import type { ToolContext } from "./context";
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

/** One light server per request around the shared definitions; tools act for the authenticated account. */
export function buildMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS, capabilities: CAPABILITIES });
  for (const tool of TOOLS) server.registerTool(tool.name, tool.config, (args: unknown) => tool.call(args, ctx));
  registerResources(server, ctx, { ...SERVER_INFO, tools: TOOL_NAMES, prompts: PROMPT_NAMES });
  registerPrompts(server, ctx);
  registerApp(server, ctx);
  return server;
}
