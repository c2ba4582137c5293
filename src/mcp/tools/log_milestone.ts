/** @module log_milestone — records progress on a task for the people watching its page. */
import { logMilestoneInput } from "@waymark/protocol/tools";
import { defineTaskLog } from "./task_log";

export const logMilestoneTool = defineTaskLog({
  name: "log_milestone",
  description: "Progress for watchers (at most ~5 per task).",
  input: logMilestoneInput,
  record: (stub, account, input) => stub.logMilestone(account, input),
  warns: true,
});
