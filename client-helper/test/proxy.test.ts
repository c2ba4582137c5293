import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Changes, Snapshot } from "@waymark/protocol/wire";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { resolveChanges } from "../src/cli.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, blackHole, closedPort, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

const TOKEN = "secret-token";
let remote: FakeRemote;
let cacheHome: string;
let configHome: string;
const open: { close: () => Promise<void> }[] = [];

beforeAll(async () => {
  ensureBuilt();
  remote = new FakeRemote(TOKEN);
  await remote.start();
  cacheHome = tempDir("waymark-cache-");
  configHome = tempDir("waymark-config-");
});
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => {});
});
afterAll(async () => {
  await remote.stop();
  cleanupTempDirs();
});

function env(extra: Record<string, string> = {}): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("WAYMARK_")) base[k] = v;
  // A config folder of its own: no endpoint setting and no device key of the machine's user leak in.
  return { ...base, XDG_CACHE_HOME: cacheHome, XDG_CONFIG_HOME: configHome, ...extra };
}

type HelperOpts = {
  url?: string;
  token?: string | null;
  args?: string[];
  cwd?: string;
  roots?: string[];
};

/** The helper as a real child process on the machine's Node, driven by the SDK v2 client. */
async function helperV2(opts: HelperOpts = {}): Promise<Client> {
  const args = [BIN, "mcp", "--url", opts.url ?? remote.url, ...(opts.args ?? [])];
  const transport = new StdioClientTransport({
    command: SYSTEM_NODE,
    args,
    cwd: opts.cwd,
    env: env(opts.token === null ? {} : { WAYMARK_TOKEN: opts.token ?? TOKEN }),
    stderr: "pipe",
  });
  const client = new Client({ name: "test-v2", version: "1.0.0" }, opts.roots ? { capabilities: { roots: { listChanged: true } } } : {});
  if (opts.roots) {
    const roots = opts.roots;
    client.setRequestHandler("roots/list", async () => ({
      roots: roots.map((dir) => ({
        uri: pathToFileURL(dir).href,
        name: "project",
      })),
    }));
  }
  await client.connect(transport);
  open.push(client);
  return client;
}

async function helperV1(opts: HelperOpts = {}): Promise<V1Client> {
  const transport = new V1StdioClientTransport({
    command: SYSTEM_NODE,
    args: [BIN, "mcp", "--url", opts.url ?? remote.url, ...(opts.args ?? [])],
    cwd: opts.cwd,
    env: env({ WAYMARK_TOKEN: TOKEN }),
    stderr: "pipe",
  });
  const client = new V1Client({ name: "test-v1", version: "1.0.0" });
  await client.connect(transport);
  open.push(client);
  return client;
}

function text(result: { content?: unknown }): string {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return content.map((c) => c.text ?? "").join("\n");
}

function lastCall(tool: string): Record<string, unknown> {
  const calls = remote.calls(tool);
  const last = calls[calls.length - 1];
  if (!last) throw new Error(`the remote received no ${tool}`);
  return last.args;
}

const outcome = { summary: "done" };

function resolvedFromRemote(): ReturnType<typeof resolveChanges> {
  const start = lastCall("start_task").snapshot as Snapshot;
  const changes = lastCall("complete_task").changes as Changes;
  return resolveChanges(start, changes);
}

describe("waymark mcp (stdio proxy, real child process)", () => {
  it("lists the remote tools without the helper-only inputs", async () => {
    const client = await helperV2({ args: ["--dir", Repo.init().dir] });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(["complete_task", "log_milestone", "start_task"]);
    expect(Object.keys(byName.start_task?.inputSchema.properties ?? {})).not.toContain("snapshot");
    expect(Object.keys(byName.start_task?.inputSchema.properties ?? {})).toContain("goal");
    expect(Object.keys(byName.complete_task?.inputSchema.properties ?? {})).not.toContain("changes");
    expect(Object.keys(byName.complete_task?.inputSchema.properties ?? {})).toContain("idempotency_key");
  });

  it("enriches start_task with a snapshot and complete_task with the changes since it; forwards the rest", async () => {
    const repo = Repo.init().write("a.txt", "a\n").write("b.txt", "b\n").commitAll("base").write("pre.txt", "dirty\n");
    const client = await helperV2({ args: ["--dir", repo.dir] });
    const started = await client.callTool({
      name: "start_task",
      arguments: {
        workflow_id: "wf",
        name: "t",
        goal: "g",
        snapshot: { type: "git", head: null, dirty: [] },
      },
    });
    expect(started.isError).toBeFalsy();
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    const snapshot = lastCall("start_task").snapshot as Snapshot;
    // The agent's own "snapshot" is dropped: only the helper's reaches the edge.
    expect(snapshot.type).toBe("git");
    expect(snapshot.type === "git" && snapshot.head).toMatch(/^[0-9a-f]{40}$/);
    expect(snapshot.type === "git" && snapshot.dirty.map((d) => d.path)).toEqual(["pre.txt"]);

    const milestone = await client.callTool({
      name: "log_milestone",
      arguments: { task_id: taskId, message: "half" },
    });
    expect(text(milestone)).toBe("logged");
    expect(lastCall("log_milestone")).toEqual({
      task_id: taskId,
      message: "half",
    });

    repo.write("a.txt", "a2\n").commitPaths("edit", "a.txt").write("new.txt", "n\n").remove("b.txt");
    repo.write("pre.txt", "dirtier\n");
    const done = await client.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    expect(done.isError).toBeFalsy();
    const sent = lastCall("complete_task");
    expect(sent.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    const res = resolvedFromRemote();
    expect({ a: res.added, m: res.modified, d: res.deleted }).toEqual({
      a: ["new.txt"],
      m: ["a.txt", "pre.txt"],
      d: ["b.txt"],
    });
    // Line counts, pre.txt's from the copy the helper kept at start_task (it was dirty then).
    const review = (sent.changes as Changes & { review?: { lines: unknown[] } }).review;
    expect(review?.lines).toEqual([
      { path: "a.txt", added: 1, removed: 1 },
      { path: "b.txt", added: 0, removed: 1 },
      { path: "new.txt", added: 1, removed: 0 },
      { path: "pre.txt", added: 1, removed: 1 },
    ]);
  });

  it("forwards resources/list and resources/read", async () => {
    const client = await helperV2({ args: ["--dir", Repo.init().dir] });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["waymark://workflows"]);
    const read = await client.readResource({ uri: "waymark://workflows" });
    expect(read.contents[0]).toMatchObject({ text: '{"workflows":[]}' });
  });

  it("takes the project directory from the client's MCP root over --dir and the working directory", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const elsewhere = tempDir("waymark-cwd-");
    const client = await helperV2({
      cwd: elsewhere,
      args: ["--dir", elsewhere],
      roots: [repo.dir],
    });
    const started = await client.callTool({
      name: "start_task",
      arguments: { workflow_id: "wf", name: "t", goal: "g" },
    });
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    expect((lastCall("start_task").snapshot as Snapshot).type).toBe("git");
    repo.write("a.txt", "changed\n");
    await client.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    expect(resolvedFromRemote().modified).toEqual(["a.txt"]);
  });

  it("without roots or --dir uses the working directory; outside git that is a checksum snapshot", async () => {
    const plain = tempDir("waymark-plain-");
    const client = await helperV2({ cwd: plain });
    await client.callTool({
      name: "start_task",
      arguments: { workflow_id: "wf", name: "t", goal: "g" },
    });
    const snapshot = lastCall("start_task").snapshot as Record<string, unknown>;
    expect(Object.keys(snapshot).sort()).toEqual(["digest", "files", "source", "type"]);
    // The helper's identity, unsigned: this machine has no device key (only init and waymark device make one).
    expect(snapshot).toMatchObject({ type: "checksum", files: 0, source: { kind: "helper", version: "0.1.0" } });
  });

  it("a bad token reaches the agent as a clear UNAUTHORIZED tool error", async () => {
    const client = await helperV2({
      token: "wrong",
      args: ["--dir", Repo.init().dir],
    });
    const result = await client.callTool({
      name: "log_milestone",
      arguments: { task_id: "t", message: "m" },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^UNAUTHORIZED: .*401.*WAYMARK_TOKEN/);
    const missing = await helperV2({
      token: null,
      args: ["--dir", Repo.init().dir],
    });
    const noToken = await missing.callTool({
      name: "start_task",
      arguments: { workflow_id: "w", name: "n", goal: "g" },
    });
    expect(text(noToken)).toMatch(/^UNAUTHORIZED: .*no token configured/);
  });

  it("an unreachable endpoint is a clear UNAVAILABLE tool error, fast", async () => {
    const url = await closedPort();
    const client = await helperV2({
      url,
      args: ["--dir", Repo.init().dir, "--timeout", "5"],
    });
    const t0 = Date.now();
    const result = await client.callTool({
      name: "log_milestone",
      arguments: { task_id: "t", message: "m" },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^UNAVAILABLE: cannot reach .*ECONNREFUSED/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it("an endpoint that never answers is an UNAVAILABLE tool error within the timeout, not a hang", async () => {
    const hole = await blackHole();
    try {
      const client = await helperV2({
        url: hole.url,
        args: ["--dir", Repo.init().dir, "--timeout", "1.5"],
      });
      const t0 = Date.now();
      const result = await client.callTool({
        name: "log_milestone",
        arguments: { task_id: "t", message: "m" },
      });
      const elapsed = Date.now() - t0;
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^UNAVAILABLE: no answer from .* within 1.5 s/);
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(4000);
      await expect(client.listTools()).rejects.toThrow(/UNAVAILABLE/);
    } finally {
      await hole.stop();
    }
  });

  it("a complete_task lost in transit is retried with the same idempotency key, then a new task gets a new key", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const client = await helperV2({ args: ["--dir", repo.dir] });
    const started = await client.callTool({
      name: "start_task",
      arguments: { workflow_id: "wf", name: "t", goal: "g" },
    });
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    repo.write("a.txt", "a2\n");
    remote.dropCompletes = 1;
    const failed = await client.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^UNAVAILABLE: /);
    const dropped = remote.calls("complete_task(dropped)").at(-1)?.args;
    const retried = await client.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    expect(retried.isError).toBeFalsy();
    const sent = lastCall("complete_task");
    expect(sent.idempotency_key).toBe(dropped?.idempotency_key);
    expect(resolvedFromRemote().modified).toEqual(["a.txt"]);

    const second = await client.callTool({
      name: "start_task",
      arguments: { workflow_id: "wf", name: "t2", goal: "g" },
    });
    const taskId2 = (second.structuredContent as { task_id: string }).task_id;
    await client.callTool({
      name: "complete_task",
      arguments: { task_id: taskId2, status: "success", outcome },
    });
    expect(lastCall("complete_task").idempotency_key).not.toBe(sent.idempotency_key);
  });

  it("a helper restart between start_task and complete_task still attributes (and reuses the key)", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base").write("pre.txt", "p\n");
    const first = await helperV2({ args: ["--dir", repo.dir] });
    const started = await first.callTool({
      name: "start_task",
      arguments: { workflow_id: "wf", name: "t", goal: "g" },
    });
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    remote.dropCompletes = 1;
    repo.write("b.txt", "b\n");
    await first.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    const droppedKey = remote.calls("complete_task(dropped)").at(-1)?.args.idempotency_key;
    await first.close();

    const second = await helperV2({ args: ["--dir", repo.dir] });
    const done = await second.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    expect(done.isError).toBeFalsy();
    expect(lastCall("complete_task").idempotency_key).toBe(droppedKey);
    expect(resolvedFromRemote().added).toEqual(["b.txt"]);
    expect(repo.git("status", "--porcelain")).toBe("?? b.txt\n?? pre.txt\n");
  });

  it("an unknown start snapshot: the agent's changes are dropped and the helper says why", async () => {
    const client = await helperV2({ args: ["--dir", Repo.init().dir] });
    const done = await client.callTool({
      name: "complete_task",
      arguments: {
        task_id: "never-started-here",
        status: "success",
        outcome,
        changes: { type: "git", fake: true },
      },
    });
    expect(done.isError).toBeFalsy();
    const sent = lastCall("complete_task");
    expect(sent.task_id).toBe("never-started-here");
    expect(sent.changes).toEqual({
      type: "unavailable",
      reason: expect.stringContaining("has no start snapshot of task never-started-here"),
      source: { kind: "helper", version: "0.1.0" },
    });
  });

  it("works for SDK v1 clients too", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const client = await helperV1({ args: ["--dir", repo.dir] });
    const { tools } = await client.listTools();
    const start = tools.find((t) => t.name === "start_task");
    expect(Object.keys(start?.inputSchema.properties ?? {})).not.toContain("snapshot");
    const started = await client.callTool({
      name: "start_task",
      arguments: { workflow_id: "wf", name: "t", goal: "g" },
    });
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    repo.remove("a.txt");
    await client.callTool({
      name: "complete_task",
      arguments: { task_id: taskId, status: "success", outcome },
    });
    expect(resolvedFromRemote().deleted).toEqual(["a.txt"]);
  });
});
