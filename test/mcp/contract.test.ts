import { describe, expect, it } from "vitest";
import reference from "../fixtures/reference-tools.json";
import { rpc } from "../support/worker";

type JsonSchema = {
  type?: string;
  description?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};
type ToolDefinition = {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: Record<string, boolean>;
};

async function listTools(): Promise<ToolDefinition[]> {
  const { body } = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const result = body?.result as { tools: ToolDefinition[] } | undefined;
  if (!result) throw new Error(`tools/list failed: ${JSON.stringify(body)}`);
  return result.tools;
}

/**
 * Every input the reference defines is ours too, with its type, enum, bounds and required list; we
 * may only add optional properties. Descriptions are not compared: they say when to call a tool,
 * and an input's description is kept only where its name cannot say it (tools/list costs context).
 */
function expectSchemaKeeps(ours: JsonSchema, theirs: JsonSchema, path: string): void {
  for (const keyword of ["type", "enum", "minimum", "maximum"] as const) {
    if (theirs[keyword] !== undefined) expect(ours[keyword], `${path}.${keyword}`).toEqual(theirs[keyword]);
  }
  expect([...(ours.required ?? [])].sort(), `${path}.required`).toEqual([...(theirs.required ?? [])].sort());
  if (theirs.items) expectSchemaKeeps(ours.items ?? {}, theirs.items, `${path}.items`);
  for (const [name, property] of Object.entries(theirs.properties ?? {})) {
    expect(ours.properties?.[name], `${path}.${name} exists`).toBeDefined();
    expectSchemaKeeps(ours.properties?.[name] ?? {}, property, `${path}.${name}`);
  }
}

describe("tools/list keeps the reference protocol", () => {
  it.each(reference.map((tool) => [tool.name, tool] as const))("%s: same inputs, additions only optional", async (name, tool) => {
    const ours = (await listTools()).find((t) => t.name === name);
    expect(ours).toBeDefined();
    expectSchemaKeeps(ours?.inputSchema ?? {}, tool.inputSchema as unknown as JsonSchema, name);
  });

  it("gives every tool an output schema and annotations", async () => {
    for (const tool of await listTools()) {
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      expect(tool.annotations, tool.name).toBeDefined();
    }
    const readOnly = (await listTools()).filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    expect(readOnly).toEqual(["get_workflow"]);
  });

  // History: 7.3 KB while output schemas listed only the reference fields; 8,565 bytes once every
  // returned field was declared with its type. Now 6,000 at most: descriptions say when to call a
  // tool, inputs are described only where their name cannot say it, outputs are listed by name, and
  // the helper's own inputs (snapshot, changes, repository) are not advertised.
  it("stays within the context budget: at most 9 tools, 6,000 bytes", async () => {
    const tools = await listTools();
    const size = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
    const bytes = size(tools);
    // ~4 bytes per token for English text and JSON: an approximation, not any model's tokenizer.
    const tokens = (n: number) => Math.round(n / 4);
    console.log(
      `tools/list: ${tools.length} tools, ${bytes} bytes, ~${tokens(bytes)} tokens (the six reference definitions: ${size(reference)} bytes)`,
    );
    for (const tool of tools) console.log(`  ${tool.name}: ${size(tool)} bytes, ~${tokens(size(tool))} tokens`);
    expect(tools.length).toBeLessThanOrEqual(9);
    expect(bytes).toBeLessThanOrEqual(6000);
  });
});
