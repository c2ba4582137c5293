import { chownSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { snapshotSchema } from "@waymark/protocol/wire";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { outgoingSnapshot } from "../src/outgoing.js";
import { computeChanges, takeSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

// When the helper cannot observe, the edge and the agent hear what happened and how to fix
// it, never that the helper was not used.

const TOKEN = "t";
let remote: FakeRemote;
const clients: Client[] = [];

beforeAll(async () => {
  ensureBuilt();
  remote = new FakeRemote(TOKEN);
  await remote.start();
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  remote.maxBodyBytes = Number.POSITIVE_INFINITY;
});
afterAll(async () => {
  await remote.stop();
  cleanupTempDirs();
});

async function helper(dir: string): Promise<Client> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const client = new Client({ name: "honest", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: SYSTEM_NODE,
      args: [BIN, "mcp", "--url", remote.url, "--dir", dir],
      env: { ...env, WAYMARK_TOKEN: TOKEN, XDG_CACHE_HOME: tempDir() },
      stderr: "pipe",
    }),
  );
  clients.push(client);
  return client;
}

const text = (result: { content?: unknown }) =>
  ((result.content ?? []) as { type: string; text?: string }[]).map((block) => block.text ?? "").join("\n");
const sent = (tool: string, key: string) => remote.calls(tool).at(-1)?.args[key] as { type: string; reason?: string } | undefined;
const outcome = { summary: "done" };

describe("honest warnings", () => {
  it("a missing project directory: the edge and the agent are told it does not exist", async () => {
    const missing = join(tempDir(), "gone");
    const client = await helper(missing);
    const result = await client.callTool({ name: "start_task", arguments: { workflow_id: "w", name: "n", goal: "g" } });
    expect(sent("start_task", "snapshot")).toEqual({
      type: "unavailable",
      reason: expect.stringContaining(`${missing} does not exist`),
      source: { kind: "helper", version: "0.1.0" },
    });
    expect(text(result)).toContain("does not exist");
  });

  it("the start commit was garbage-collected: complete_task says so instead of sending nothing", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const base = repo.git("rev-parse", "HEAD").trim();
    repo.write("a.txt", "rewritten\n").commitAll("soon gone");
    const client = await helper(repo.dir);
    const started = await client.callTool({ name: "start_task", arguments: { workflow_id: "w", name: "n", goal: "g" } });
    const taskId = (started.structuredContent as { task_id: string }).task_id;
    repo.git("reset", "-q", "--hard", base);
    repo.git("reflog", "expire", "--expire=now", "--all");
    repo.git("gc", "-q", "--prune=now");
    const result = await client.callTool({ name: "complete_task", arguments: { task_id: taskId, status: "success", outcome } });
    const changes = sent("complete_task", "changes");
    expect(changes?.type).toBe("unavailable");
    expect(changes?.reason).toMatch(/start commit [0-9a-f]{40} is no longer in the repository/);
    expect(text(result)).toContain("no longer in the repository");
  });

  it("a repository owned by another user: the reason names safe.directory", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    chownSync(repo.dir, 54321, 54321);
    for (const name of readdirSync(repo.dir)) chownSync(join(repo.dir, name), 54321, 54321);
    await expect(takeSnapshot(repo.dir)).rejects.toThrow(/owned by another user .*git config --global --add safe\.directory/);
  });

  it("a bare repository: the reason says there is no working tree", async () => {
    const bare = tempDir();
    new Repo(bare).git("init", "-q", "--bare");
    await expect(takeSnapshot(bare)).rejects.toThrow(/bare git repository/);
  });

  it("a branch name of 1,200 characters does not fail start_task", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const branch = Array.from({ length: 6 }, (_, i) => `${i}${"b".repeat(199)}`).join("/");
    repo.git("checkout", "-q", "-b", branch);
    const local = await takeSnapshot(repo.dir);
    expect(snapshotSchema.safeParse(outgoingSnapshot(local)).success).toBe(true);
    expect(local.type === "git" && local.branch?.startsWith("0bbb")).toBe(true);
    await computeChanges(local);
  });

  it("an HTTP 413 is not reported as 'retry later'", async () => {
    remote.maxBodyBytes = 300;
    const client = await helper(Repo.init().dir);
    const result = await client.callTool({ name: "log_milestone", arguments: { task_id: "t", message: "m".repeat(1000) } });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^TOO_LARGE: .*413/);
    expect(text(result)).not.toMatch(/retry later/);
  });
});
