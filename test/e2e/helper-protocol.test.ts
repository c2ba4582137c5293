/**
 * One protocol through the helper: an SDK v2 client pinned to the newest revision the Worker
 * speaks (2026-07-28), one negotiating automatically and one on the 2025 handshake all work
 * through the helper's stdio server against a real `wrangler dev`, as they do directly.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { beforeAll, expect, it } from "vitest";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support.js";
import type { DevServer } from "../support/dev-server.js";
import { sharedDevServer } from "../support/shared-server.js";

let server: DevServer;
beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
});

type Negotiation = ConstructorParameters<typeof Client>[1];

async function throughHelper(options: Negotiation): Promise<Client> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("WAYMARK_")) env[key] = value;
  const transport = new StdioClientTransport({
    command: SYSTEM_NODE,
    args: [BIN, "mcp", "--url", `${server.url}/mcp`],
    env: { ...env, WAYMARK_TOKEN: server.token },
    stderr: "pipe",
  });
  const client = new Client({ name: "pinned-client", version: "1.0.0" }, options);
  await client.connect(transport);
  return client;
}

it.each([
  ["pinned to 2026-07-28", { versionNegotiation: { mode: { pin: "2026-07-28" } } }],
  ["auto (negotiates the newest)", { versionNegotiation: { mode: "auto" } }],
  ["the 2025 handshake", {}],
] as const)("a client %s lists, calls and reads resources through the helper", async (_label, options) => {
  const client = await throughHelper(options as Negotiation);
  try {
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain("start_workflow");
    const started = await client.callTool({ name: "start_workflow", arguments: { name: `protocol ${_label}`, force_new: true } });
    expect(started.isError).toBeFalsy();
    const workflowId = (started.structuredContent as { workflow_id: string }).workflow_id;
    const task = await client.callTool({ name: "start_task", arguments: { workflow_id: workflowId, name: "t", goal: "g" } });
    expect(task.isError).toBeFalsy();
    const resources = await client.listResources();
    expect(resources.resources.map((r) => r.uri)).toContain("waymark://server/info");
    const info = await client.readResource({ uri: "waymark://server/info" });
    expect(JSON.stringify(info.contents)).toContain("2026-07-28");
  } finally {
    await client.close();
  }
});
