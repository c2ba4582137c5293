/**
 * @module endpoint — /mcp, an ordinary route of the app after the guard (Host and Origin, the one
 * rule of http/origins.ts): the body limit (hono's bodyLimit), the principal middleware (a
 * bootstrap, managed or OAuth token, each authenticated once: http/require-account.ts), then the
 * body is parsed (bounded in objects and arrays) and checked where the SDK answers badly, the
 * caller's scopes are checked per message (mcp/message-scopes.ts), and a subscription opens its
 * stream (mcp/subscriptions.ts) or the stateless MCP handler (one per isolate) runs with the
 * caller's context (on the request's AuthInfo: the servers themselves are shared, src/mcp/server.ts);
 * a plain 2026-07-28 `tools/call` of one of our tools is answered by mcp/lean-call.ts with the same
 * tool and the same bytes, without the SDK's per-request transport.
 *
 * The MCP SDK's own `createMcpHandler` serves it. Cloudflare's `agents` package wraps that same
 * handler and is not a dependency: its wrapper would check Host and Origin a second time under a
 * hostname-only rule of its own, add CORS headers this deployment does not send, and copy every
 * response; what else it offers (the OAuth provider's auth context) the principal middleware gives.
 */
import { createMcpHandler } from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { authorOf } from "../domain/credentials";
import { type JsonRpcId, jsonRpcError } from "../http/api-errors";
import { mcpUnauthorizedHeaders } from "../http/bearer-tokens";
import { type Refusal, requireAccount } from "../http/require-account";
import type { AppEnv } from "../http/types";
import { LIMITS } from "../limits";
import { oauthPrincipal } from "../oauth/provider";
import { rendersApps } from "./app";
import { contextOf, type ToolContext, type WaymarkAuthInfo } from "./context";
import { answerLeanCall, leanCallOf } from "./lean-call";
import { mcpScopes } from "./message-scopes";
import { serverFor } from "./server";
import { openSubscription, subscriptionRequest } from "./subscriptions";

/** Non-streaming decodes keep no state between calls, so one decoder serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Built once per isolate: nothing in it depends on the request; the servers it serves with come from src/mcp/server.ts. */
const handler = createMcpHandler(({ era, authInfo }) => serverFor(era, contextOf(authInfo).rendersApps === true));

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

/** A refused credential, as MCP clients read it: the 401 challenge names the protected-resource metadata (OAuth discovery). */
function refuseCredential(c: Context<AppEnv>, refusal: Refusal): Response {
  const headers = refusal.status === 401 ? mcpUnauthorizedHeaders(c.req.url) : refusal.status === 429 ? { "Retry-After": "60" } : {};
  return jsonRpcError(refusal.status, -32001, refusal.message, headers);
}

export const mcpRoutes = new Hono<AppEnv>();

mcpRoutes.all(
  "/mcp",
  bodyLimit({
    maxSize: LIMITS.MAX_BODY_BYTES,
    onError: () => jsonRpcError(413, -32600, `PAYLOAD_TOO_LARGE: request body exceeds ${LIMITS.MAX_BODY_BYTES} bytes`),
  }),
  requireAccount({ bearer: true, oauth: oauthPrincipal, session: false, otherwise: refuseCredential }),
  async (c, next) => {
    if (c.req.method !== "POST") {
      return jsonRpcError(405, -32000, `Method not allowed: this stateless endpoint answers ${ALLOWED_METHODS} only`, {
        Allow: ALLOWED_METHODS,
      });
    }
    const body = new Uint8Array(await c.req.arrayBuffer());
    // Parsing allocates per object and array: cap how many the body can hold before parsing it.
    const containers = containerCount(body);
    if (containers > LIMITS.MAX_JSON_CONTAINERS) {
      return jsonRpcError(
        413,
        -32600,
        `PAYLOAD_TOO_LARGE: request body holds ${containers} JSON objects or arrays; at most ${LIMITS.MAX_JSON_CONTAINERS}`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(UTF8.decode(body));
    } catch {
      return jsonRpcError(400, -32700, "Parse error: the body is not valid UTF-8 JSON");
    }
    const badInitialize = initializeProblem(parsed);
    if (badInitialize) return jsonRpcError(400, -32602, badInitialize.message, {}, badInitialize.id);
    c.set("rpc", { body, parsed });
    return next();
  },
  mcpScopes,
  (c) => {
    // c.get, not c.var: hono builds a new object of every variable on each read of c.var.
    const principal = c.get("principal");
    const { account, scopes } = principal;
    const author = authorOf(principal, principal.client === undefined ? "token" : "oauth");
    const rpc = c.get("rpc");
    if (!rpc) throw new Error("/mcp reached its handler without a parsed body");
    const subscription = subscriptionRequest(rpc.parsed);
    if (subscription) return openSubscription(c.req.raw, c.env, principal, subscription);
    const context: ToolContext = {
      env: c.env,
      account,
      scopes,
      origin: new URL(c.req.url).origin,
      rendersApps: rendersApps(rpc.parsed),
      author,
      credential: principal.credential,
    };
    const lean = c.env.WAYMARK_MCP_SDK_ONLY === "1" ? null : leanCallOf(c.req.raw, rpc.parsed);
    if (lean) return answerLeanCall(lean, context);
    const authInfo: WaymarkAuthInfo = { token: "", clientId: account, scopes: [...scopes], extra: { context } };
    // The body was read once; the SDK is handed the parsed body and a request it can read again.
    const request = new Request(c.req.url, { method: "POST", headers: c.req.raw.headers, body: rpc.body });
    return handler.fetch(request, { parsedBody: rpc.parsed, authInfo });
  },
);
