/**
 * A completion's local records are written after its answer went out (client-helper/src/proxy/follow-up.ts):
 * the helper is killed the moment the agent reads the answer, before it wrote them, and the next
 * helper on this cache writes them (the hooks' journal closed, the working tree's mark completed,
 * the task's record and its follow-up file gone, the stop state without the task). A real helper
 * process, a real repository, the SDK client as an agent drives it.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { STOP_STATE_DIR } from "@waymark/protocol/agent-config";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Journal } from "../src/hooks/journal.js";
import { TaskStore } from "../src/store.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

const TOKEN = "secret-token";
let remote: FakeRemote;

beforeAll(async () => {
  ensureBuilt();
  remote = new FakeRemote(TOKEN);
  await remote.start();
});
afterAll(async () => {
  await remote.stop();
  cleanupTempDirs();
});

/** A helper process on `repo` with its cache in `cacheHome`; `onAnswer` sees each answer as the client receives it. */
async function helper(repo: string, cacheHome: string, onAnswer?: (message: unknown, pid: number) => void) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WAYMARK_")) env[k] = v;
  const transport = new StdioClientTransport({
    command: SYSTEM_NODE,
    args: [BIN, "mcp", "--url", remote.url, "--dir", repo],
    env: { ...env, XDG_CACHE_HOME: cacheHome, XDG_CONFIG_HOME: tempDir("waymark-config-"), WAYMARK_TOKEN: TOKEN },
    stderr: "pipe",
  });
  const client = new Client({ name: "test-crash", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error("no helper process");
  const received = transport.onmessage;
  if (onAnswer && received) {
    transport.onmessage = (message) => {
      onAnswer(message, pid);
      received(message);
    };
  }
  return { client, pid };
}

function structured(result: unknown): Record<string, unknown> {
  return ((result as { structuredContent?: Record<string, unknown> }).structuredContent ?? {}) as Record<string, unknown>;
}

describe("a completion's local records, written after its answer", () => {
  it("are written by the next helper when the one that answered was killed before it wrote them", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const root = realpathSync(repo.dir);
    const cacheHome = tempDir("waymark-cache-");
    const cache = join(cacheHome, "waymark");
    const followUps = join(cache, "completed");
    let taskId = "";
    // The kill lands between the answer and the records most times; a run where the helper was
    // quicker proves nothing, so the task is done again until one is caught in between.
    for (let attempt = 0; attempt < 10 && taskId === ""; attempt++) {
      let armed = false;
      const { client, pid } = await helper(repo.dir, cacheHome, (message, helperPid) => {
        // Killed the moment the answer to complete_task is read: as an agent's host ending abruptly.
        if (armed && typeof message === "object" && message !== null && "result" in message) {
          armed = false;
          process.kill(helperPid, "SIGKILL");
        }
      });
      const started = structured(await client.callTool({ name: "start_task", arguments: { workflow_id: "wf_1", name: "T", goal: "g" } }));
      const id = String(started.task_id);
      repo.write("a.txt", `edited ${attempt}\n`);
      armed = true;
      const done = await client.callTool({
        name: "complete_task",
        arguments: { task_id: id, status: "success", outcome: { summary: "s" } },
      });
      expect(done.isError).toBeFalsy();
      await client.close().catch(() => {});
      await new Promise<void>((resolve) => {
        const gone = () => {
          try {
            process.kill(pid, 0);
            setTimeout(gone, 10);
          } catch {
            resolve();
          }
        };
        gone();
      });
      // Caught in between: its follow-up kept and the task still open for the hooks (a kill that lands
      // inside the follow-up, after the journal closed the task, leaves the file too but proves less).
      const kept = existsSync(followUps) && readdirSync(followUps).some((name) => name.endsWith(".json"));
      if (kept && (await new Journal(root, cache).openTasks()).some((task) => task.task_id === id)) taskId = id;
    }
    expect(taskId, "the helper was never caught between its answer and its records").not.toBe("");
    // As the helper left it: the task still open for the hooks.
    expect((await new Journal(root, cache).openTasks()).map((task) => task.task_id)).toContain(taskId);

    // The next session's helper, on the same cache: before its first call is answered, the records are written.
    const next = await helper(repo.dir, cacheHome);
    await next.client.callTool({ name: "log_milestone", arguments: { task_id: "tk_other", message: "m" } });
    const journal = new Journal(root, cache);
    expect((await journal.openTasks()).map((task) => task.task_id)).not.toContain(taskId);
    expect(await journal.completed(taskId)).toMatchObject({ task_id: taskId });
    const mark = await new TaskStore(remote.url, cache).mark(root, taskId);
    expect(mark?.completed_at).toEqual(expect.any(Number));
    expect(mark?.changed).toEqual(["a.txt"]);
    expect(await new TaskStore(remote.url, cache).load(taskId, repo.dir)).toBeNull();
    expect(readdirSync(followUps).filter((name) => name.endsWith(".json"))).toEqual([]);
    const stopStates = readdirSync(join(cache, STOP_STATE_DIR)).filter((name) => name.endsWith(".stop"));
    expect(stopStates).toHaveLength(1);
    expect(readFileSync(join(cache, STOP_STATE_DIR, stopStates[0] as string), "utf8")).not.toContain(taskId);
    await next.client.close();
  });
});
