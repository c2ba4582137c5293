/**
 * The lean tools/call path (src/mcp/lean-call.ts) answers with exactly the bytes the MCP SDK's
 * handler writes: every request here is sent to the Worker twice, once as deployed and once with
 * WAYMARK_MCP_SDK_ONLY=1 (every exchange through the SDK), and the two responses — status, every
 * header, the body byte for byte — must be equal. Writes carry an idempotency_key, so the second
 * send replays the first's stored result instead of writing again; each is sent in both orders.
 * Requests the lean path must leave to the SDK (2025-era, app-only tools, mismatched headers, an
 * unusual envelope) are checked to be left, and to answer the same.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import app from "../../src/index";
import { leanCallOf } from "../../src/mcp/lean-call";
import { TOOLS } from "../../src/mcp/server";
import { connect, ok } from "../support/mcp-client";
import { ORIGIN, TOKENS, workerTarget } from "../support/worker";

const SDK_ONLY = { ...env, WAYMARK_MCP_SDK_ONLY: "1" };
const REVISION = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": REVISION,
  "io.modelcontextprotocol/clientInfo": { name: "lean-test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Sent {
  body: unknown;
  headers?: Record<string, string>;
}

/** A tools/call as an SDK v2 client with version negotiation sends it (its headers included). */
function toolsCall(name: string, args: Record<string, unknown> | undefined, id: number | string = 7): Sent {
  return {
    body: { method: "tools/call", params: { name, ...(args && { arguments: args }), _meta: ENVELOPE }, jsonrpc: "2.0", id },
    headers: { "mcp-method": "tools/call", "mcp-name": name, "mcp-protocol-version": REVISION },
  };
}

function request(sent: Sent, token: string = TOKENS.acme): Request {
  return new Request(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      Host: new URL(ORIGIN).host,
      Accept: "application/json, text/event-stream",
      "Content-Type": "application/json",
      Authorization: `Bearer ${token}`,
      ...sent.headers,
    },
    body: JSON.stringify(sent.body),
  });
}

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

async function answer(response: Response): Promise<Answer> {
  return { status: response.status, headers: [...response.headers], body: await response.text() };
}

const deployed = async (sent: Sent, token?: string) => answer(await app.fetch(request(sent, token), env));
const throughSdk = async (sent: Sent, token?: string) => answer(await app.fetch(request(sent, token), SDK_ONLY));

/** Every tool a lean call was compared for (the last test checks none is missed). */
const compared = new Set<string>();

/** Sends `first` then `second` through the lean path and the SDK, in both orders, and expects the same bytes each time. */
async function expectSameBytes(first: Sent, second: Sent = first): Promise<Answer> {
  for (const sent of [first, second]) {
    const call = leanCallOf(request(sent), sent.body);
    expect(call).not.toBeNull();
    compared.add(call?.tool.name ?? "");
  }
  const sdk = await throughSdk(first);
  const lean = await deployed(first);
  expect(lean).toEqual(sdk);
  const leanFirst = await deployed(second);
  const sdkSecond = await throughSdk(second);
  expect(sdkSecond).toEqual(leanFirst);
  return lean;
}

let workflowId = "";
let taskId = "";

beforeAll(async () => {
  const client = await connect(workerTarget());
  workflowId = (await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Lean path" })).workflow_id;
  taskId = (await ok<{ task_id: string }>(client, "start_task", { workflow_id: workflowId, name: "T", goal: "g" })).task_id;
});

describe("the lean tools/call path", () => {
  it("takes a negotiating client's tools/call, and answers it as JSON", async () => {
    const sent = toolsCall("log_milestone", { task_id: taskId, message: "m", progress: 10, idempotency_key: "lean-taken" });
    expect(leanCallOf(request(sent), sent.body)?.tool.name).toBe("log_milestone");
    const lean = await expectSameBytes(sent);
    expect(lean.status).toBe(200);
    expect(lean.headers).toEqual([["content-type", "application/json"]]);
    expect(JSON.parse(lean.body)).toMatchObject({ jsonrpc: "2.0", id: 7, result: { resultType: "complete" } });
  });

  it.each([
    ["log_milestone", { message: "halfway", progress: 50 }],
    ["log_decision", { category: "trade_off", question: "q", chosen: "a", reasoning: "r" }],
    ["log_issue", { type: "bug_encountered", description: "d", resolution: "r" }],
  ])("answers %s with the SDK's bytes, whichever wrote first", async (tool, args) => {
    await expectSameBytes(
      toolsCall(tool, { task_id: taskId, ...args, idempotency_key: `${tool}-a` }),
      toolsCall(tool, { task_id: taskId, ...args, idempotency_key: `${tool}-b` }, "string-id"),
    );
  });

  it("answers start_workflow, start_task, complete_task, get_workflow and complete_workflow with the SDK's bytes", async () => {
    const a = { name: "Lean pair", idempotency_key: "wf-a" };
    const b = { name: "Lean pair", idempotency_key: "wf-b" };
    await expectSameBytes(toolsCall("start_workflow", a), toolsCall("start_workflow", b));
    const start = (key: string) => toolsCall("start_task", { workflow_id: workflowId, name: key, goal: "g", idempotency_key: key });
    await expectSameBytes(start("task-a"), start("task-b"));
    const started = JSON.parse((await deployed(start("task-a"))).body) as { result: { structuredContent: { task_id: string } } };
    const complete = { task_id: started.result.structuredContent.task_id, status: "success", outcome: { summary: "done" } };
    await expectSameBytes(toolsCall("complete_task", { ...complete, idempotency_key: "done-a" }));
    // With the helper's changes the result carries the workflow's state in its _meta (resume-text.ts).
    const withChanges = async (key: string) => {
      const opened = JSON.parse((await deployed(start(`open-${key}`))).body) as { result: { structuredContent: { task_id: string } } };
      const transitions = [{ path: `src/${key}.ts`, before: null, after: { mode: "100644", blob: "e".repeat(40) } }];
      const args = {
        task_id: opened.result.structuredContent.task_id,
        status: "success",
        outcome: { summary: key },
        changes: { type: "checksum", transitions },
      };
      return toolsCall("complete_task", { ...args, idempotency_key: key });
    };
    const kept = await expectSameBytes(await withChanges("state-a"), await withChanges("state-b"));
    expect(Object.keys((JSON.parse(kept.body) as { result: { _meta: object } }).result._meta)).toHaveLength(2);
    await expectSameBytes(toolsCall("get_workflow", { workflow_id: workflowId }));
    await expectSameBytes(toolsCall("get_workflow", undefined));
    const pair = JSON.parse((await deployed(toolsCall("start_workflow", a))).body) as {
      result: { structuredContent: { workflow_id: string } };
    };
    const done = { workflow_id: pair.result.structuredContent.workflow_id, status: "success", summary: "all done" };
    await expectSameBytes(toolsCall("complete_workflow", { ...done, idempotency_key: "wf-done-a" }));
  });

  it.each([
    ["an input the tool refuses", "log_milestone", { task_id: "tk_nope", message: "" }],
    ["an unknown task", "log_milestone", { task_id: "tk_aaaaaaaaaaaaaaaaaaaa_bbbbbbbb", message: "m" }],
    ["arguments that are no object's fields", "get_workflow", { limit: "many" }],
    [
      "a secret in the text",
      "log_milestone",
      { task_id: "TASK", message: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789", idempotency_key: "secret" },
    ],
  ])("answers %s with the SDK's bytes", async (_label, tool, args) => {
    const filled = Object.fromEntries(Object.entries(args).map(([k, v]) => [k, v === "TASK" ? taskId : v]));
    await expectSameBytes(toolsCall(tool, filled));
  });

  const left: [string, Sent][] = [
    ["a 2025-era call", { body: { method: "tools/call", params: { name: "get_workflow", arguments: {} }, jsonrpc: "2.0", id: 1 } }],
    ["an unknown tool", toolsCall("no_such_tool", {})],
    ["a fractional id", toolsCall("get_workflow", {}, 1.5)],
    ["an id that is an object", toolsCall("get_workflow", {}, { n: 1 } as unknown as number)],
    [
      "a message with another field",
      { ...toolsCall("get_workflow", {}), body: { ...(toolsCall("get_workflow", {}).body as object), extra: true } },
    ],
    ["an app-only tool", toolsCall("send_feedback", {})],
    [
      "a header naming another tool",
      { ...toolsCall("get_workflow", {}), headers: { ...toolsCall("get_workflow", {}).headers, "mcp-name": "log_issue" } },
    ],
    [
      "a header naming another revision",
      { ...toolsCall("get_workflow", {}), headers: { ...toolsCall("get_workflow", {}).headers, "mcp-protocol-version": "2025-11-25" } },
    ],
    [
      "no envelope",
      {
        body: { method: "tools/call", params: { name: "get_workflow", arguments: {} }, jsonrpc: "2.0", id: 2 },
        headers: toolsCall("get_workflow", {}).headers,
      },
    ],
    [
      "an envelope with another field",
      {
        body: {
          method: "tools/call",
          params: { name: "get_workflow", arguments: {}, _meta: { ...ENVELOPE, progressToken: 3 } },
          jsonrpc: "2.0",
          id: 3,
        },
        headers: toolsCall("get_workflow", {}).headers,
      },
    ],
    [
      "a malformed envelope",
      {
        body: {
          method: "tools/call",
          params: { name: "get_workflow", arguments: {}, _meta: { ...ENVELOPE, "io.modelcontextprotocol/clientInfo": "me" } },
          jsonrpc: "2.0",
          id: 4,
        },
        headers: toolsCall("get_workflow", {}).headers,
      },
    ],
    ["arguments that are a list", toolsCall("get_workflow", ["x"] as unknown as Record<string, unknown>)],
    [
      "a task-augmented call",
      {
        ...toolsCall("get_workflow", {}),
        body: {
          ...(toolsCall("get_workflow", {}).body as object),
          params: { name: "get_workflow", arguments: {}, task: {}, _meta: ENVELOPE },
        },
      },
    ],
    [
      "a notification",
      {
        ...toolsCall("get_workflow", {}),
        body: { method: "tools/call", params: { name: "get_workflow", _meta: ENVELOPE }, jsonrpc: "2.0" },
      },
    ],
  ];

  it.each(left)("leaves %s to the SDK", async (_label, sent) => {
    expect(leanCallOf(request(sent), sent.body)).toBeNull();
    expect(await deployed(sent)).toEqual(await throughSdk(sent));
  });

  it("compared every tool", () => {
    expect([...compared].sort()).toEqual(TOOLS.map((tool) => tool.name).sort());
  });
});
