/**
 * @module proxy/redaction
 * Secrets never leave the machine: every text an agent wrote in a tool call (workflow and task
 * names and goals, decisions, issues, milestones and their metadata, outcomes, the commands it
 * says it ran, a search query) passes @waymark/protocol/redact before the call is forwarded, each
 * secret replaced by a marker naming its kind (`[redacted: GitHub token]`). Left as they are:
 * ids and idempotency keys (a changed id would name another record), areas (paths and globs), and
 * the helper's own inputs (computed here from git; the commands in them were redacted when the
 * hooks recorded them, ../hooks/commands.ts). Every other field, including any a later version of
 * a tool adds, is redacted: a field this list forgets is redacted, never sent as written.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Redaction, redactDeep } from "@waymark/protocol/redact";
import { HELPER_INPUT_NAMES } from "@waymark/protocol/wire-constants";

const KEPT_FIELDS: ReadonlySet<string> = new Set(["idempotency_key", "areas", ...HELPER_INPUT_NAMES]);

const kept = (field: string) => KEPT_FIELDS.has(field) || field.endsWith("_id");

/** The arguments with every agent-written text redacted, and what was removed. */
export function redactArguments(args: Record<string, unknown>): { args: Record<string, unknown>; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(args)) {
    if (kept(field)) {
      out[field] = value;
      continue;
    }
    const redacted = redactDeep(value);
    redactions.push(...redacted.redactions);
    out[field] = redacted.value;
  }
  return { args: out, redactions };
}

/** "2 secrets (GitHub token, password)": what was removed, by kind. */
export function describeRedactions(redactions: readonly Redaction[]): string {
  const kinds = [...new Set(redactions.map((r) => r.name))].join(", ");
  return `${redactions.length} secret${redactions.length === 1 ? "" : "s"} (${kinds})`;
}

/** The result, telling the agent that its text was sent with secrets removed (so it does not repeat them). */
export function withRedactionNote(result: CallToolResult, redactions: readonly Redaction[]): CallToolResult {
  if (redactions.length === 0 || result.isError) return result;
  const note = `waymark: ${describeRedactions(redactions)} removed before sending; the record shows [redacted: …] in their place.`;
  return { ...result, content: [...result.content, { type: "text", text: note }] };
}
