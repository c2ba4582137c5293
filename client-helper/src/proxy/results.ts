/**
 * @module proxy/results
 * What the proxy changes in what passes through it: the tool list without the helper-only
 * inputs, the task id of a start_task result, the helper's own warnings appended to a result,
 * and a failure to reach the endpoint as a tool error the agent can read.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/server";
import type { Unavailable } from "@waymark/protocol/wire";
import { HELPER_INPUTS } from "@waymark/protocol/wire-constants";
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
