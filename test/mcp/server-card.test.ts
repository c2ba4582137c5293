import { describe, expect, it } from "vitest";
import { ORIGIN, rpc, workerFetch } from "../support/worker";

/** The server card says what tools/list and prompts/list say, to anyone, before connecting. */
describe("the MCP server card", () => {
  it("is served without credentials at both well-known paths", async () => {
    for (const path of ["/.well-known/mcp/server-card.json", "/.well-known/mcp/server-card"]) {
      const response = await workerFetch(`${ORIGIN}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    }
  });

  it("names the deployment, its transport, protocol versions and auth, and lists the same tools and prompts as the endpoint", async () => {
    const card = (await (await workerFetch(`${ORIGIN}/.well-known/mcp/server-card.json`)).json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      $schema: "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
      name: "localhost/waymark",
      version: "0.1.0",
      remotes: [
        {
          type: "streamable-http",
          url: `${ORIGIN}/mcp`,
          supportedProtocolVersions: expect.arrayContaining(["2026-07-28", "2025-11-25", "2025-06-18"]),
          authentication: { required: true, schemes: ["bearer", "oauth2"] },
        },
      ],
    });
    const tools = (await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" })).body?.result as { tools: unknown[] };
    expect(card.tools).toEqual(tools.tools);
    const prompts = (await rpc({ jsonrpc: "2.0", id: 2, method: "prompts/list" })).body?.result as { prompts: unknown[] };
    expect(card.prompts).toEqual(prompts.prompts);
    const initialize = await rpc({
      jsonrpc: "2.0",
      id: 3,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "card-test", version: "1" } },
    });
    expect(initialize.body?.result).toMatchObject({ capabilities: card.capabilities });
  });

  it("reverses a production host name into the card's name", async () => {
    const response = await workerFetch("http://waymark.example/.well-known/mcp/server-card.json");
    expect(((await response.json()) as { name: string }).name).toBe("example.waymark/waymark");
  });
});
