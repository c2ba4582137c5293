/**
 * Faults against a real `wrangler dev` on 127.0.0.1 (the full runs are bench/faults.ts):
 * kill -9 of the whole server in the middle of load, then a restart on the same data; the
 * helper losing its connection during complete_task, then a retry with the same inputs.
 * (A page reconnecting after a restart is covered in Chromium by test/browser/live.test.ts.)
 */
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import { type Acked, connectThroughHelper, newAcked, pool, runAgentWorkflow } from "../support/agents";
import { crashDevServer, type DevServer, signalDevServer, startDevServer, waitDown } from "../support/dev-server";
import { type DroppingProxy, startDroppingProxy } from "../support/dropping-proxy";
import { callTool, connect, ok, type ToolOutcome } from "../support/mcp-client";
import { exportView, readEvents, verifyWorkflow } from "../support/readback";
import { Recorder } from "../support/stats";

let server: DevServer;
let port: number;

beforeAll(async () => {
  ensureBuilt();
  server = await startDevServer();
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.stop();
  cleanupTempDirs();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The agent's view: the helper as a stdio MCP server in front of `url`. */
function helperFor(repo: Repo, url: string, timeoutSeconds: number): Promise<Client> {
  return connectThroughHelper({ url, token: server.token }, repo.dir, { args: ["--timeout", String(timeoutSeconds)] });
}

/** A helper-driven task with one new file, up to the point of complete_task. */
async function openTask(agent: Client, repo: Repo, label: string) {
  const wf = await ok(agent, "start_workflow", { name: `Helper fault ${label}` });
  const task = await ok(agent, "start_task", { workflow_id: wf.workflow_id, name: label, goal: "survive", areas: ["src/**"] });
  repo.write(`src/${label}.ts`, `export const ${label} = 1;\n`);
  const shareUrl = String(wf.share_url).replace(/^http:\/\/[^/]+/, server.url);
  const complete = { task_id: String(task.task_id), status: "success", outcome: { summary: `${label} done` } };
  return { workflowId: String(wf.workflow_id), taskId: String(task.task_id), shareUrl, complete };
}

/** After the retry: one completion, its file counted once, and a consistent log. */
async function expectCompletedOnce(shareUrl: string, workflowId: string, taskId: string, path: string) {
  const acked: Acked = newAcked(workflowId, shareUrl);
  acked.tasks.push(taskId);
  acked.completed.set(taskId, 1);
  expect(await verifyWorkflow(acked)).toEqual([]);
  const events = await readEvents(shareUrl);
  expect(events.filter((e) => e.type === "task.completed")).toHaveLength(1);
  const view = await exportView(shareUrl);
  expect(view.totals.files_changed).toBe(1);
  expect(view.tasks[0]?.files_changed?.added).toEqual([path]);
}

describe("faults through wrangler dev", () => {
  it("kill -9 mid-load, restart on the same data: every acknowledged write is there, nothing half-written", async () => {
    const recorder = new Recorder();
    const acked: Acked[] = [];
    const load = pool(6, 6, async (i) =>
      runAgentWorkflow(await connect(server, { negotiation: "auto" }), {
        label: `crash${i}`,
        tasks: 4,
        recorder,
        onAcked: (a) => acked.push(a),
      }),
    );
    const deadline = Date.now() + 30_000;
    while (recorder.all().length < 40 && Date.now() < deadline) await sleep(20);
    crashDevServer(port);
    const results = await load;
    const interrupted = results.filter((r) => r.status === "rejected").length;
    console.log(`crashed after ${recorder.all().length} acknowledged calls; ${interrupted} of 6 agents interrupted`);
    expect(interrupted).toBeGreaterThan(0);
    await waitDown(server);
    await server.restart();
    for (const a of acked) expect(await verifyWorkflow(a)).toEqual([]);
    // The server takes new work on the recovered data.
    const after = await runAgentWorkflow(await connect(server, { negotiation: "auto" }), { label: "after-crash", tasks: 1 });
    expect(await verifyWorkflow(after)).toEqual([]);
  });

  it("helper: the server killed during complete_task gives a clear error in time; the retry completes once", async () => {
    const repo = Repo.init().write("README.md", "hi\n").commitAll("initial");
    const agent = await helperFor(repo, server.url, 8);
    const task = await openTask(agent, repo, "killed");
    signalDevServer(port, "SIGSTOP");
    const started = performance.now();
    const pending = callTool(agent, "complete_task", task.complete);
    // The fault under test: the server dies while the call is in flight. A frozen server answers
    // nothing, so no event says the call reached it; 300 ms is ample for the helper to send it.
    await sleep(300);
    crashDevServer(port);
    const failed = await pending;
    const elapsed = performance.now() - started;
    expect(failed.isError).toBe(true);
    expect(failed.text).toMatch(/^UNAVAILABLE: /);
    expect(elapsed).toBeLessThan(8000);
    await waitDown(server);
    await server.restart();
    const retried = await ok(agent, "complete_task", task.complete);
    expect((retried.files_changed as { added: string[] }).added).toEqual(["src/killed.ts"]);
    await expectCompletedOnce(task.shareUrl, task.workflowId, task.taskId, "src/killed.ts");
    await agent.close();
  });

  it("helper: the answer lost after the write landed; the retry returns the first result, nothing counted twice", async () => {
    const repo = Repo.init().write("README.md", "hi\n").commitAll("initial");
    const proxy: DroppingProxy = await startDroppingProxy(server.url);
    try {
      const agent = await helperFor(repo, proxy.url, 8);
      const task = await openTask(agent, repo, "lost");
      const dropped = proxy.dropNext('"complete_task"');
      const failed = await callTool(agent, "complete_task", task.complete);
      await dropped;
      expect(failed.isError).toBe(true);
      expect(failed.text).toMatch(/^UNAVAILABLE: /);
      // The server did complete the task: a retry must not complete it again.
      const retried = await ok(agent, "complete_task", task.complete);
      expect((retried.files_changed as { added: string[] }).added).toEqual(["src/lost.ts"]);
      await expectCompletedOnce(task.shareUrl, task.workflowId, task.taskId, "src/lost.ts");
      await agent.close();
    } finally {
      await proxy.close();
    }
  });

  it("helper: a frozen server times out clearly; once it thaws, the retry completes once", async () => {
    const repo = Repo.init().write("README.md", "hi\n").commitAll("initial");
    const agent = await helperFor(repo, server.url, 2);
    const task = await openTask(agent, repo, "frozen");
    signalDevServer(port, "SIGSTOP");
    let failed: ToolOutcome;
    const started = performance.now();
    try {
      failed = await callTool(agent, "complete_task", task.complete);
    } finally {
      signalDevServer(port, "SIGCONT");
    }
    const elapsed = performance.now() - started;
    expect(failed.isError).toBe(true);
    expect(failed.text, failed.text).toMatch(/^UNAVAILABLE: no answer from .* within 2 s/);
    expect(elapsed).toBeLessThan(4000);
    const retried = await ok(agent, "complete_task", task.complete);
    expect((retried.files_changed as { added: string[] }).added).toEqual(["src/frozen.ts"]);
    await expectCompletedOnce(task.shareUrl, task.workflowId, task.taskId, "src/frozen.ts");
    await agent.close();
  });
});
