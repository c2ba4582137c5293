import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, FAST_TMP, Repo, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { callTool, type Structured, ok as tool } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

let server: DevServer;
let cacheHome: string;

beforeAll(async () => {
  ensureBuilt();
  cacheHome = tempDir("waymark-cache-");
  server = sharedDevServer();
});
afterAll(async () => {
  cleanupTempDirs();
});

/** The agent's view: the helper as a stdio MCP server, run by the machine's own Node as npx would. */
// One cache for the file, never the user's: it is what lets two helper processes see each other's tasks.
function helperFor(repo: Repo | string): Promise<Client> {
  return connectThroughHelper(server, typeof repo === "string" ? repo : repo.dir, { cacheHome });
}

describe("wrangler dev + the local helper over stdio", () => {
  it("records exactly what a task changed: committed, staged, unstaged, untracked, deleted; ignored and pre-existing left out", async () => {
    const repo = Repo.init()
      .write(".gitignore", "*.log\n")
      .write("a.ts", "a1\n")
      .write("b.ts", "b1\n")
      .write("c.ts", "c1\n")
      .write("auth/login.ts", "login1\n")
      .write("README.md", "readme\n")
      .commitAll("initial");
    repo.write("notes.md", "already untracked before the task\n");
    repo.write("README.md", "already dirty before the task\n");

    const agent = await helperFor(repo);
    const { tools } = await agent.listTools();
    const startTask = tools.find((t) => t.name === "start_task");
    expect(Object.keys(startTask?.inputSchema.properties ?? {})).not.toContain("snapshot");
    expect(Object.keys(tools.find((t) => t.name === "complete_task")?.inputSchema.properties ?? {})).not.toContain("changes");

    const { workflow_id } = (await tool(agent, "start_workflow", { name: "Helper chain" })) as { workflow_id: string };
    const started = (await tool(agent, "start_task", { workflow_id, name: "Login", goal: "Touch auth", areas: ["auth", "src/**"] })) as {
      task_id: string;
      snapshot_type: string;
    };
    expect(started.snapshot_type).toBe("git");

    repo.write("auth/login.ts", "login2\n").write("src/new.ts", "new\n").commitPaths("feature", "auth/login.ts", "src/new.ts");
    repo.write("a.ts", "a2\n");
    repo.git("add", "a.ts");
    repo.write("b.ts", "b2\n");
    repo.write("src/untracked.ts", "untracked\n");
    repo.remove("c.ts");
    repo.write("debug.log", "ignored\n");

    const done = (await tool(agent, "complete_task", {
      task_id: started.task_id,
      status: "success",
      outcome: { summary: "Login reworked" },
    })) as {
      files_changed: Structured;
      verification: Structured;
    };
    const expectedFiles = {
      added: ["src/new.ts", "src/untracked.ts"],
      modified: ["a.ts", "auth/login.ts", "b.ts"],
      deleted: ["c.ts"],
      renamed: [],
      uncommitted: ["a.ts", "b.ts", "c.ts", "src/untracked.ts"],
      // Provenance: this helper's, but no device of the account signed it: its claim (no hooks ran, so no agent-edit marks).
      source: { kind: "claimed", version: "0.1.0", reason: "not signed by a device" },
      // Review data: each file one line changed, c.ts's one line removed, new files' one line added.
      lines: expect.any(Array),
      line_totals: { added: 5, removed: 4, binary: 0 },
      commits: [{ sha: expect.stringMatching(/^[0-9a-f]{7,}$/), subject: "feature" }],
      branch: "main",
    };
    const expectedVerification = { scope_match: false, unexpected_files: ["a.ts", "b.ts", "c.ts"] };
    expect(done.files_changed).toEqual(expectedFiles);
    expect(done.verification).toMatchObject(expectedVerification);

    await agent.close();
    const reader = await helperFor(repo);
    const stored = (await tool(reader, "get_workflow", { task_id: started.task_id })) as {
      task: { files_changed: Structured; verification: Structured };
    };
    expect(stored.task.files_changed).toEqual(expectedFiles);
    expect(stored.task.verification).toMatchObject(expectedVerification);
    await reader.close();
  });

  it("names that are not UTF-8, two committed together, complete at the edge byte for byte", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const agent = await helperFor(repo);
    const { workflow_id } = (await tool(agent, "start_workflow", { name: "Latin-1 names" })) as { workflow_id: string };
    const { task_id } = (await tool(agent, "start_task", { workflow_id, name: "t", goal: "g" })) as { task_id: string };
    repo.writeBytes(Buffer.from("lat\xe9.txt", "latin1"), "e9\n").writeBytes(Buffer.from("lat\xe8.txt", "latin1"), "e8\n").commitAll("two");
    const done = (await tool(agent, "complete_task", { task_id, status: "success", outcome: { summary: "s" } })) as {
      files_changed: { added: string[] };
    };
    expect(done.files_changed.added).toEqual(["/lat%E8.txt", "/lat%E9.txt"]);
    await agent.close();
  });

  it("50,000 files created during a task: start_task and complete_task succeed at the edge", async () => {
    const repo = Repo.init(FAST_TMP).write("a.txt", "a\n").commitAll("base");
    const agent = await helperFor(repo);
    const { workflow_id } = (await tool(agent, "start_workflow", { name: "Huge output" })) as { workflow_id: string };
    const { task_id } = (await tool(agent, "start_task", { workflow_id, name: "build", goal: "g" })) as { task_id: string };
    for (let dir = 0; dir < 100; dir++) {
      for (let file = 0; file < 500; file++) repo.write(`out/d${dir}/f${file}.js`, `${dir}/${file}\n`);
    }
    const done = await callTool(
      agent,
      "complete_task",
      { task_id, status: "success", outcome: { summary: "built" } },
      { mustSucceed: true },
    );
    const filesChanged = done.structured.files_changed as {
      added: string[];
      more?: number;
      truncated?: { omitted: number; directories: unknown[] };
    };
    // The result lists the first files (a bounded value); the record holds the 20,000 the helper sent.
    expect(filesChanged.added.length + (filesChanged.more ?? 0)).toBe(20_000);
    expect(filesChanged.truncated?.omitted).toBe(30_000);
    expect(filesChanged.truncated?.directories.length).toBeGreaterThan(0);
    expect(done.text).toContain("counted per directory in files_changed.truncated");
    const stored = (await tool(agent, "get_workflow", { task_id })) as { task: { files_changed: { truncated?: { omitted: number } } } };
    expect(stored.task.files_changed.truncated?.omitted).toBe(30_000);
    const closed = await tool(agent, "complete_workflow", { workflow_id, status: "success", summary: "done" });
    expect(closed.status).toBe("success");
    await agent.close();
  }, 180_000);

  it("a missing project directory: the task still starts and completes, and nobody is told the helper was not used", async () => {
    const agent = await helperFor(join(tempDir(), "missing"));
    const { workflow_id } = (await tool(agent, "start_workflow", { name: "Missing dir" })) as { workflow_id: string };
    const started = await callTool(agent, "start_task", { workflow_id, name: "t", goal: "g" }, { mustSucceed: true });
    expect(started.text).toContain("does not exist");
    const done = await callTool(
      agent,
      "complete_task",
      { task_id: started.structured.task_id as string, status: "success", outcome: { summary: "s" } },
      { mustSucceed: true },
    );
    expect(done.text).not.toMatch(/without helper data/);
    expect((done.structured.verification as { warnings: string[] }).warnings.join("\n")).toContain("has no start snapshot");
    await agent.close();
  });

  it("two workflows' tasks on one working tree: both record the overlap", async () => {
    const repo = Repo.init().write("shared.ts", "s\n").commitAll("base");
    const first = await helperFor(repo);
    const second = await helperFor(repo);
    const one = (await tool(first, "start_workflow", { name: "First agent" })) as { workflow_id: string };
    const two = (await tool(second, "start_workflow", { name: "Second agent" })) as { workflow_id: string };
    const taskOne = (await tool(first, "start_task", { workflow_id: one.workflow_id, name: "a", goal: "g" })) as { task_id: string };
    const taskTwo = (await tool(second, "start_task", { workflow_id: two.workflow_id, name: "b", goal: "g" })) as { task_id: string };
    repo.write("shared.ts", "both\n");
    const doneOne = (await tool(first, "complete_task", { task_id: taskOne.task_id, status: "success", outcome: { summary: "s" } })) as {
      verification: { warnings: string[] };
    };
    const doneTwo = (await tool(second, "complete_task", { task_id: taskTwo.task_id, status: "success", outcome: { summary: "s" } })) as {
      verification: { warnings: string[] };
    };
    expect(doneOne.verification.warnings.join("\n")).toContain(`Task ${taskTwo.task_id} was also open on this working tree`);
    expect(doneTwo.verification.warnings.join("\n")).toContain(`Task ${taskOne.task_id} was also open on this working tree`);
    expect(doneTwo.verification.warnings.join("\n")).toContain("Changed by both (1): shared.ts");
    await first.close();
    await second.close();
  });
});
