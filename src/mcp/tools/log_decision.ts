/** @module log_decision — records an architectural decision on a task. */
import { logDecisionInput } from "@waymark/protocol/tools";
import { defineTaskLog } from "./task_log";

export const logDecisionTool = defineTaskLog({
  name: "log_decision",
  description: "For significant decisions (skip trivial ones).",
  input: logDecisionInput,
  record: (stub, account, input) => stub.logDecision(account, input),
});
