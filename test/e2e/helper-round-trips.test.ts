/**
 * One request per tool call through the helper: the real `waymark mcp` forwarding to the real
 * `wrangler dev` through a proxy that keeps every request it forwards. start_task and
 * complete_task carry the helper's data, and their answer carries the workflow's state the hooks
 * keep (the result's `_meta`): the helper asks nothing more, and the hooks' journal still holds the
 * state as the last call left it.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Journal } from "../../client-helper/src/hooks/journal";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { type DroppingProxy, startDroppingProxy } from "../support/dropping-proxy";
import { sharedDevServer } from "../support/shared-server";

let server: DevServer;
let proxy: DroppingProxy;
beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
  proxy = await startDroppingProxy(server.url);
});
afterAll(async () => {
  await proxy.close();
  cleanupTempDirs();
});

/** A tool result as the agent's SDK gives it. */
type Answer = {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  _meta?: object;
};

/** What each request the helper sent asked for: a JSON-RPC method (with the tool's name for a call), else the HTTP method. */
function asked(requests: { method: string; path: string; body: string }[]): string[] {
  return requests.map((request) => {
    if (request.method !== "POST") return `${request.method} ${request.path}`;
    const message = JSON.parse(request.body) as { method?: string; params?: { name?: string } };
    return message.method === "tools/call" ? `tools/call ${message.params?.name}` : String(message.method);
  });
}

it("every tool call through the helper is one request to the endpoint, and the hooks keep the workflow's state from it", async () => {
  const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
  const cacheHome = tempDir("round-trips-cache-");
  const agent = await connectThroughHelper({ url: proxy.url, token: server.token }, repo.dir, { cacheHome, quiet: true });
  const before = proxy.requests().length;
  let workflowId = "";
  let taskId = "";
  const calls: [string, () => Record<string, unknown>][] = [
    ["start_workflow", () => ({ name: "Round trips", force_new: true })],
    ["start_task", () => ({ workflow_id: workflowId, name: "Edit a", goal: "one request each" })],
    ["log_milestone", () => ({ task_id: taskId, message: "halfway" })],
    ["complete_task", () => ({ task_id: taskId, status: "success", outcome: { summary: "a edited" } })],
    ["get_workflow", () => ({ workflow_id: workflowId })],
  ];
  const outcomes: Record<string, Answer> = {};
  try {
    for (const [name, args] of calls) {
      if (name === "complete_task") repo.write("a.txt", "b\n");
      const outcome = (await agent.callTool({ name, arguments: args() })) as Answer;
      expect(outcome.isError, `${name}: ${JSON.stringify(outcome.content)}`).toBeFalsy();
      outcomes[name] = outcome;
      if (name === "start_workflow") workflowId = String(outcome.structuredContent?.workflow_id);
      if (name === "start_task") taskId = String(outcome.structuredContent?.task_id);
    }
  } finally {
    // The helper's work after an answer (the journal, its records) ends before the process does.
    await agent.close();
  }
  // The first call opened the connection: the handshake (and the SDK's try at a stream of server
  // messages) is once per process; then one request per call.
  const requests = asked(proxy.requests().slice(before));
  const handshake = ["initialize", "notifications/initialized", "GET /mcp"];
  for (const step of handshake) expect(requests.filter((method) => method === step).length).toBeLessThanOrEqual(1);
  expect(requests.filter((method) => !handshake.includes(method))).toEqual(calls.map(([name]) => `tools/call ${name}`));
  // The agent gets no trace of the state the helper took for its hooks.
  for (const name of ["start_task", "complete_task"]) expect(JSON.stringify(outcomes[name])).not.toContain("waymark/workflow_state");
  expect(outcomes.complete_task?.structuredContent?.files_changed).toMatchObject({ modified: ["a.txt"] });
  // The hooks' journal holds the state as complete_task left it: the task done, none open.
  const journal = await Journal.forDirectory(repo.dir, `${cacheHome}/waymark`);
  const kept = await journal.workflowState(workflowId);
  expect(kept?.text.split("\n")).toEqual([`${workflowId} "Round trips" active`, `done: ${taskId} Edit a (success): a edited`]);
  // The same text get_workflow answers.
  expect(outcomes.get_workflow?.content[0]?.text).toBe(kept?.text);
  expect(readFileSync(`${journal.folder}/workflow-state.json`, "utf8")).not.toContain(server.token);
});
