/**
 * @module lean-call — the common exchange of /mcp answered without the SDK's per-request machinery:
 * one 2026-07-28 `tools/call` of one of our tools, as every negotiating client (the helper, SDK v2
 * with version negotiation) sends for each tool call. The SDK would connect a pooled server to a
 * new per-request transport, run its protocol layer, the tool's pass-through schema checks and its
 * result encoding: about 0.4 ms of the Worker's CPU per call (BENCHMARKS.md, "Where each
 * millisecond goes"). Here the same tool definition runs (define.ts: the one validation, redaction
 * and error mapping) and the response is the bytes the SDK writes for it: the result with
 * `resultType` and the server's identity in `_meta`, as JSON (test/mcp/lean-call.test.ts sends
 * every request down both paths and compares the responses byte for byte).
 *
 * Only what is certain to be such an exchange is taken: the SDK's own classifier
 * (classifyInboundRequest) must call it modern at our revision (asked once per distinct envelope), the three standard headers must
 * name exactly what the body does, and the message may carry nothing beyond a tool's name, its
 * arguments object and the envelope. Anything else — other methods, batches, 2025-era clients,
 * an app-only tool, a malformed or unusual envelope, a mismatched header — is left to the SDK,
 * which answers it (and its errors) as before.
 */
import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  classifyInboundRequest,
  isJsonContentType,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
} from "@modelcontextprotocol/server";
import type { ToolContext } from "./context";
import type { ToolDefinition } from "./define";
import { SERVER_INFO, TOOLS } from "./server";

/** The one revision taken here; the SDK serves every other. */
const REVISION = "2026-07-28";
const TOOLS_BY_NAME = new Map<string, ToolDefinition>(TOOLS.map((tool) => [tool.name, tool]));
const MESSAGE_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAM_KEYS = new Set(["name", "arguments", "_meta"]);
const ENVELOPE_KEYS = new Set([PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY]);

/** A `tools/call` this module answers: the tool, its arguments and the request id. */
interface LeanCall {
  tool: ToolDefinition;
  args: Record<string, unknown>;
  id: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

/** The call, when the request is one this module answers exactly as the SDK would; null leaves it to the SDK. */
export function leanCallOf(request: Request, body: unknown): LeanCall | null {
  if (!isPlainObject(body) || body.method !== "tools/call" || body.jsonrpc !== "2.0") return null;
  const { id, params } = body;
  // The SDK's request ids are strings or integers (RequestIdSchema).
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return null;
  if (!onlyKeys(body, MESSAGE_KEYS) || !isPlainObject(params) || !onlyKeys(params, PARAM_KEYS)) return null;
  const tool = typeof params.name === "string" ? TOOLS_BY_NAME.get(params.name) : undefined;
  const args = params.arguments ?? {};
  const meta = params._meta;
  if (!tool || !isPlainObject(args) || !isPlainObject(meta) || !onlyKeys(meta, ENVELOPE_KEYS)) return null;
  const headers = request.headers;
  if (request.method !== "POST" || !isJsonContentType(headers.get("content-type"))) return null;
  if (
    headers.get("mcp-protocol-version") !== REVISION ||
    headers.get("mcp-method") !== "tools/call" ||
    headers.get("mcp-name") !== tool.name
  )
    return null;
  return modernEnvelope(meta, body, tool.name) ? { tool, args, id } : null;
}

/** Envelopes the SDK's classifier routed modern at our revision (by their JSON text): a client sends the same one with every call. */
const envelopes = new Map<string, boolean>();
const ENVELOPES_KEPT = 256;

/**
 * Whether the SDK's own reading of the request (classifyInboundRequest: its envelope checks, in
 * zod) routes it to the modern path at our revision. Everything else it reads (method, id, params'
 * keys, the three headers) was checked exactly above, so its answer depends on the envelope
 * alone: asked once per distinct envelope and kept, which spares a zod parse per call.
 */
function modernEnvelope(meta: Record<string, unknown>, body: Record<string, unknown>, name: string): boolean {
  const key = JSON.stringify(meta);
  const known = envelopes.get(key);
  if (known !== undefined) return known;
  const route = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: REVISION,
    mcpMethodHeader: "tools/call",
    mcpNameHeader: name,
    body,
  });
  const modern = route.kind === "modern" && route.classification.revision === REVISION && route.messageKind === "request";
  if (envelopes.size >= ENVELOPES_KEPT) envelopes.clear();
  envelopes.set(key, modern);
  return modern;
}

/** What the SDK's tools/call answers when a handler throws (McpServer's createToolError). */
function thrownResult(error: unknown): CallToolResult {
  return { content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }], isError: true };
}

/**
 * The result as the SDK encodes it for 2026-07-28. The SDK parses a tool's result with the
 * protocol's CallToolResult schema (zod) on every call, which puts its fields in the schema's order
 * (`_meta`, `content`, `structuredContent`, `isError`, then any other) and checks their shapes;
 * then it stamps `resultType` and the server's identity in `_meta`. Our results are built by
 * define.ts and context.ts in those shapes (test/mcp/lean-call.test.ts checks every tool's against
 * the SDK's own answer, test/mcp/output-schemas.test.ts their fields), so here the order is kept
 * and the per-call parse is not repeated.
 */
function encoded(result: CallToolResult): Record<string, unknown> {
  const { _meta: meta, content, structuredContent, isError, ...rest } = result;
  const ordered: Record<string, unknown> = {};
  if (meta !== undefined) ordered._meta = meta;
  ordered.content = content;
  if (structuredContent !== undefined) ordered.structuredContent = structuredContent;
  if (isError !== undefined) ordered.isError = isError;
  Object.assign(ordered, rest);
  if (ordered.resultType === undefined) ordered.resultType = "complete";
  if (meta === undefined) ordered._meta = { [SERVER_INFO_META_KEY]: SERVER_INFO };
  else if (meta[SERVER_INFO_META_KEY] === undefined) ordered._meta = { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
  return ordered;
}

/** Runs the call with the caller's context and answers with the SDK's bytes for it. */
export async function answerLeanCall(call: LeanCall, context: ToolContext): Promise<Response> {
  let result: CallToolResult;
  try {
    result = await call.tool.call(call.args, context);
  } catch (error) {
    result = thrownResult(error);
  }
  // The SDK's output check: our output schemas accept any object (arguments.ts outputShape), so only a missing one fails it.
  if (result.isError !== true && result.structuredContent === undefined)
    result = thrownResult(
      new Error(`Output validation error: Tool ${call.tool.name} has an output schema but no structured content was provided`),
    );
  // Status 200 and `content-type: application/json` are Response.json's own: no init, no Headers object built from one.
  return Response.json({ result: encoded(result), jsonrpc: "2.0", id: call.id });
}
