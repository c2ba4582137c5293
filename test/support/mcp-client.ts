/**
 * @module test/support/mcp-client
 * MCP clients for the tests and the benches, inside workerd and in Node: the one way to connect
 * (the official SDK v2 client, or v1 as most clients in the field still are, over Streamable
 * HTTP to a `wrangler dev` or, inside workerd, to the Worker's own fetch), and the one way to
 * call a tool (`callTool` flattens any result; `ok` is a call that must succeed).
 *
 * Only MCP SDK imports, so it loads in workerd, under vitest in Node and in plain Node with type
 * stripping (the benches); relative imports would carry their `.ts` extension for that reason.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Where an MCP client connects: `${url}/mcp` with the bearer token, through `fetch` when given (workerd). */
export interface McpTarget {
  /** http://127.0.0.1:<port>, or the origin the Worker answers inside workerd */
  url: string;
  token: string;
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export interface ConnectOptions {
  name?: string;
  /**
   * SDK v2 only: "auto" discovers the newest protocol the server offers (server/discover), as an
   * up-to-date agent does; "legacy" (the SDK's default) starts with `initialize`.
   */
  negotiation?: "legacy" | "auto";
  /** SDK v2 only: declares the MCP Apps extension, as a host that renders apps does (the review app's tools are offered). */
  rendersApps?: boolean;
}

/** An MCP client connected to the target: SDK v2 unless `sdk: "v1"`. */
export function connect(target: McpTarget, options: ConnectOptions & { sdk: "v1" }): Promise<ClientV1>;
export function connect(target: McpTarget, options?: ConnectOptions & { sdk?: "v2" }): Promise<Client>;
export async function connect(target: McpTarget, options: ConnectOptions & { sdk?: "v1" | "v2" } = {}): Promise<Client | ClientV1> {
  const url = new URL(`${target.url}/mcp`);
  const transport = {
    requestInit: { headers: { Authorization: `Bearer ${target.token}` } },
    ...(target.fetch ? { fetch: target.fetch } : {}),
  };
  const info = { name: options.name ?? "waymark-test", version: "1.0.0" };
  if (options.sdk === "v1") {
    const client = new ClientV1(info);
    await client.connect(new TransportV1(url, transport));
    return client;
  }
  const apps = options.rendersApps
    ? { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } } } }
    : {};
  const client = new Client(info, {
    ...(options.negotiation === "auto" ? { versionNegotiation: { mode: "auto" as const } } : {}),
    ...apps,
  });
  await client.connect(new StreamableHTTPClientTransport(url, transport));
  return client;
}

/** A tool's structured result (or arguments). */
export type Structured = Record<string, unknown>;

/** A tool call flattened for assertions. */
export interface ToolOutcome {
  isError: boolean;
  text: string;
  structured: Structured;
}

/** Any MCP client, SDK v1 or v2 (or the helper's stdio proxy). */
export interface CallableClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

/**
 * Calls a tool. A tool error is an outcome with `isError` (for tests of refusals), or, with
 * `mustSucceed`, an exception carrying the tool's text.
 */
export async function callTool(
  client: CallableClient,
  name: string,
  args: Record<string, unknown>,
  options: { mustSucceed?: boolean } = {},
): Promise<ToolOutcome> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content?: { type: string; text?: string }[];
    structuredContent?: Record<string, unknown>;
  };
  const outcome = {
    isError: result.isError === true,
    text: (result.content ?? []).map((c) => c.text ?? "").join("\n"),
    structured: result.structuredContent ?? {},
  };
  if (options.mustSucceed && outcome.isError) throw new Error(`${name} failed: ${outcome.text}`);
  return outcome;
}

/** The structured result of a call that must succeed. */
export async function ok<T = Record<string, unknown>>(client: CallableClient, name: string, args: Record<string, unknown>): Promise<T> {
  return (await callTool(client, name, args, { mustSucceed: true })).structured as T;
}
