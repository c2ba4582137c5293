import { spawnSync } from "node:child_process";
import { readdirSync, realpathSync, utimesSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { SPOOL_DIR, spoolCommand } from "@waymark/protocol/agent-config";
import { afterAll, describe, expect, it } from "vitest";
import { KEPT_STATE_FRESH_MS, runHook, SESSION_START_BUDGET_MS, SPOOLED_TOOL_CALLS } from "../src/hooks/hook-runner.js";
import { Journal } from "../src/hooks/journal.js";
import { drainSpool } from "../src/hooks/spool.js";
import { agentCalled, cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

// What keeps the hooks cheap for the agent (bench/sections/hooks.ts measures them with the real
// Claude Code): the edit hook is a shell line that spools the payload, read into the journal later
// and dated by when it was written; session start shows the workflow's state within its budget,
// fresh or as last kept.

afterAll(cleanupTempDirs);

/** The installed edit hook, run by sh as the agent runs it, with the payload on stdin. */
function spoolEdit(agent: "claude" | "cursor", cacheHome: string, payload: Record<string, unknown>) {
  return spawnSync("sh", ["-c", spoolCommand(agentCalled(agent))], {
    encoding: "utf8",
    input: JSON.stringify(payload),
    env: { PATH: process.env.PATH ?? "", HOME: tempDir("waymark-home-"), XDG_CACHE_HOME: cacheHome },
  });
}

describe("the edit hook's spool", () => {
  it("is written by sh alone, read once into the tasks open when each edit was made, and emptied", async () => {
    const repo = Repo.init();
    const cacheHome = tempDir("waymark-xdg-");
    const cache = join(cacheHome, "waymark");
    const journal = new Journal(realpathSync(repo.dir), cache);
    const now = Date.now();
    await journal.taskStarted({ task_id: "tk_early", workflow_id: "wf_1", name: "Early", started_at: now - 60_000 });
    const write = (file: string) => ({
      cwd: repo.dir,
      hook_event_name: "PostToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(repo.dir, file), content: "x" },
    });
    expect(spoolEdit("claude", cacheHome, write("a.ts"))).toMatchObject({ status: 0, stdout: "" });
    expect(
      spoolEdit("cursor", cacheHome, { workspace_roots: [repo.dir], hook_event_name: "afterFileEdit", file_path: join(repo.dir, "b.ts") }),
    ).toMatchObject({
      status: 0,
      stdout: "{}\n",
    });
    // An edit made before the second task started is not that task's.
    const spooled = readdirSync(join(cache, SPOOL_DIR)).map((name) => join(cache, SPOOL_DIR, name));
    for (const path of spooled) utimesSync(path, new Date(now - 30_000), new Date(now - 30_000));
    await journal.taskStarted({ task_id: "tk_late", workflow_id: "wf_1", name: "Late", started_at: now - 10_000 });
    expect(spoolEdit("claude", cacheHome, write("c.ts")).status).toBe(0);
    // Two helpers draining at once record each edit once.
    const [first, second] = await Promise.all([drainSpool(cache, SPOOLED_TOOL_CALLS), drainSpool(cache, SPOOLED_TOOL_CALLS)]);
    expect(first + second).toBe(3);
    expect((await journal.editedPaths("tk_early")).paths.sort()).toEqual(["a.ts", "b.ts", "c.ts"]);
    expect((await journal.editedPaths("tk_late")).paths).toEqual(["c.ts"]);
    expect(readdirSync(join(cache, SPOOL_DIR))).toEqual([]);
  });

  it("leaves a payload still being written for later, and drops one that never became JSON", async () => {
    const cache = tempDir("waymark-cache-");
    const dir = join(cache, SPOOL_DIR);
    spawnSync("mkdir", ["-p", dir]);
    writeFileSync(join(dir, "claude.writing01"), '{"tool_name":"Wri');
    writeFileSync(join(dir, "claude.broken001"), '{"tool_name":"Wri');
    utimesSync(join(dir, "claude.broken001"), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    writeFileSync(join(dir, "vim.0000000001"), "{}");
    expect(await drainSpool(cache, SPOOLED_TOOL_CALLS)).toBe(0);
    // A payload of an agent whose hooks do not spool is dropped too.
    expect(readdirSync(dir).sort()).toEqual(["claude.writing01"]);
  });
});

describe("session start within its budget", () => {
  const servers: Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });

  /** An endpoint answering get_workflow (one JSON-RPC POST, as the hook asks it) after `delayMs`. */
  async function endpoint(delayMs: number): Promise<string> {
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        const call = JSON.parse(body) as { id: number; params: { name: string; arguments: { workflow_id: string } } };
        const text = `${call.params.arguments.workflow_id}: 2 tasks, 1 open (asked with ${String(request.headers.authorization)})`;
        setTimeout(() => {
          response.writeHead(200, { "content-type": "text/event-stream" });
          response.end(
            `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: call.id, result: { content: [{ type: "text", text }] } })}\n\n`,
          );
        }, delayMs);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  async function sessionStart(
    url: string,
    repo: Repo,
    cache: string,
    startedAt: number,
    budgetMs = SESSION_START_BUDGET_MS,
  ): Promise<string> {
    const result = await runHook("session-start", JSON.stringify({ cwd: repo.dir, session_id: "s", source: "startup" }), {
      agent: agentCalled("claude"),
      url,
      token: "secret",
      version: "0.1.0",
      cacheDir: cache,
      startedAt,
      sessionStartBudgetMs: budgetMs,
    });
    return JSON.parse(result.stdout).hookSpecificOutput.additionalContext as string;
  }

  it("shows the state fresh when the endpoint answers in time, and keeps it; else the kept state, with its age", async () => {
    const repo = Repo.init();
    const cache = tempDir("waymark-cache-");
    const journal = new Journal(realpathSync(repo.dir), cache);
    await journal.workflowSeen("wf_budget", "Budget");
    const fast = await endpoint(10);
    // A budget this machine's load cannot exhaust before the endpoint answers (it answers in 10 ms).
    const fresh = await sessionStart(fast, repo, cache, Date.now(), 5000);
    expect(fresh).toContain("Workflow state (get_workflow):\nwf_budget: 2 tasks, 1 open (asked with Bearer secret)");
    expect((await journal.workflowState("wf_budget"))?.text).toBe("wf_budget: 2 tasks, 1 open (asked with Bearer secret)");

    // Kept over KEPT_STATE_FRESH_MS ago, and an endpoint slower than the budget: the hook answers at the budget, with the kept state.
    const old = Date.now() - KEPT_STATE_FRESH_MS - 60_000;
    await journal.keepWorkflowState("wf_budget", "wf_budget: kept long ago", old);
    const slow = await endpoint(SESSION_START_BUDGET_MS + 2000);
    const started = Date.now();
    const kept = await sessionStart(slow, repo, cache, started);
    expect(Date.now() - started).toBeLessThan(SESSION_START_BUDGET_MS + 500);
    expect(kept).toContain("Workflow state (get_workflow, 11 min ago):\nwf_budget: kept long ago");
    // The budget counts from the process's start: spent already, the endpoint is not asked.
    const spent = await sessionStart(fast, repo, cache, Date.now() - SESSION_START_BUDGET_MS);
    expect(spent).toContain("Workflow state (get_workflow, 11 min ago)");
  });

  it("shows a state kept within the last minutes at once, without asking the endpoint", async () => {
    const repo = Repo.init();
    const cache = tempDir("waymark-cache-");
    const journal = new Journal(realpathSync(repo.dir), cache);
    await journal.workflowSeen("wf_kept", "Kept");
    // As the helper keeps it after a task it started or completed.
    await journal.keepWorkflowState("wf_kept", 'wf_kept "Kept" active\nopen: tk_1 Edit', Date.now() - 60_000);
    let asked = 0;
    const server = createServer((_request, response) => {
      asked++;
      response.writeHead(500).end();
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const context = await sessionStart(url, repo, cache, Date.now(), 5000);
    expect(context).toContain('Workflow state (get_workflow, 1 min ago):\nwf_kept "Kept" active\nopen: tk_1 Edit');
    expect(asked).toBe(0);
  });

  it("without a kept state and no answer in time, names the workflow and how to resume it", async () => {
    const repo = Repo.init();
    const cache = tempDir("waymark-cache-");
    const journal = new Journal(realpathSync(repo.dir), cache);
    await journal.workflowSeen("wf_cold", null);
    const context = await sessionStart(await endpoint(SESSION_START_BUDGET_MS + 2000), repo, cache, Date.now());
    expect(context).toContain('Last workflow: wf_cold. Call get_workflow {"workflow_id": "wf_cold"}');
  });
});
