/**
 * A tool call flattened for assertions and benches. No imports: it loads in workerd, under
 * vitest in Node, and in plain Node with type stripping (the benches, through test/support/agents.ts).
 */
export interface ToolOutcome {
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
}

/** Any MCP client, SDK v1 or v2. */
export interface CallableClient {
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
}

export async function callToolOutcome(client: CallableClient, name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content?: { type: string; text?: string }[];
    structuredContent?: Record<string, unknown>;
  };
  return {
    isError: result.isError === true,
    text: (result.content ?? []).map((c) => c.text ?? "").join("\n"),
    structured: result.structuredContent ?? {},
  };
}
