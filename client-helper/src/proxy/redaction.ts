/**
 * @module proxy/redaction
 * Secrets never leave the machine: every string and key an agent wrote in a tool call (workflow
 * and task names and goals, areas, decisions, issues, milestones and their metadata and its keys,
 * outcomes, the commands it says it ran, a search query) passes @waymark/protocol/redact's
 * `redactToolArguments` before the call is forwarded, each secret replaced by a marker naming its
 * kind (`[redacted: GitHub token]`); what the helper computes itself (snapshots, changes, the
 * repository) is redacted before it is signed (../provenance-fields.ts, ./start-workflow.ts). Which
 * fields stay as written (ids, idempotency keys) is that module's rule, the one the edge applies too.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Redaction, redactionNote } from "@waymark/protocol/redact";

/** The result, telling the agent that its text was sent with secrets removed (so it does not repeat them). */
export function withRedactionNote(result: CallToolResult, redactions: readonly Redaction[]): CallToolResult {
  if (redactions.length === 0 || result.isError) return result;
  return { ...result, content: [...result.content, { type: "text", text: redactionNote(redactions, "before sending") }] };
}
