import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ResumeCandidate } from "../../account/object";
import { ok } from "../../errors";
import { newWorkflowId, workflowIdForKey } from "../../ids";
import { LIMITS } from "../../limits";
import { WRITES } from "../annotations";
import { advertise, outputShape, parseArguments } from "../arguments";
import { errorResult, fromRpc, type ToolContext, toolResult, workflowStub } from "../context";
import { idempotencyKey, requiredText, text } from "../fields";

export const startWorkflowInput = z.strictObject({
  name: requiredText(LIMITS.NAME, "Short workflow name (e.g., 'Auth system refactor')"),
  description: text(LIMITS.DESCRIPTION, "Detailed description of the workflow goal").optional(),
  plan: z
    .array(z.strictObject({ step: requiredText(LIMITS.NAME), goal: requiredText(LIMITS.SHORT_TEXT) }))
    .max(LIMITS.PLAN_STEPS)
    .describe("Optional implementation plan as steps")
    .optional(),
  force_new: z.boolean().describe("Even if an open one has this name").optional(),
  idempotency_key: idempotencyKey,
});

const output = outputShape({ workflow_id: "string", created_at: "string", share_url: "string" });

/** Why no workflow was created: what the agent reads when the structured result is ignored. */
function renderResumed(candidate: ResumeCandidate): string {
  return [
    `An open workflow with this name exists: ${candidate.workflow_id} "${candidate.name}" (${candidate.open_tasks} open task(s), updated ${candidate.updated_at}).`,
    "No new workflow was created. Call get_workflow to resume it, or start_workflow with force_new: true.",
    `workflow_id: ${candidate.workflow_id}`,
  ].join("\n");
}

export function registerStartWorkflow(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "start_workflow",
    {
      description: "Initialize a new workflow tracking session. Call once per piece of work.",
      inputSchema: advertise(startWorkflowInput),
      outputSchema: output,
      annotations: WRITES,
    },
    async (args) => {
      const parsed = parseArguments(startWorkflowInput, args);
      if (!parsed.ok) return errorResult(parsed);
      const input = parsed.value;
      const id = input.idempotency_key ? await workflowIdForKey(ctx.account, input.idempotency_key) : newWorkflowId();
      if (!input.force_new) {
        const account = ctx.env.ACCOUNT.get(ctx.env.ACCOUNT.idFromName(ctx.account));
        const candidate = await account.openWorkflowNamed(input.name);
        // A retry of the call that created `candidate` (same idempotency key) replays below instead.
        if (candidate && candidate.workflow_id !== id) {
          const structured = {
            workflow_id: candidate.workflow_id,
            created_at: candidate.created_at,
            resumed: true,
            resume_candidate: candidate,
          };
          return toolResult(structured, renderResumed(candidate));
        }
      }
      const stub = workflowStub(ctx, id);
      if (!stub) return errorResult({ ok: false, code: "INTERNAL", message: "could not allocate a workflow id" });
      return fromRpc(
        async () => {
          const started = await stub.startWorkflow(ctx.account, id, input);
          if (!started.ok) return started;
          // The read-only page of this workflow (issue 4); created here, managed from the dashboard.
          const share = await stub.shareLink(ctx.account);
          const token = share.ok ? share.value.token : null;
          return ok(token ? { ...started.value, share_url: `${ctx.origin}/s/${token}` } : started.value);
        },
        (out) =>
          [
            `workflow_id: ${out.workflow_id}`,
            `created_at: ${out.created_at}`,
            ...("share_url" in out ? [`share_url: ${out.share_url}`] : []),
          ].join("\n"),
      );
    },
  );
}
