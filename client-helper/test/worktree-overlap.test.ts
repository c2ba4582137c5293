import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { helperWarnings } from "@waymark/protocol/helper-warnings";
import { type Changes, changesSchema, type Snapshot, snapshotSchema } from "@waymark/protocol/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

// Two agents, one checkout, two workflows: each helper process records its tasks in the
// user's cache, so each sees the other's task on the same working tree and reports it.

let remote: FakeRemote;
const clients: Client[] = [];
beforeAll(async () => {
  ensureBuilt();
  remote = new FakeRemote("t");
  await remote.start();
});
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await remote.stop();
  cleanupTempDirs();
});

async function agent(dir: string, cache: string): Promise<Client> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const client = new Client({ name: "agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: SYSTEM_NODE,
      args: [BIN, "mcp", "--url", remote.url, "--dir", dir],
      env: { ...env, WAYMARK_TOKEN: "t", XDG_CACHE_HOME: cache },
      stderr: "pipe",
    }),
  );
  clients.push(client);
  return client;
}

const outcome = { summary: "done" };
const lastSent = <T>(tool: string, key: string, schema: { parse: (value: unknown) => T }): T =>
  schema.parse(remote.calls(tool).at(-1)?.args[key]);

describe("overlap per working tree across workflows", () => {
  it("both tasks report the other, and the second names the files both changed", async () => {
    const repo = Repo.init().write("shared.txt", "s\n").write("a.txt", "a\n").commitAll("base");
    const cache = tempDir("waymark-cache-");
    const first = await agent(repo.dir, cache);
    const second = await agent(repo.dir, cache);
    const one = await first.callTool({ name: "start_task", arguments: { workflow_id: "wf-1", name: "one", goal: "g" } });
    const oneId = (one.structuredContent as { task_id: string }).task_id;
    const two = await second.callTool({ name: "start_task", arguments: { workflow_id: "wf-2", name: "two", goal: "g" } });
    const twoId = (two.structuredContent as { task_id: string }).task_id;
    const secondStart: Snapshot = lastSent("start_task", "snapshot", snapshotSchema);
    expect(secondStart.type === "git" && secondStart.concurrent?.map((t) => [t.task_id, t.completed_at])).toEqual([[oneId, null]]);

    repo.write("shared.txt", "edited by both\n").write("a.txt", "a by one\n");
    await first.callTool({ name: "complete_task", arguments: { task_id: oneId, status: "success", outcome } });
    const firstChanges: Changes = lastSent("complete_task", "changes", changesSchema);
    expect(firstChanges.type === "git" && firstChanges.concurrent?.map((t) => [t.task_id, t.completed_at])).toEqual([[twoId, null]]);
    expect(helperWarnings(firstChanges).join("\n")).toContain(`Task ${twoId} was also open on this working tree`);

    repo.write("b.txt", "b by two\n");
    const done = await second.callTool({ name: "complete_task", arguments: { task_id: twoId, status: "success", outcome } });
    const secondChanges: Changes = lastSent("complete_task", "changes", changesSchema);
    const overlap = secondChanges.type === "git" ? secondChanges.concurrent?.[0] : undefined;
    // One checkout: the second task still sees what the first left uncommitted, so both claim it.
    expect(overlap).toMatchObject({ task_id: oneId, shared_paths: ["a.txt", "shared.txt"], shared_count: 2 });
    expect(typeof overlap?.completed_at).toBe("number");
    expect(JSON.stringify(done.content)).toContain("Changed by both (2)");
  });

  it("tasks in different working trees never see each other", async () => {
    const cache = tempDir("waymark-cache-");
    const a = await agent(Repo.init().write("x", "x\n").commitAll("x").dir, cache);
    const b = await agent(Repo.init().write("y", "y\n").commitAll("y").dir, cache);
    await a.callTool({ name: "start_task", arguments: { workflow_id: "wf-a", name: "a", goal: "g" } });
    await b.callTool({ name: "start_task", arguments: { workflow_id: "wf-b", name: "b", goal: "g" } });
    const start: Snapshot = lastSent("start_task", "snapshot", snapshotSchema);
    expect(start.type === "git" && start.concurrent).toBeUndefined();
  });

  it("a parent and its subtasks are never each other's concurrent tasks; an unrelated task still is", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const cache = tempDir("waymark-cache-");
    const agentA = await agent(repo.dir, cache);
    const agentB = await agent(repo.dir, cache);
    const idOf = (result: unknown) => (result as { structuredContent: { task_id: string } }).structuredContent.task_id;
    const sentIds = (data: Snapshot | Changes) => (data.type === "unavailable" ? [] : (data.concurrent ?? []).map((t) => t.task_id)).sort();
    const other = idOf(await agentB.callTool({ name: "start_task", arguments: { workflow_id: "wf-other", name: "other", goal: "g" } }));
    const root = idOf(await agentA.callTool({ name: "start_task", arguments: { workflow_id: "wf-n", name: "root", goal: "g" } }));
    const child = idOf(
      await agentA.callTool({ name: "start_task", arguments: { workflow_id: "wf-n", parent_task_id: root, name: "child", goal: "g" } }),
    );
    expect(sentIds(lastSent("start_task", "snapshot", snapshotSchema))).toEqual([other]);
    const grandchild = idOf(
      await agentA.callTool({
        name: "start_task",
        arguments: { workflow_id: "wf-n", parent_task_id: child, name: "grandchild", goal: "g" },
      }),
    );
    expect(sentIds(lastSent("start_task", "snapshot", snapshotSchema))).toEqual([other]);

    repo.write("a.txt", "a by the grandchild\n");
    const done = await agentA.callTool({ name: "complete_task", arguments: { task_id: grandchild, status: "success", outcome } });
    expect(sentIds(lastSent("complete_task", "changes", changesSchema))).toEqual([other]);
    expect(JSON.stringify(done.content)).not.toContain(root);
    await agentA.callTool({ name: "complete_task", arguments: { task_id: child, status: "success", outcome } });
    expect(sentIds(lastSent("complete_task", "changes", changesSchema))).toEqual([other]);
    const rootDone = await agentA.callTool({ name: "complete_task", arguments: { task_id: root, status: "success", outcome } });
    expect(sentIds(lastSent("complete_task", "changes", changesSchema))).toEqual([other]);
    expect(JSON.stringify(rootDone.content)).toContain(`Task ${other} was also open`);
    expect(JSON.stringify(rootDone.content)).not.toContain(grandchild);
  });
});
