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

/** Every keyword the reference states must be ours too; we may only add optional properties. */
function expectSchemaKeeps(ours: JsonSchema, theirs: JsonSchema, path: string): void {
  for (const keyword of ["type", "description", "enum", "minimum", "maximum"] as const) {
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
  it.each(reference.map((tool) => [tool.name, tool] as const))("%s: same input schema, additions only optional", async (name, tool) => {
    const ours = (await listTools()).find((t) => t.name === name);
    expect(ours).toBeDefined();
    expectSchemaKeeps(ours?.inputSchema ?? {}, tool.inputSchema as unknown as JsonSchema, name);
    expect(ours?.description.startsWith(tool.description)).toBe(true);
  });

  it("gives every tool an output schema and annotations", async () => {
    for (const tool of await listTools()) {
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      expect(tool.annotations, tool.name).toBeDefined();
    }
    const readOnly = (await listTools()).filter((t) => t.annotations?.readOnlyHint).map((t) => t.name);
    expect(readOnly).toEqual(["get_workflow"]);
  });

  // 7.3 KB while output schemas listed only the reference fields; declaring every field a tool
  // returns (typed clients drop the others: resumed, related, warnings, completed_at…) made it 8,115 bytes;
  // reviewer_feedback, which any tool's result can carry, declared in each of the 9 schemas: 8,515 bytes.
  it("stays within the context budget: at most 9 tools, 8.6 KB", async () => {
    const tools = await listTools();
    const bytes = new TextEncoder().encode(JSON.stringify(tools)).byteLength;
    const referenceBytes = new TextEncoder().encode(JSON.stringify(reference)).byteLength;
    console.log(`tools/list: ${tools.length} tools, ${bytes} bytes (the six reference definitions alone: ${referenceBytes} bytes)`);
    for (const tool of tools) console.log(`  ${tool.name}: ${new TextEncoder().encode(JSON.stringify(tool)).byteLength} bytes`);
    expect(tools.length).toBeLessThanOrEqual(9);
    expect(bytes).toBeLessThanOrEqual(8600);
  });
});
