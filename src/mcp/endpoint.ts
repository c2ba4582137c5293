import { createMcpHandler } from "agents/mcp/server";
import { authenticateBearer, UNAUTHORIZED_HEADERS } from "../auth";
import { LIMITS } from "../limits";
import { buildMcpServer } from "./server";

type JsonRpcId = string | number | null;

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}, id: JsonRpcId = null): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id }, { status, headers });
}

/** Reads at most `limit` bytes; null when the body is larger (the rest is never read). */
async function readBounded(request: Request, limit: number): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get("Content-Length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) return null;
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
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

/** POST /mcp: Origin check, bearer auth, bounded body, then the stateless MCP handler. */
export async function handleMcp(request: Request, env: Env): Promise<Response> {
  if (!originAllowed(request, env)) return jsonRpcError(403, -32000, "Forbidden: Origin not allowed");
  const auth = await authenticateBearer(env, request);
  if (!auth.ok)
    return jsonRpcError(auth.status, -32001, auth.message, auth.status === 401 ? UNAUTHORIZED_HEADERS : { "Retry-After": "60" });
  const account = auth.account;
  let parsedBody: unknown;
  let forwarded = request;
  if (request.method === "POST") {
    const body = await readBounded(request, LIMITS.MAX_BODY_BYTES);
    if (body === null) return jsonRpcError(413, -32600, `PAYLOAD_TOO_LARGE: request body exceeds ${LIMITS.MAX_BODY_BYTES} bytes`);
    try {
      parsedBody = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body));
    } catch {
      return jsonRpcError(400, -32700, "Parse error: the body is not valid UTF-8 JSON");
    }
    forwarded = new Request(request.url, { method: "POST", headers: request.headers, body });
  }
  const origin = new URL(request.url).origin;
  const handler = createMcpHandler(() => buildMcpServer({ env, account, origin }), {
    route: "/mcp",
    corsOptions: false,
    // Origin was validated above against this deployment's own origin.
    allowedOriginHostnames: "*",
  });
  return handler.fetch(forwarded, parsedBody === undefined ? undefined : { parsedBody });
}
