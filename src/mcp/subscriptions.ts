/**
 * @module subscriptions — following a workflow over MCP on a stateless endpoint. A client asks for
 * `waymark://workflows/{id}` updates with `subscriptions/listen` (2026-07-28) or, older clients,
 * `resources/subscribe`; the answer is a long-lived SSE response that this request keeps open. It
 * is fed by the workflow's Durable Object exactly as the live page is: a WebSocket to the object's
 * live feed, admitted by the object only for the account that owns the workflow (the Worker passes
 * the account it verified), capped per workflow (in the owner's pool, which a share link's readers
 * never fill) and per credential: each credential of the account is a client of its own, so a
 * read-only token holding its slots leaves every other credential's, the owner's included. A new
 * task, a completed task or workflow, and reviewer feedback each become
 * `notifications/resources/updated` for the workflow's URI; the client then reads the resource.
 *
 * Bounds: at most LIMITS.SUBSCRIPTION_URIS workflows per stream; the credential is checked again
 * every LIMITS.SUBSCRIPTION_RECHECK_MS (a revoked token or grant ends the stream) and a stream
 * lives at most LIMITS.SUBSCRIPTION_MAX_MS (the client listens again). `listen` follows the wire
 * format of the SDK's own router (acknowledgment first, the subscription id stamped on every
 * notification, a `complete` result at a graceful end). `resources/subscribe` answers its result
 * first and keeps the stream open for the notifications: a stateless endpoint has no session for
 * the 2025 GET stream, and SDK v1 clients dispatch every message of a POST's stream.
 */
import { authenticateToken, bearerToken } from "../http/bearer-tokens";
import { isWorkflowId } from "../ids";
import { LIMITS } from "../limits";
import { oauthPrincipal } from "../oauth/provider";
import { CLIENT_HEADER, MCP_ACCOUNT_HEADER } from "../workflow/workflow-object";
import { SERVER_INFO } from "./server";

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
const WORKFLOW_URI = /^waymark:\/\/workflows\/([^/?#]+)$/;
/** What a follower of the workflow wants to hear about: work starting or ending, and a reviewer's word. */
const NOTIFIED = new Set(["task.started", "task.completed", "workflow.completed", "feedback.created"]);
const KEEPALIVE_MS = 15_000;

type JsonRpcId = string | number;

export interface SubscriptionRequest {
  kind: "listen" | "subscribe";
  id: JsonRpcId;
  uris: string[];
}

/** A `subscriptions/listen` or `resources/subscribe` request (one message, not a batch), or null. */
export function subscriptionRequest(body: unknown): SubscriptionRequest | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return null;
  const message = body as { method?: unknown; id?: unknown; params?: Record<string, unknown> };
  if (typeof message.id !== "string" && typeof message.id !== "number") return null;
  if (message.method === "resources/subscribe") {
    return { kind: "subscribe", id: message.id, uris: typeof message.params?.uri === "string" ? [message.params.uri] : [] };
  }
  if (message.method !== "subscriptions/listen") return null;
  const filter = message.params?.notifications as { resourceSubscriptions?: unknown } | undefined;
  const uris = Array.isArray(filter?.resourceSubscriptions)
    ? filter.resourceSubscriptions.filter((u): u is string => typeof u === "string")
    : [];
  return { kind: "listen", id: message.id, uris };
}

function rpcError(id: JsonRpcId, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } });
}

/** Whether the credential that opened the stream still authenticates (a revoked token or OAuth grant does not). */
async function stillAuthorized(request: Request, env: Env): Promise<boolean> {
  const token = bearerToken(request);
  if (!token) return false;
  if (await authenticateToken(env, token)) return true;
  // An OAuth grant holds while its token does and the credential it was approved with does too.
  return (await oauthPrincipal(request, env, token)) !== null;
}

/** Opens each workflow's live feed as the account, counted against `credential`; on a refusal, closes what was opened and says which URI. */
async function openFeeds(env: Env, account: string, credential: string, request: SubscriptionRequest): Promise<WebSocket[] | Response> {
  const sockets: WebSocket[] = [];
  const refuse = (code: number, message: string) => {
    for (const socket of sockets) socket.close(1000, "subscription refused");
    return rpcError(request.id, code, message);
  };
  for (const uri of request.uris) {
    const id = WORKFLOW_URI.exec(uri)?.[1] ?? "";
    const notFound = `NOT_FOUND: ${uri}: no workflow ${id || uri} in this account`;
    if (!isWorkflowId(id)) return refuse(-32602, notFound);
    const stub = env.WORKFLOW.get(env.WORKFLOW.idFromName(id));
    const answer = await stub.fetch(`https://workflow.internal/live?after=${Number.MAX_SAFE_INTEGER}`, {
      headers: { Upgrade: "websocket", [MCP_ACCOUNT_HEADER]: account, [CLIENT_HEADER]: `mcp:${account}:${credential}` },
    });
    if (!answer.webSocket) {
      // The same answer for another account's workflow as for none: nothing leaks.
      if (answer.status !== 429) return refuse(-32602, notFound);
      return refuse(-32603, `TOO_MANY_SUBSCRIPTIONS: ${uri}: ${await answer.text()}`);
    }
    answer.webSocket.accept();
    sockets.push(answer.webSocket);
  }
  return sockets;
}

/** The long-lived SSE answer to a subscription: updates of each workflow until revocation, the time bound or the client leaves. */
export async function openSubscription(
  request: Request,
  env: Env,
  principal: { account: string; credential: string },
  subscription: SubscriptionRequest,
): Promise<Response> {
  const { account } = principal;
  if (subscription.uris.length === 0) {
    const field = subscription.kind === "listen" ? "notifications.resourceSubscriptions" : "uri";
    return rpcError(subscription.id, -32602, `INPUT_VALIDATION_ERROR: ${field}: name at least one waymark://workflows/{id}`);
  }
  if (subscription.uris.length > LIMITS.SUBSCRIPTION_URIS) {
    return rpcError(
      subscription.id,
      -32602,
      `INPUT_VALIDATION_ERROR: notifications.resourceSubscriptions: at most ${LIMITS.SUBSCRIPTION_URIS} workflows per subscription`,
    );
  }
  const opened = await openFeeds(env, account, principal.credential, subscription);
  if (opened instanceof Response) return opened;
  const sockets = opened;
  const stamp = (params: Record<string, unknown>) =>
    subscription.kind === "listen" ? { ...params, _meta: { [SUBSCRIPTION_ID]: subscription.id } } : params;
  const encoder = new TextEncoder();
  const timers: ReturnType<typeof setInterval>[] = [];
  let controller: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  const write = (frame: string) => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(frame));
    } catch {
      // The client went away; `cancel` ends the rest.
    }
  };
  const send = (message: object) => write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", ...message })}\n\n`);
  const end = (graceful: boolean) => {
    if (closed) return;
    if (graceful && subscription.kind === "listen") {
      send({
        id: subscription.id,
        result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: subscription.id, [SERVER_INFO_KEY]: SERVER_INFO } },
      });
    }
    closed = true;
    for (const timer of timers) clearInterval(timer);
    for (const socket of sockets) {
      try {
        socket.close(1000, "subscription ended");
      } catch {
        // Already closing.
      }
    }
    // A stream the client cancelled is already closed.
    if (graceful) controller.close();
  };
  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      if (subscription.kind === "listen") {
        send({
          method: "notifications/subscriptions/acknowledged",
          params: stamp({ notifications: { resourceSubscriptions: subscription.uris } }),
        });
      } else {
        send({ id: subscription.id, result: {} });
      }
      subscription.uris.forEach((uri, index) => {
        const socket = sockets[index];
        socket?.addEventListener("message", (message) => {
          if (typeof message.data !== "string") return;
          let parsed: { type?: string; event?: { type?: string } };
          try {
            parsed = JSON.parse(message.data);
          } catch {
            return;
          }
          if (parsed.type === "event" && NOTIFIED.has(parsed.event?.type ?? "")) {
            send({ method: "notifications/resources/updated", params: stamp({ uri }) });
          }
        });
        // The object closes the feed when the workflow can no longer be followed.
        socket?.addEventListener("close", () => end(true));
      });
      timers.push(setInterval(() => write(": keepalive\n\n"), KEEPALIVE_MS));
      timers.push(
        setInterval(async () => {
          if (!(await stillAuthorized(request, env))) end(true);
        }, Number(env.WAYMARK_SUBSCRIPTION_RECHECK_MS) || LIMITS.SUBSCRIPTION_RECHECK_MS),
      );
      timers.push(setInterval(() => end(true), LIMITS.SUBSCRIPTION_MAX_MS));
    },
    cancel() {
      end(false);
    },
  });
  return new Response(body, {
    headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no" },
  });
}
