/**
 * @module endpoint — POST /mcp: Origin check, bearer auth, a bounded body, the protocol checks
 * the SDK answers badly, then the stateless MCP handler (one per isolate) with the account's context.
 */
import { type AuthInfo, createMcpHandler } from "@modelcontextprotocol/server";
import { authenticateBearer, mcpUnauthorizedHeaders, type Principal } from "../http/bearer-tokens";
import { readBounded } from "../http/bounded-body";
import { LIMITS } from "../limits";
import { rendersApps } from "./app";
import type { ToolContext } from "./context";
import { scopeRefusal } from "./message-scopes";
import { buildMcpServer } from "./server";
import { openSubscription, subscriptionRequest } from "./subscriptions";

type JsonRpcId = string | number | null;

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}, id: JsonRpcId = null): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id }, { status, headers });
}

/** Browsers may only call from this deployment's own origin or WAYMARK_ALLOWED_ORIGINS (MCP spec: validate Origin). */
export function originAllowed(request: Request, env: Env): boolean {
  const origin = request.headers.get("Origin");
  if (origin === null) return true;
  const own = new URL(request.url).origin;
  const extra = (env.WAYMARK_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  return origin === own || extra.includes(origin);
}

/** The account's context rides on the request's AuthInfo to the per-request server the handler builds. */
interface WaymarkAuthInfo extends AuthInfo {
  extra: { context: ToolContext };
}

function contextOf(authInfo: AuthInfo | undefined): ToolContext {
  const context = (authInfo as WaymarkAuthInfo | undefined)?.extra?.context;
  if (!context) throw new Error("MCP request without an authenticated context");
  return context;
}

/** Non-streaming decodes keep no state between calls, so one decoder serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Built once per isolate: nothing in it depends on the request. The SDK's own stateless handler
 * (both protocol eras): Host, Origin, CORS and auth are settled before it runs (requestGuard,
 * handleMcp), so the agents package's wrapper around it would only copy every response.
 */
const handler = createMcpHandler(({ authInfo }) => buildMcpServer(contextOf(authInfo)));

/** Stateless Streamable HTTP: every exchange is one POST; there is no stream to GET and no session to DELETE. */
const ALLOWED_METHODS = "POST";

/**
 * A 2025-era `initialize` must name the protocol version it wants. The SDK would answer a missing
 * one with -32603 and a schema dump; this is the one-line -32602 the spec calls for.
 */
function initializeProblem(body: unknown): { id: JsonRpcId; message: string } | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return null;
  const message = body as { method?: unknown; id?: unknown; params?: { protocolVersion?: unknown } };
  if (message.method !== "initialize") return null;
  const id = typeof message.id === "string" || typeof message.id === "number" ? message.id : null;
  const version = message.params?.protocolVersion;
  if (typeof version === "string" && version !== "") return null;
  return { id, message: 'Invalid params: initialize requires params.protocolVersion (a string such as "2025-11-25")' };
}

/** An upper bound on the objects and arrays a JSON text holds (brackets inside strings count too). */
function containerCount(body: Uint8Array): number {
  // indexOf runs natively: a byte-by-byte loop over a helper's 100-file complete_task took milliseconds.
  let count = 0;
  for (const bracket of [0x7b, 0x5b]) {
    for (let at = body.indexOf(bracket); at !== -1; at = body.indexOf(bracket, at + 1)) count++;
  }
  return count;
}

/**
 * POST /mcp: Origin check, bearer auth (unless an OAuth access token was already validated:
 * `principal`), bounded body, the caller's scopes, then the stateless MCP handler.
 */
export async function handleMcp(request: Request, env: Env, principal?: Principal): Promise<Response> {
  if (!originAllowed(request, env)) return jsonRpcError(403, -32000, "Forbidden: Origin not allowed");
  const auth = principal ? { ok: true as const, ...principal } : await authenticateBearer(env, request);
  if (!auth.ok)
    return jsonRpcError(
      auth.status,
      -32001,
      auth.message,
      auth.status === 401 ? mcpUnauthorizedHeaders(request.url) : { "Retry-After": "60" },
    );
  if (request.method !== "POST") {
    return jsonRpcError(405, -32000, `Method not allowed: this stateless endpoint answers ${ALLOWED_METHODS} only`, {
      Allow: ALLOWED_METHODS,
    });
  }
  const body = await readBounded(request, LIMITS.MAX_BODY_BYTES);
  if (body === null) return jsonRpcError(413, -32600, `PAYLOAD_TOO_LARGE: request body exceeds ${LIMITS.MAX_BODY_BYTES} bytes`);
  // Parsing allocates per object and array: cap how many the body can hold before parsing it.
  const containers = containerCount(body);
  if (containers > LIMITS.MAX_JSON_CONTAINERS) {
    return jsonRpcError(
      413,
      -32600,
      `PAYLOAD_TOO_LARGE: request body holds ${containers} JSON objects or arrays; at most ${LIMITS.MAX_JSON_CONTAINERS}`,
    );
  }
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(UTF8.decode(body));
  } catch {
    return jsonRpcError(400, -32700, "Parse error: the body is not valid UTF-8 JSON");
  }
  const badInitialize = initializeProblem(parsedBody);
  if (badInitialize) return jsonRpcError(400, -32602, badInitialize.message, {}, badInitialize.id);
  const refused = scopeRefusal(parsedBody, auth.scopes);
  if (refused) return refused;
  const subscription = subscriptionRequest(parsedBody);
  if (subscription) return openSubscription(request, env, auth.account, subscription);
  const context: ToolContext = { env, account: auth.account, origin: new URL(request.url).origin, rendersApps: rendersApps(parsedBody) };
  const authInfo: WaymarkAuthInfo = { token: "", clientId: auth.account, scopes: [], extra: { context } };
  const forwarded = new Request(request.url, { method: "POST", headers: request.headers, body });
  return handler.fetch(forwarded, { parsedBody, authInfo });
}
