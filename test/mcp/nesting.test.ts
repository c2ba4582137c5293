import { beforeAll, describe, expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { rpc, workerTarget } from "../support/worker";

/**
 * Found by bench/fuzz.ts: deeply nested arguments overflowed the stack in argument parsing
 * (it recurses), and the tool answered "Maximum call stack size exceeded" without an error code.
 */
let taskId: string;

beforeAll(async () => {
  const acme = await connect(workerTarget());
  const { workflow_id } = await ok<{ workflow_id: string }>(acme, "start_workflow", { name: "Nesting" });
  taskId = (await ok<{ task_id: string }>(acme, "start_task", { workflow_id, name: "Open", goal: "g" })).task_id;
});

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

async function callRaw(argumentsJson: string) {
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log_milestone","arguments":${argumentsJson}}}`;
  return rpc(body);
}

describe("deeply nested arguments", () => {
  for (const depth of [100, 5_000, 50_000]) {
    it(`are refused with a code and the field at depth ${depth}`, async () => {
      const { status, body } = await callRaw(`{"task_id":"${taskId}","message":"m","metadata":{"a":${nested(depth)}}}`);
      expect(status).toBe(200);
      const result = body?.result as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(/^INPUT_VALIDATION_ERROR: arguments: must not nest deeper than \d+ levels/);
    });
  }

  it("a nested value in a text field is refused the same way", async () => {
    const { body } = await callRaw(`{"task_id":"${taskId}","message":${nested(20_000)}}`);
    const result = body?.result as { isError?: boolean; content: { text: string }[] };
    expect(result.content[0]?.text).toMatch(/^INPUT_VALIDATION_ERROR: /);
  });

  it("ordinary nesting in metadata is still accepted", async () => {
    const { body } = await callRaw(`{"task_id":"${taskId}","message":"m","metadata":{"a":{"b":{"c":[[1,[2,{"d":null}]]]}}}}`);
    const result = body?.result as { isError?: boolean; content: { text: string }[] };
    expect(result.isError, result.content[0]?.text).not.toBe(true);
  });
});
