/**
 * MCP clients for the end-to-end tests against a running `wrangler dev`: an SDK v2 client that
 * negotiates the newest protocol it can, and a tool call that must succeed.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { BIN, SYSTEM_NODE } from "../../client-helper/test/support.ts";
import { connect } from "./agents.ts";
import type { DevServer } from "./dev-server.ts";
import { callToolOutcome } from "./tool-outcome.ts";

/** An SDK v2 client on a running `wrangler dev`, negotiating the newest protocol it can. */
export function connectToDevServer(server: DevServer, name = "e2e"): Promise<Client> {
  return connect(server, server.token, name);
}

/** An agent configured with the real helper (`waymark mcp` over stdio) in `dir`, forwarding to a running `wrangler dev`. */
export async function connectThroughHelper(
  server: Pick<DevServer, "url" | "token">,
  dir: string,
  cacheHome: string,
  name = "agent",
): Promise<Client> {
  const agent = new Client({ name, version: "1.0.0" });
  await agent.connect(
    new StdioClientTransport({
      command: SYSTEM_NODE,
      args: [BIN, "mcp", "--url", `${server.url}/mcp`, "--dir", dir],
      env: { ...(process.env as Record<string, string>), WAYMARK_TOKEN: server.token, XDG_CACHE_HOME: cacheHome },
    }),
  );
  return agent;
}

export type Structured = Record<string, unknown>;

/** Calls a tool that must succeed; a tool error fails the test with its text. */
export async function callTool(
  client: Client | ClientV1,
  name: string,
  args: Structured,
): Promise<{ structured: Structured; text: string }> {
  const outcome = await callToolOutcome(client, name, args);
  if (outcome.isError) throw new Error(`${name}: ${outcome.text}`);
  return { structured: outcome.structured, text: outcome.text };
}
