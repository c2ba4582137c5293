/**
 * @module proxy/results
 * What the proxy changes in what passes through it: the tool list without the helper-only
 * inputs, the task id of a start_task result, the workflow's state a result carries for the
 * hooks (taken out: the agent has no use for it), the helper's own warnings appended to a
 * result, and a failure to reach the endpoint as a tool error the agent can read.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import type { Unavailable } from "@waymark/protocol/wire";
import { HELPER_INPUTS, WORKFLOW_STATE_META } from "@waymark/protocol/wire-constants";
import { readableWarning } from "../outgoing.js";
import type { RemoteFailure } from "../remote.js";

function helperInputOf(tool: string): string | undefined {
  return Object.hasOwn(HELPER_INPUTS, tool) ? HELPER_INPUTS[tool as keyof typeof HELPER_INPUTS] : undefined;
}

/** The tool as listed to the agent: the helper-only input removed from its schema. */
export function hideHelperInputs(tool: Tool): Tool {
  const hidden = helperInputOf(tool.name);
  const schema = tool.inputSchema;
  if (!hidden || !schema.properties || !(hidden in schema.properties)) return tool;
  const { [hidden]: _removed, ...properties } = schema.properties;
  const required = schema.required?.filter((name) => name !== hidden);
  const inputSchema: Tool["inputSchema"] = { ...schema, properties };
  if (required) inputSchema.required = required;
  else delete inputSchema.required;
  return { ...tool, inputSchema };
}

export function failureResult(error: RemoteFailure): CallToolResult {
  return { isError: true, content: [{ type: "text", text: error.message }] };
}

/** task_id from a start_task result: structuredContent first, else the JSON text. */
export function taskIdOf(result: CallToolResult): string | undefined {
  const structured = result.structuredContent as { task_id?: unknown } | undefined;
  if (typeof structured?.task_id === "string") return structured.task_id;
  for (const block of result.content ?? []) {
    if (block.type !== "text") continue;
    try {
      const parsed = JSON.parse(block.text) as { task_id?: unknown } | null;
      if (typeof parsed?.task_id === "string") return parsed.task_id;
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined;
}

/** The workflow's state as the endpoint told it with a start_task or complete_task, for the hooks' journal. */
export type KeptWorkflowState = { workflow_id: string; text: string };

/** Bound on the kept text the helper accepts (the endpoint sends at most 4,096 characters). */
const KEPT_STATE_CHARS = 16 * 1024;

/**
 * The workflow's state the endpoint put in a result's `_meta` (WORKFLOW_STATE_META), taken out of
 * the result the agent gets; null when the result carries none (an error, or an older endpoint).
 */
export function takeWorkflowState(result: CallToolResult): { result: CallToolResult; state: KeptWorkflowState | null } {
  const meta = result._meta;
  if (!meta || !Object.hasOwn(meta, WORKFLOW_STATE_META)) return { result, state: null };
  const { [WORKFLOW_STATE_META]: carried, ...rest } = meta;
  const { _meta: _taken, ...answer } = result;
  const stripped: CallToolResult = Object.keys(rest).length > 0 ? { ...answer, _meta: rest } : answer;
  const fields = typeof carried === "object" && carried !== null ? (carried as Record<string, unknown>) : {};
  const valid = typeof fields.workflow_id === "string" && typeof fields.text === "string" && !result.isError;
  return {
    result: stripped,
    state: valid ? { workflow_id: fields.workflow_id as string, text: (fields.text as string).slice(0, KEPT_STATE_CHARS) } : null,
  };
}

/**
 * The helper's own warnings shown to the agent in the tool result's text, unless the edge
 * already repeated them (it records them with the task too).
 */
export function withWarnings(result: CallToolResult, warnings: readonly string[]): CallToolResult {
  if (result.isError || warnings.length === 0) return result;
  const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  const missing = warnings.filter((warning) => !text.includes(warning));
  if (missing.length === 0) return result;
  return { ...result, content: [...result.content, { type: "text", text: missing.map((w) => `warning: ${w}`).join("\n") }] };
}

/** What the edge is told when the helper could not observe: the task is still recorded, with the reason. */
export function unavailable(reason: string): Unavailable {
  return { type: "unavailable", reason: readableWarning(reason) };
}
