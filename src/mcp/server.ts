import { McpServer } from "@modelcontextprotocol/server";
import type { ToolContext } from "./context";
import { registerResources } from "./resources";
import { registerCompleteTask } from "./tools/complete_task";
import { registerCompleteWorkflow } from "./tools/complete_workflow";
import { registerGetWorkflow } from "./tools/get_workflow";
import { registerLogDecision } from "./tools/log_decision";
import { registerLogIssue } from "./tools/log_issue";
import { registerLogMilestone } from "./tools/log_milestone";
import { registerStartTask } from "./tools/start_task";
import { registerStartWorkflow } from "./tools/start_workflow";

export const SERVER_INFO = { name: "waymark", version: "0.1.0" } as const;

/** Every tool, by name (waymark://server/info lists them). */
const TOOLS: Record<string, (server: McpServer, ctx: ToolContext) => void> = {
  start_workflow: registerStartWorkflow,
  start_task: registerStartTask,
  log_decision: registerLogDecision,
  log_issue: registerLogIssue,
  log_milestone: registerLogMilestone,
  complete_task: registerCompleteTask,
  complete_workflow: registerCompleteWorkflow,
  get_workflow: registerGetWorkflow,
};

/** One server per request (the endpoint is stateless); tools act for the authenticated account. */
export function buildMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    instructions:
      "Waymark records your work: start_workflow once, start_task before each task (declare areas), log_decision/log_issue/log_milestone sparingly, complete_task when done. After losing context, call get_workflow; get_workflow with query searches past work. Every writing tool accepts idempotency_key: a retry with the same key returns the first result. Areas are words (auth) or path globs (src/api/**).",
  });
  for (const register of Object.values(TOOLS)) register(server, ctx);
  registerResources(server, ctx, { ...SERVER_INFO, tools: Object.keys(TOOLS) });
  return server;
}
