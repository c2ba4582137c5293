import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import type { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import type { DevServer } from "./dev-server";
import { callToolOutcome } from "./tool-outcome";

/** An SDK v2 client on a running `wrangler dev`, negotiating the newest protocol it can. */
export async function connectToDevServer(server: DevServer, name = "e2e"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${server.token}` } },
    }),
  );
  return client;
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
