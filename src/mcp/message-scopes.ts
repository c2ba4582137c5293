/**
 * @module mcp/message-scopes
 * Scope checks of /mcp, made once on the parsed JSON-RPC body before the MCP handler runs:
 * a tool that changes the record (every tool not annotated read-only) needs `write`,
 * get_workflow, the resources and prompts/get need `read`. A refused tool call answers like any tool
 * failure (`isError`, "FORBIDDEN: …"), so agents read why; a refused resource request is a
 * JSON-RPC error. Listing tools and resources' metadata stays open to every credential.
 */
import type { MiddlewareHandler } from "hono";
import { allows, missingScopeMessage, type Scope } from "../domain/access-scopes";
import type { AppEnv } from "../http/types";
import { APP_TOOLS } from "./app";
import { TOOLS } from "./server";

const TOOL_SCOPES = new Map<string, Scope>(
  [...TOOLS, ...APP_TOOLS].map((tool) => [tool.name, tool.config.annotations.readOnlyHint ? "read" : "write"]),
);
/** Requests that read workflows: resources and subscriptions to them, and a prompt (`resume` reads the account's workflows). */
const READ_METHODS = new Set([
  "resources/read",
  "resources/list",
  "resources/templates/list",
  "resources/subscribe",
  "subscriptions/listen",
  "prompts/get",
]);

interface Message {
  id?: unknown;
  method?: unknown;
  params?: { name?: unknown };
}

/** The scope one JSON-RPC message needs, or null when any authenticated caller may send it. */
export function scopeNeeded(message: Message): Scope | null {
  if (message.method === "tools/call" && typeof message.params?.name === "string") return TOOL_SCOPES.get(message.params.name) ?? null;
  if (typeof message.method === "string" && READ_METHODS.has(message.method)) return "read";
  return null;
}

/** The answer refusing the body, or null when the caller's scopes cover every message in it. */
function scopeRefusal(body: unknown, scopes: readonly Scope[]): Response | null {
  const messages = (Array.isArray(body) ? body : [body]).filter((m): m is Message => typeof m === "object" && m !== null);
  const refused = messages.map((m) => ({ message: m, needed: scopeNeeded(m) })).filter((r) => r.needed && !allows(scopes, r.needed));
  const first = refused[0];
  if (!first?.needed) return null;
  const id = typeof first.message.id === "string" || typeof first.message.id === "number" ? first.message.id : null;
  const text = `FORBIDDEN: ${missingScopeMessage(first.needed)} (ask an admin for a token with it, or reconnect the app and grant it)`;
  if (messages.length === 1 && first.message.method === "tools/call") {
    return Response.json({ jsonrpc: "2.0", id, result: { isError: true, content: [{ type: "text", text }] } });
  }
  // HTTP 200: a JSON-RPC error the client surfaces, not a transport failure that would send it to re-authenticate.
  return Response.json({ jsonrpc: "2.0", id, error: { code: -32003, message: text } });
}

/** The /mcp step between the parsed body and the MCP handler: refuses a body the principal's scopes do not cover. */
export const mcpScopes: MiddlewareHandler<AppEnv> = async (c, next) => {
  const refused = scopeRefusal(c.get("rpc")?.parsed, c.get("principal").scopes);
  return refused ?? next();
};
