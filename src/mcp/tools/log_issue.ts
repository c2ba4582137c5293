/** @module log_issue — records a problem met on a task and how it was resolved. */
import { logIssueInput } from "@waymark/protocol/tools";
import { defineTaskLog } from "./task_log";

export const logIssueTool = defineTaskLog({
  name: "log_issue",
  description: "When you hit a problem and resolve it.",
  input: logIssueInput,
  record: (stub, account, input) => stub.logIssue(account, input),
});
