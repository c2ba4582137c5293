/**
 * @module http/api-errors
 * REST errors: every JSON API failure is `{code, message}` with a stable code (the tool
 * error codes plus the HTTP-only ones) and a message naming the field and the rule.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorCode } from "../errors";

export type ApiErrorCode = ErrorCode | "FORBIDDEN" | "RATE_LIMITED" | "MISCONFIGURED";

const STATUS: Record<ApiErrorCode, ContentfulStatusCode> = {
  INPUT_VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  QUOTA_EXCEEDED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  MISCONFIGURED: 500,
};

/** Nothing an API answers is cached or sniffed; the CSP forbids rendering it as a document. */
export const API_HEADERS: Record<string, string> = {
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

export const RETRY_HEADERS = { "Retry-After": "60" };

export function apiErrorResponse(code: ApiErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ code, message }, { status: STATUS[code], headers: { ...API_HEADERS, ...headers } });
}

export function apiError(c: Context, code: ApiErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return c.json({ code, message }, STATUS[code], { ...API_HEADERS, ...headers });
}

export type JsonRpcId = string | number | null;

/** /mcp answers in JSON-RPC: MCP clients read `error.message`. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
  id: JsonRpcId = null,
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id }, { status, headers });
}
