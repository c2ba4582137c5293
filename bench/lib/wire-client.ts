/**
 * @module wire-client — a load bench's agent as the server sees it, at the cost of the bytes it
 * sends. Each real agent runs its MCP client in its own process (on its own machine); the load
 * benches run every agent in this one Node process, beside the server on the same two cores, where
 * 50 SDK v2 clients spent about 4 ms of CPU per call (the profile's "client (this node)": undici's
 * fetch, the SDK's result schemas and output-schema checks) — more than the Worker itself, and one
 * thread for all of them. This client sends what an SDK v2 client with version negotiation sends,
 * byte for byte (the `server/discover` probe once, then each `tools/call` with the same headers,
 * envelope and field order: test/mcp/lean-call.test.ts's requests are the same), over one
 * keep-alive connection per agent (node:http), and reads the JSON answer; `ok()`
 * (test/support/mcp-client.ts) checks each result as for any client. What the server does per
 * call is unchanged; only the bench's own share of the machine shrinks.
 */
import { Agent, request } from "node:http";
import type { CallableClient, McpTarget } from "../../test/support/mcp-client.ts";

const REVISION = "2026-07-28";
/** The SDK's default request timeout. */
const TIMEOUT_MS = 60_000;

export interface WireClient extends CallableClient {
  close(): Promise<void>;
}

interface JsonRpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The JSON-RPC answer of a POST: JSON, or (should the server stream) the SSE frame carrying it. */
function answerOf(status: number, contentType: string, text: string): JsonRpcAnswer {
  const json = contentType.startsWith("text/event-stream")
    ? (text
        .split("\n")
        .filter((line) => line.startsWith("data: "))
        .at(-1)
        ?.slice(6) ?? "")
    : text;
  try {
    return JSON.parse(json) as JsonRpcAnswer;
  } catch {
    throw new Error(`POST /mcp answered ${status} with no JSON-RPC message: ${text.slice(0, 200)}`);
  }
}

/** A connected agent: the discovery probe answered, tools callable. */
export async function wireClient(target: McpTarget, name: string): Promise<WireClient> {
  const url = new URL(`${target.url}/mcp`);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const envelope = {
    "io.modelcontextprotocol/protocolVersion": REVISION,
    "io.modelcontextprotocol/clientInfo": { name, version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
  let nextId = 0;
  const post = (method: string, params: Record<string, unknown>, headers: Record<string, string>) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      const withEnvelope = { ...params, _meta: envelope };
      // In the SDK's field order: its probe is built jsonrpc-first, its requests method-first.
      const body = JSON.stringify(
        method === "server/discover"
          ? { jsonrpc: "2.0", id, method, params: withEnvelope }
          : { method, params: withEnvelope, jsonrpc: "2.0", id },
      );
      const sent = request(
        url,
        {
          method: "POST",
          agent,
          headers: {
            accept: "application/json, text/event-stream",
            authorization: `Bearer ${target.token}`,
            "content-type": "application/json",
            ...headers,
            "mcp-protocol-version": REVISION,
            "content-length": Buffer.byteLength(body),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () => {
            try {
              const answer = answerOf(
                response.statusCode ?? 0,
                response.headers["content-type"] ?? "",
                Buffer.concat(chunks).toString("utf8"),
              );
              if (answer.error)
                reject(new Error(`${method} answered ${response.statusCode}: ${answer.error.code} ${answer.error.message}`));
              else if (!answer.result) reject(new Error(`${method} answered ${response.statusCode} without a result`));
              else resolve(answer.result);
            } catch (error) {
              reject(error);
            }
          });
        },
      );
      sent.setTimeout(TIMEOUT_MS, () => sent.destroy(new Error(`${method}: no answer within ${TIMEOUT_MS} ms`)));
      sent.on("error", reject);
      sent.end(body);
    });
  await post("server/discover", {}, { "mcp-method": "server/discover" });
  return {
    callTool: ({ name: tool, arguments: args }) =>
      post("tools/call", { name: tool, ...(args !== undefined && { arguments: args }) }, { "mcp-method": "tools/call", "mcp-name": tool }),
    close: async () => agent.destroy(),
  };
}
