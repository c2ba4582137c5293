import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { PROTOCOL_VERSIONS } from "../../src/mcp/resources";
import { callTool, connect, ok } from "../support/mcp-client";
import { ORIGIN, rpc, TOKENS, workerFetch, workerTarget } from "../support/worker";

/** Protocol details that independent clients and the official conformance suite check. */
describe("MCP protocol correctness", () => {
  it("does not advertise list_changed notifications it can never send", async () => {
    const { body } = await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const capabilities = (body?.result as { capabilities: Record<string, Record<string, unknown>> } | undefined)?.capabilities ?? {};
    expect(capabilities.tools?.listChanged).not.toBe(true);
    expect(capabilities.resources?.listChanged).not.toBe(true);
    expect(capabilities.prompts?.listChanged).not.toBe(true);
    // Subscriptions it can answer: each is its own long-lived stream (src/mcp/subscriptions.ts).
    expect(capabilities.resources?.subscribe).toBe(true);
  });

  it.each([
    { label: "no params", params: undefined },
    { label: "no protocolVersion", params: { capabilities: {}, clientInfo: { name: "t", version: "1" } } },
    { label: "an empty protocolVersion", params: { protocolVersion: "", capabilities: {}, clientInfo: { name: "t", version: "1" } } },
  ])("answers initialize with $label as -32602 in one line", async ({ params }) => {
    const { status, body } = await rpc({ jsonrpc: "2.0", id: 7, method: "initialize", ...(params && { params }) });
    expect(status).toBe(400);
    expect(body).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32602 } });
    const message = (body?.error as { message: string } | undefined)?.message ?? "";
    expect(message).toMatch(/protocolVersion/);
    expect(message).not.toContain("\n");
    expect(message.length).toBeLessThan(120);
  });

  it.each(["GET", "DELETE", "PUT"])("answers %s /mcp with 405 and Allow: POST", async (method) => {
    const response = await workerFetch(`${ORIGIN}/mcp`, {
      method,
      headers: { Authorization: `Bearer ${TOKENS.acme}`, Accept: "application/json, text/event-stream" },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("POST");
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/POST only/);
  });

  it.each([
    ["start_workflow", { name: "   " }, "name: must not be blank"],
    ["start_workflow", { name: "\t\n" }, "name: must not be blank"],
  ] as const)("refuses a whitespace-only %s input", async (tool, args, message) => {
    const client = await connect(workerTarget());
    const outcome = await callTool(client, tool, args);
    expect(outcome.isError).toBe(true);
    expect(outcome.text).toBe(`INPUT_VALIDATION_ERROR: ${message}`);
  });

  it("refuses a whitespace-only task name and goal", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Blank names" });
    const outcome = await callTool(client, "start_task", { workflow_id, name: " ", goal: "  " });
    expect(outcome.text).toBe("INPUT_VALIDATION_ERROR: name: must not be blank; goal: must not be blank");
  });

  it("refuses an area whose braces expand past the cap", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Brace bomb" });
    const outcome = await callTool(client, "start_task", { workflow_id, name: "n", goal: "g", areas: ["ok/**", "{a,b}{c,d}{e,f}{g,h}"] });
    expect(outcome.text).toBe("INPUT_VALIDATION_ERROR: areas[1]: braces expand to more than 8 patterns");
  });

  it.each([
    [{ workflow_id: "wf_x", task_id: "tk_x" }, "arguments: give at most one of workflow_id, task_id, query (got workflow_id, task_id)"],
    [{ workflow_id: "wf_x", query: "q" }, "arguments: give at most one of workflow_id, task_id, query (got workflow_id, query)"],
    [{ limit: 3 }, "limit: only applies with query"],
    [{ workflow_id: "wf_x", limit: 3 }, "limit: only applies with query"],
  ])("get_workflow refuses mixed modes %j", async (args, message) => {
    const client = await connect(workerTarget());
    const outcome = await callTool(client, "get_workflow", args);
    expect(outcome.isError).toBe(true);
    expect(outcome.text).toBe(`INPUT_VALIDATION_ERROR: ${message}`);
  });

  it("lists in waymark://server/info every protocol version it negotiates", async () => {
    const info = async (client: { readResource(p: { uri: string }): Promise<unknown> }) => {
      const read = (await client.readResource({ uri: "waymark://server/info" })) as { contents: { text: string }[] };
      return JSON.parse(read.contents[0]?.text ?? "{}") as { protocol_versions: string[] };
    };
    const modern = new Client({ name: "modern", version: "1" }, { versionNegotiation: { mode: "auto" } });
    await modern.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: workerFetch,
        requestInit: { headers: { Authorization: `Bearer ${TOKENS.acme}` } },
      }),
    );
    const negotiated = modern.getNegotiatedProtocolVersion() ?? "";
    expect((await info(modern)).protocol_versions).toContain(negotiated);
    expect(negotiated >= "2026-07-28").toBe(true);

    const legacy = await connect(workerTarget(), { sdk: "v1" });
    expect((await info(legacy)).protocol_versions).toEqual([...PROTOCOL_VERSIONS]);
    for (const version of PROTOCOL_VERSIONS.filter((v) => v < "2026")) {
      const { body } = await rpc({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      expect((body?.result as { protocolVersion: string } | undefined)?.protocolVersion, version).toBe(version);
    }
  });
});
