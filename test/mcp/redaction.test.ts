import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { workerFetch, workerTarget } from "../support/worker";

// Assembled at run time: secret scanners see no token in the repository.
const GITHUB_TOKEN = ["ghp", "_", "R8sK2mQ7vX4pL9nT3wZ6yB1cD5fH0jG8aE2u"].join("");
const AWS_KEY = ["AKIA", "Q3EXAMPLEK7Y2ZP4"].join("");

/**
 * A client without the helper (the MCP endpoint reached directly) stores no secret either: the
 * edge applies the helper's own rule (@waymark/protocol/redact's redactToolArguments) to every
 * tool call, before validation, so the bounds hold for what is stored.
 */
describe("secrets in a direct client's tool calls", () => {
  it("are replaced by their markers before anything is stored, and the result says so", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string; share_url: string }>(client, "start_workflow", { name: `Deploy with ${GITHUB_TOKEN}` });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Rotate keys", goal: "g" });
    const decided = await callTool(client, "log_decision", {
      task_id: task.task_id,
      category: "other",
      question: "Which key?",
      chosen: "The new one",
      reasoning: `The old key ${AWS_KEY} leaked; password=hunter2-but-longer`,
    });
    expect(decided.isError).toBe(false);
    expect(decided.text).toContain("waymark: 2 secrets (AWS access key id, password) removed before storing");

    const view = await ok<{ workflow: { name: string }; decisions?: { reasoning: string }[] }>(client, "get_workflow", {
      workflow_id: wf.workflow_id,
    });
    expect(view.workflow.name).toBe("Deploy with [redacted: GitHub token]");
    const exported = await (await workerFetch(`${wf.share_url}/export.json`)).text();
    for (const secret of [GITHUB_TOKEN, AWS_KEY, "hunter2-but-longer"]) expect(exported).not.toContain(secret);
    expect(exported).toContain("The old key [redacted: AWS access key id] leaked; password=[redacted: password]");
  });

  it("leaves text the helper redacted as it is, ids and idempotency keys as written, and says nothing", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Already [redacted: GitHub token] clean" });
    const started = await callTool(client, "start_task", {
      workflow_id: wf.workflow_id,
      name: "Task",
      goal: "g",
      idempotency_key: `key-${GITHUB_TOKEN}`,
    });
    expect(started.text).not.toContain("removed before storing");
    const again = await callTool(client, "start_task", {
      workflow_id: wf.workflow_id,
      name: "Task",
      goal: "g",
      idempotency_key: `key-${GITHUB_TOKEN}`,
    });
    // The same key names the same call: the retry answers the first task.
    expect(again.structured.task_id).toBe(started.structured.task_id);
    const view = await ok<{ workflow: { name: string } }>(client, "get_workflow", { workflow_id: wf.workflow_id });
    expect(view.workflow.name).toBe("Already [redacted: GitHub token] clean");
  });

  it("checks the bounds on the redacted text: markers longer than the secrets they replace are refused by field", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Bounds" });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g" });
    // 4,000 characters as written (the bound), far more once each short password is a marker.
    const reasoning = "pwd=x1 ".repeat(571).padEnd(4000, ".");
    const refused = await callTool(client, "log_decision", {
      task_id: task.task_id,
      category: "other",
      question: "q",
      chosen: "c",
      reasoning,
    });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/reasoning/);
  });
});
