/**
 * @module prompts — the MCP prompts, for clients that show prompts as commands: `instructions`
 * (the text `waymark init` writes into each agent's instructions, from one source in
 * @waymark/protocol) and `resume` (a workflow's open tasks, recent work and plan, compactly: the
 * same text get_workflow {workflow_id} answers). Reading a workflow needs the `read` scope
 * (mcp/message-scopes), like get_workflow.
 */
import { type GetPromptResult, type McpServer, ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { INSTRUCTIONS } from "@waymark/protocol/instructions";
import { workflowId } from "@waymark/protocol/tools";
import { z } from "zod";
import { accountStub, requestContext, type ToolContext, workflowStub } from "./context";
import { RESUME_RECENT, renderResume } from "./resume-text";
import { consumesFeedback } from "./reviewer-feedback";

/** Other open workflows named after the resumed one, so the agent can switch. */
const OTHERS = 4;

const WORKFLOW_ARGUMENT = "Which workflow; default: your most recently updated open one";
const resumeArguments = z.object({ workflow_id: workflowId.optional().describe(WORKFLOW_ARGUMENT) });

/** The prompts as prompts/list shows them (the server card lists the same). */
export const PROMPTS = [
  {
    name: "instructions",
    title: "Waymark: keep a record of your work",
    description: "When to start workflows and tasks, what to log, what to close",
  },
  {
    name: "resume",
    title: "Waymark: resume",
    description: "Your open workflow: its open tasks, recent work and plan",
    arguments: [{ name: "workflow_id", description: WORKFLOW_ARGUMENT, required: false }],
  },
] as const;

function userText(text: string, description: string): GetPromptResult {
  return { description, messages: [{ role: "user", content: { type: "text", text } }] };
}

async function resume(ctx: ToolContext, requested: string | undefined): Promise<GetPromptResult> {
  const open = requested === undefined ? await accountStub(ctx).listWorkflows({ openOnly: true, limit: OTHERS + 1 }) : [];
  const id = requested ?? open[0]?.id;
  if (id === undefined) {
    return userText("You have no open Waymark workflow. Before substantial work, call start_workflow.", "No open workflow");
  }
  const stub = workflowStub(ctx, id);
  const info = stub ? await stub.resume(ctx.account, RESUME_RECENT, consumesFeedback(ctx)) : null;
  if (!info?.ok) {
    // The same answer for another account's workflow as for none: nothing leaks.
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `NOT_FOUND: workflow_id: no workflow ${id} in this account`);
  }
  const others = open.filter((w) => w.id !== id).map((w) => `${w.id} "${w.name}"`);
  const lines = [
    "Resume this Waymark workflow: continue its open task, or start_task for the next piece of work; complete_task when a task is done.",
    renderResume(info.value),
  ];
  if (others.length > 0) lines.push(`other open workflows: ${others.join(", ")}`);
  return userText(lines.join("\n"), `Resume ${info.value.workflow.name}`);
}

export const PROMPT_NAMES = PROMPTS.map((prompt) => prompt.name);

export function registerPrompts(server: McpServer): void {
  const [instructions, resumePrompt] = PROMPTS;
  server.registerPrompt(instructions.name, { title: instructions.title, description: instructions.description }, () =>
    userText(INSTRUCTIONS, "How to keep a record of your work in Waymark"),
  );
  server.registerPrompt(
    resumePrompt.name,
    { title: resumePrompt.title, description: resumePrompt.description, argsSchema: resumeArguments },
    ({ workflow_id }, request) => resume(requestContext(request), workflow_id),
  );
}
