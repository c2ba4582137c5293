import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/client";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { SCOPES } from "../../src/domain/access-scopes";
import type { Result } from "../../src/errors";
import { LIMITS } from "../../src/limits";
import { defineTool } from "../../src/mcp/define";
import { callTool, connect, ok } from "../support/mcp-client";
import { ON_PAGE, rpc, TOKENS, workerTarget } from "../support/worker";

let acme: Client;
let globex: Client;
let workflowId: string;
let taskId: string;
let doneTaskId: string;
let globexTaskId: string;

beforeAll(async () => {
  acme = await connect(workerTarget(TOKENS.acme));
  globex = await connect(workerTarget(TOKENS.globex));
  workflowId = (await ok<{ workflow_id: string }>(acme, "start_workflow", { name: "Errors" })).workflow_id;
  taskId = (await ok<{ task_id: string }>(acme, "start_task", { workflow_id: workflowId, name: "Open", goal: "g" })).task_id;
  doneTaskId = (await ok<{ task_id: string }>(acme, "start_task", { workflow_id: workflowId, name: "Done", goal: "g" })).task_id;
  await ok(acme, "complete_task", { task_id: doneTaskId, status: "success", outcome: { summary: "s" } });
  const other = (await ok<{ workflow_id: string }>(globex, "start_workflow", { name: "Globex" })).workflow_id;
  globexTaskId = (await ok<{ task_id: string }>(globex, "start_task", { workflow_id: other, name: "Theirs", goal: "g" })).task_id;
});

const long = (n: number) => "x".repeat(n);
const sha = "a".repeat(40);

type Case = [label: string, tool: string, args: () => Record<string, unknown>, code: string, message: RegExp];

const cases: Case[] = [
  ["missing required name", "start_workflow", () => ({}), "INPUT_VALIDATION_ERROR", /^name: is required/],
  ["wrong type", "start_workflow", () => ({ name: 42 }), "INPUT_VALIDATION_ERROR", /^name: must be a string/],
  ["empty name", "start_workflow", () => ({ name: "" }), "INPUT_VALIDATION_ERROR", /^name: must not be empty/],
  [
    "name too long",
    "start_workflow",
    () => ({ name: long(LIMITS.NAME + 1) }),
    "INPUT_VALIDATION_ERROR",
    /^name: must be at most 200 characters/,
  ],
  [
    "plan step missing goal",
    "start_workflow",
    () => ({ name: "n", plan: [{ step: "1" }] }),
    "INPUT_VALIDATION_ERROR",
    /^plan\[0\]\.goal: is required/,
  ],
  [
    "unknown field",
    "start_task",
    () => ({ workflow_id: workflowId, name: "n", goal: "g", parent_id: "x" }),
    "INPUT_VALIDATION_ERROR",
    /unknown field\(s\): parent_id/,
  ],
  [
    "control characters",
    "start_task",
    () => ({ workflow_id: workflowId, name: "a\u0007b", goal: "g" }),
    "INPUT_VALIDATION_ERROR",
    /^name: must be valid Unicode text without control characters/,
  ],
  [
    "lone surrogate",
    "start_task",
    () => ({ workflow_id: workflowId, name: "a\ud800b", goal: "g" }),
    "INPUT_VALIDATION_ERROR",
    /^name: must be valid Unicode/,
  ],
  [
    "too many areas",
    "start_task",
    () => ({ workflow_id: workflowId, name: "n", goal: "g", areas: Array(LIMITS.AREAS + 1).fill("a") }),
    "INPUT_VALIDATION_ERROR",
    /^areas: must have at most 30 items/,
  ],
  [
    "bad enum",
    "log_decision",
    () => ({ task_id: taskId, category: "vibes", question: "q", chosen: "c", reasoning: "r" }),
    "INPUT_VALIDATION_ERROR",
    /^category: must be one of: architecture, library_choice/,
  ],
  [
    "progress over 100",
    "log_milestone",
    () => ({ task_id: taskId, message: "m", progress: 150 }),
    "INPUT_VALIDATION_ERROR",
    /^progress: must be ≤ 100/,
  ],
  [
    "negative progress",
    "log_milestone",
    () => ({ task_id: taskId, message: "m", progress: -1 }),
    "INPUT_VALIDATION_ERROR",
    /^progress: must be ≥ 0/,
  ],
  [
    "metadata too large",
    "log_milestone",
    () => ({ task_id: taskId, message: "m", metadata: { blob: long(5000) } }),
    "INPUT_VALIDATION_ERROR",
    /^metadata: must serialize to at most 4096 bytes/,
  ],
  [
    "bad idempotency key",
    "log_issue",
    () => ({ task_id: taskId, type: "other", description: "d", resolution: "r", idempotency_key: "has space" }),
    "INPUT_VALIDATION_ERROR",
    /^idempotency_key: must use only/,
  ],
  [
    "missing outcome summary",
    "complete_task",
    () => ({ task_id: taskId, status: "success", outcome: {} }),
    "INPUT_VALIDATION_ERROR",
    /^outcome\.summary: is required/,
  ],
  [
    "bad tests_status",
    "complete_task",
    () => ({ task_id: taskId, status: "success", outcome: { summary: "s" }, metadata: { tests_status: "green" } }),
    "INPUT_VALIDATION_ERROR",
    /^metadata\.tests_status: must be one of/,
  ],
  [
    "path traversal in changes",
    "complete_task",
    () => ({
      task_id: taskId,
      status: "success",
      outcome: { summary: "s" },
      changes: { type: "checksum", transitions: [{ path: "../etc/passwd", before: null, after: { mode: "100644", blob: sha } }] },
    }),
    "INPUT_VALIDATION_ERROR",
    /^changes\.transitions\[0\]\.path: /,
  ],
  [
    "absolute path in snapshot",
    "start_task",
    () => ({
      workflow_id: workflowId,
      name: "n",
      goal: "g",
      snapshot: { type: "git", head: sha, dirty: [{ path: "/etc/passwd", head: null, worktree: null }] },
    }),
    "INPUT_VALIDATION_ERROR",
    /^snapshot\.dirty\[0\]\.path: /,
  ],
  [
    "too many change entries",
    "complete_task",
    () => ({
      task_id: taskId,
      status: "success",
      outcome: { summary: "s" },
      changes: {
        type: "checksum",
        transitions: Array.from({ length: LIMITS.CHANGE_ENTRIES + 1 }, (_, i) => ({
          path: `f${i}`,
          before: null,
          after: { mode: "100644", blob: sha },
        })),
      },
    }),
    "PAYLOAD_TOO_LARGE",
    /^changes\.transitions: must have at most 25000 items/,
  ],
  [
    "a path listed twice in a snapshot",
    "start_task",
    () => ({
      workflow_id: workflowId,
      name: "n",
      goal: "g",
      snapshot: {
        type: "git",
        head: sha,
        dirty: [
          { path: "a.ts", head: null, worktree: null },
          { path: "a.ts", head: null, worktree: null },
        ],
      },
    }),
    "INPUT_VALIDATION_ERROR",
    /^snapshot\.dirty\[1\]\.path: "a\.ts" is listed more than once/,
  ],
  [
    "malformed workflow id",
    "start_task",
    () => ({ workflow_id: "wf_nope", name: "n", goal: "g" }),
    "NOT_FOUND",
    /^workflow_id: no workflow or task wf_nope/,
  ],
  [
    "unknown workflow id",
    "start_task",
    () => ({ workflow_id: "wf_aaaaaaaaaaaaaaaaaaaa", name: "n", goal: "g" }),
    "NOT_FOUND",
    /^workflow_id: /,
  ],
  [
    "unknown task id",
    "log_issue",
    () => ({ task_id: `tk_${workflowId.slice(3)}_aaaaaaaa`, type: "other", description: "d", resolution: "r" }),
    "NOT_FOUND",
    /^task_id: /,
  ],
  ["forged task id", "log_milestone", () => ({ task_id: "tk_../../etc_aaaaaaaa", message: "m" }), "NOT_FOUND", /^task_id: /],
  ["another account's task", "log_milestone", () => ({ task_id: globexTaskId, message: "m" }), "NOT_FOUND", /^task_id: /],
  [
    "parent from elsewhere",
    "start_task",
    () => ({ workflow_id: workflowId, parent_task_id: globexTaskId, name: "n", goal: "g" }),
    "NOT_FOUND",
    /^parent_task_id: /,
  ],
  [
    "log on a completed task",
    "log_decision",
    () => ({ task_id: doneTaskId, category: "other", question: "q", chosen: "c", reasoning: "r" }),
    "CONFLICT",
    /^task_id: .*already completed/,
  ],
  [
    "complete a completed task",
    "complete_task",
    () => ({ task_id: doneTaskId, status: "failed", outcome: { summary: "s" } }),
    "CONFLICT",
    /^task_id: .*already completed/,
  ],
  [
    "complete a workflow with open tasks",
    "complete_workflow",
    () => ({ workflow_id: workflowId, status: "success", summary: "s" }),
    "CONFLICT",
    /^workflow_id: tasks still open/,
  ],
];

describe("tool errors carry a stable code and name the field and the rule", () => {
  it.each(cases)("%s (%s)", async (_label, tool, args, code, message) => {
    const before = (
      await rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_workflow", arguments: { workflow_id: workflowId } } })
    ).body;
    const outcome = await callTool(acme, tool, args());
    expect(outcome.isError).toBe(true);
    expect(outcome.text.startsWith(`${code}: `)).toBe(true);
    expect(outcome.text.slice(code.length + 2)).toMatch(message);
    const after = (
      await rpc({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_workflow", arguments: { workflow_id: workflowId } } })
    ).body;
    expect(after).toEqual(before);
  });

  it("keeps protocol faults as JSON-RPC errors", async () => {
    const unknownTool = await rpc({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "drop_tables", arguments: {} } });
    expect(JSON.stringify(unknownTool.body)).toMatch(/drop_tables/);
    const unknownMethod = await rpc({ jsonrpc: "2.0", id: 8, method: "nope/nope" });
    expect(unknownMethod.body).toMatchObject({ error: { code: -32601 } });
  });

  it("keeps log results to a few hundred bytes", async () => {
    const results = [
      await callTool(acme, "log_decision", { task_id: taskId, category: "other", question: "q", chosen: "c", reasoning: "r" }),
      await callTool(acme, "log_issue", { task_id: taskId, type: "other", description: "d", resolution: "r" }),
      await callTool(acme, "log_milestone", { task_id: taskId, message: "m", progress: 10 }),
    ];
    for (const result of results) {
      const bytes = JSON.stringify({ content: [{ type: "text", text: result.text }], structuredContent: result.structured }).length;
      expect(bytes).toBeLessThan(300);
    }
  });
});

describe("INTERNAL", () => {
  it("maps a store that fails to answer to INTERNAL, without leaking the exception", async () => {
    const failing = defineTool({
      name: "failing",
      description: "d",
      input: z.strictObject({}),
      output: [],
      annotations: {},
      run: async (): Promise<Result<Record<string, never>>> => {
        throw new Error("SQLITE_FULL: secret internals at /var/lib/x");
      },
      render: () => "unused",
    });
    const result = await failing.call(
      {},
      { env, account: "acme", scopes: SCOPES, origin: "http://localhost", author: ON_PAGE.author, credential: "m:aaaaaaaaaaaa" },
    );
    expect(result.isError).toBe(true);
    const text = JSON.stringify(result.content);
    expect(text).toMatch(/"INTERNAL: .*retried .*idempotency_key/);
    expect(text).not.toContain("SQLITE_FULL");
  });
});

describe("defineTool", () => {
  it("validates before running: a tool's run never sees input its schema refuses", async () => {
    const runs: unknown[] = [];
    const tool = defineTool({
      name: "echo",
      description: "d",
      input: z.strictObject({ name: z.string().min(1) }),
      output: ["name"],
      annotations: {},
      run: async (input: { name: string }) => {
        runs.push(input);
        return { ok: true as const, value: input };
      },
      render: (out) => out.name,
    });
    const context = {
      env,
      account: "acme",
      scopes: SCOPES,
      origin: "http://localhost",
      author: ON_PAGE.author,
      credential: "m:aaaaaaaaaaaa",
    };
    expect((await tool.call({ name: "" }, context)).content).toEqual([
      { type: "text", text: "INPUT_VALIDATION_ERROR: name: must not be empty" },
    ]);
    expect((await tool.call({ name: "x", extra: 1 }, context)).isError).toBe(true);
    expect(runs).toEqual([]);
    expect(await tool.call({ name: "x" }, context)).toEqual({ structuredContent: { name: "x" }, content: [{ type: "text", text: "x" }] });
    expect(runs).toEqual([{ name: "x" }]);
  });
});
