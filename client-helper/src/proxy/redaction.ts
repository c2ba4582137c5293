/**
 * @module proxy/redaction
 * Secrets never leave the machine: every text an agent wrote in a tool call (workflow and task
 * names and goals, decisions, issues, milestones and their metadata, outcomes, the commands it
 * says it ran, a search query) passes @waymark/protocol/redact's `redactToolArguments` before the
 * call is forwarded, each secret replaced by a marker naming its kind (`[redacted: GitHub
 * token]`); which fields stay as written (ids, idempotency keys, areas, the helper's own inputs)
 * is that module's rule, the one the edge applies too.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Redaction, redactionNote } from "@waymark/protocol/redact";

/** The result, telling the agent that its text was sent with secrets removed (so it does not repeat them). */
export function withRedactionNote(result: CallToolResult, redactions: readonly Redaction[]): CallToolResult {
  if (redactions.length === 0 || result.isError) return result;
  return { ...result, content: [...result.content, { type: "text", text: redactionNote(redactions, "before sending") }] };
}
