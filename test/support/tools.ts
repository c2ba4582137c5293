/** The tools an MCP client sees, sorted: the six reference tools and Waymark's two. */
export const EXPECTED_TOOLS = [
  "complete_task",
  "complete_workflow",
  "get_workflow",
  "log_decision",
  "log_issue",
  "log_milestone",
  "start_task",
  "start_workflow",
] as const;
