/**
 * @module define — the one way to define a tool. A definition is built once per isolate (its
 * JSON Schemas included); every call goes through the same path: validate the arguments with the
 * tool's zod schema, remove the secrets from every string and key sent, the helper's inputs
 * included (the helper's rule, @waymark/protocol/redact: a client without the helper stores none
 * either; on what the helper redacted it changes nothing, so a device's signature still verifies) and validate again
 * what is stored, run, and map any failure — a refusal or an exception — to one error shape.
 */
import type { CallToolResult, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server";
import { type Redaction, redactionNote, redactToolArguments } from "@waymark/protocol/redact";
import type { z } from "zod";
import { fail, type Result } from "../errors";
import type { FeedbackDigest } from "../workflow/feedback";
import type { KeptState } from "../workflow/results";
import { advertise, outputShape, parseArguments } from "./arguments";
import { errorResult, type ToolContext, toolResult } from "./context";
import { withWorkflowState } from "./resume-text";
import { withDigest, withReviewerFeedback } from "./reviewer-feedback";

export interface ToolSpec<I, O extends object> {
  name: string;
  /** Terse: every byte of tools/list costs each agent context. */
  description: string;
  input: z.ZodType<I>;
  /** Inputs advertised as plain objects with this one-line description (shapes too costly to spell out). */
  opaqueInputs?: Record<string, string>;
  /** Every top-level field the result can carry (test/mcp/output-schemas.test.ts checks each is listed). */
  output: readonly (keyof O & string)[];
  annotations: ToolAnnotations;
  /** The tool's `_meta` in tools/list (the review app's link: src/mcp/app.ts). */
  meta?: Record<string, unknown>;
  run: (input: I, ctx: ToolContext) => Promise<Result<O>>;
  /** The short text form of a successful result. */
  render: (output: O) => string;
}

export interface ToolDefinition {
  name: string;
  config: {
    description: string;
    inputSchema: StandardSchemaWithJSON;
    outputSchema: StandardSchemaWithJSON;
    annotations: ToolAnnotations;
    _meta?: Record<string, unknown>;
  };
  call(args: unknown, ctx: ToolContext): Promise<CallToolResult>;
}

/** Every tool's result can carry reviewer feedback (src/mcp/reviewer-feedback.ts), so every outputSchema declares it. */
const FEEDBACK_OUTPUT = "reviewer_feedback";

const STORE_FAILED = "the workflow store failed to answer; the call may be retried (with the same idempotency_key)";

export function defineTool<I, O extends object>(spec: ToolSpec<I, O>): ToolDefinition {
  return {
    name: spec.name,
    config: {
      description: spec.description,
      inputSchema: advertise(spec.input, spec.opaqueInputs),
      outputSchema: outputShape([...spec.output, FEEDBACK_OUTPUT]),
      annotations: spec.annotations,
      ...(spec.meta ? { _meta: spec.meta } : {}),
    },
    call: (args, ctx) => runTool(spec, args, ctx),
  };
}

/**
 * Validate, run, answer: a refusal keeps its code; an exception becomes INTERNAL without leaking
 * internals. Reviewer feedback: a writing tool's result already carries it (the workflow's write
 * took it in the same transaction), so only a reading tool asks the workflow for it.
 */
async function runTool<I, O extends object>(spec: ToolSpec<I, O>, args: unknown, ctx: ToolContext): Promise<CallToolResult> {
  // Validated as sent first, so redaction only ever reads text within the tools' bounds; validated
  // again once redacted (a marker can be longer than the secret it replaces).
  const sent = parseArguments(spec.input, args);
  if (!sent.ok) return errorResult(sent);
  const { written, redactions } = withoutSecrets(args);
  const parsed = redactions.length === 0 ? sent : parseArguments(spec.input, written);
  if (!parsed.ok) return errorResult(parsed);
  let result: Result<O>;
  try {
    result = await spec.run(parsed.value, ctx);
  } catch (error) {
    console.error(`${spec.name} failed`, error);
    result = fail("INTERNAL", STORE_FAILED);
  }
  if (!result.ok) return errorResult(result);
  // The workflow's state a helper keeps for its hooks goes in the result's _meta, not its fields.
  const {
    reviewer_feedback: carried,
    workflow_state: state,
    ...value
  } = result.value as O & { reviewer_feedback?: FeedbackDigest } & KeptState;
  const answer = withWorkflowState(withRedactionNote(toolResult(value, spec.render(result.value)), redactions), state);
  return spec.annotations.readOnlyHint ? withReviewerFeedback(answer, parsed.value, ctx) : withDigest(answer, carried);
}

/** The arguments with every agent-written text's secrets removed (arguments that are no object are left to validation). */
function withoutSecrets(args: unknown): { written: unknown; redactions: Redaction[] } {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return { written: args, redactions: [] };
  const { args: written, redactions } = redactToolArguments(args as Record<string, unknown>);
  return { written, redactions };
}

/** Tells the agent its text was stored with secrets removed, so it does not repeat them. */
function withRedactionNote(result: CallToolResult, redactions: readonly Redaction[]): CallToolResult {
  if (redactions.length === 0) return result;
  return { ...result, content: [...result.content, { type: "text", text: redactionNote(redactions, "before storing") }] };
}
