import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { startDroppingProxy } from "../support/dropping-proxy";
import { getFrom } from "../support/loopback-get";
import { callTool, type Structured } from "../support/mcp-client";
import { newReaderAddress } from "../support/reader-proxy";
import { sharedDevServer } from "../support/shared-server";

// Line attribution end to end: the real helper (its MCP proxy and its hook command) against a real
// `wrangler dev`, with hook payloads in each agent's documented format, a "person" editing the
// files between the agent's edits, and real git repositories; the Agent Trace export validated
// against the JSON Schema written from the spec, and checked against `git blame`.

let server: DevServer;
/** Anonymous reads come from a loopback address of this file's own: the shared server budgets reads per client. */
let reader: string;
let cacheHome: string;
const schema = JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/agent-trace-record.json"), "utf8"));
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
const validRecord = ajv.compile(schema);

beforeAll(async () => {
  ensureBuilt();
  cacheHome = tempDir("waymark-cache-");
  server = sharedDevServer();
  reader = newReaderAddress();
});
afterAll(async () => {
  await server?.stop();
  cleanupTempDirs();
});

const numbered = (from: number, to: number, prefix = "line") =>
  Array.from({ length: to - from + 1 }, (_, i) => `${prefix} ${from + i}\n`).join("");

/** The helper's CLI in `cwd`, with the test server's token and the proxy's cache (async: the test's own proxy must keep serving). */
function waymark(cwd: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(SYSTEM_NODE, [BIN, ...args], {
      cwd,
      env: { ...(process.env as Record<string, string>), XDG_CACHE_HOME: cacheHome, WAYMARK_TOKEN: server.token, WAYMARK_URL: server.url },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

type BlameJson = {
  path: string;
  records: number;
  lines: { line: number; commit: string; who: string; task?: string; model_id?: string; agent?: string }[];
};

/** `waymark blame --json` as `line who` per line. */
async function blameWho(cwd: string, args: string[]): Promise<string[]> {
  const run = await waymark(cwd, ["blame", ...args, "--json"]);
  expect(run.status, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as BlameJson).lines.map((l) => `${l.line} ${l.who}`);
}

/** `waymark hook post-tool-use` as an agent's installed hook runs it: the payload on stdin. */
function hook(agent: "claude" | "codex" | "cursor", payload: Structured): void {
  const run = spawnSync(SYSTEM_NODE, [BIN, "hook", "post-tool-use", "--agent", agent], {
    input: JSON.stringify(payload),
    encoding: "utf8",
    env: { ...(process.env as Record<string, string>), XDG_CACHE_HOME: cacheHome },
  });
  expect(run.status, run.stderr).toBe(0);
}

type TraceRecord = {
  vcs: { revision: string };
  tool?: { name: string; version?: string };
  files: {
    path: string;
    conversations: {
      url?: string;
      contributor: { type: string; model_id?: string };
      ranges: { start_line: number; end_line: number; content_hash?: string; contributor?: { type: string } }[];
    }[];
  }[];
  metadata: { "dev.waymark": Record<string, unknown> };
};

/** Ranges per file as `start-end who` (the conversation's contributor unless the range overrides it). */
function rangesOf(record: TraceRecord): Record<string, string[]> {
  return Object.fromEntries(
    record.files.map((file) => [
      file.path,
      file.conversations.flatMap((c) => c.ranges.map((r) => `${r.start_line}-${r.end_line} ${(r.contributor ?? c.contributor).type}`)),
    ]),
  );
}

/** The commit `git blame` of `revision` names for each line of `path` (1-based). */
function blame(repo: Repo, revision: string, path: string): string[] {
  const out = repo.git("blame", "--porcelain", revision, "--", path);
  const commits: string[] = [];
  for (const line of out.split("\n")) {
    const match = /^([0-9a-f]{40}) \d+ (\d+)/.exec(line);
    if (match) commits[Number(match[2]) - 1] = match[1] as string;
  }
  return commits;
}

/**
 * What the records give the agent agrees with git: every line in a range (the agent's or others')
 * was written by a commit of the task, every other line by a commit before it.
 */
function agreesWithBlame(repo: Repo, record: TraceRecord, startCommit: string): void {
  for (const file of record.files) {
    const commits = blame(repo, record.vcs.revision, file.path);
    const inRanges = new Set<number>();
    for (const c of file.conversations) for (const r of c.ranges) for (let n = r.start_line; n <= r.end_line; n++) inRanges.add(n);
    const before = new Set(repo.git("rev-list", startCommit).trim().split("\n"));
    commits.forEach((commit, index) => {
      expect(before.has(commit), `${file.path}:${index + 1} blamed on ${commit}`).toBe(!inRanges.has(index + 1));
    });
  }
}

async function fetchText(url: string, headers: Record<string, string> = {}): Promise<string> {
  if (Object.keys(headers).length === 0) {
    const got = await getFrom(url, reader);
    expect(got.status, url).toBe(200);
    return got.body;
  }
  const response = await fetch(url, { headers });
  expect(response.status, url).toBe(200);
  return response.text();
}

describe("line attribution through wrangler dev and the helper", () => {
  it("Claude Code: a new file and an edit by the agent, a person's edit of another line; page, summary, exports, Agent Trace and git blame agree", async () => {
    const repo = Repo.init().write("src/app.ts", numbered(1, 20)).commitAll("initial");
    const startCommit = repo.git("rev-parse", "HEAD").trim();
    // The agent's transcript, as Claude Code writes it: its version and model on every line.
    const transcript = join(tempDir("waymark-home-"), "session.jsonl");
    // Through a proxy that keeps every request body: what left the machine is checked at the end.
    const proxy = await startDroppingProxy(server.url);
    const agent = await connectThroughHelper({ url: proxy.url, token: server.token }, repo.dir, { cacheHome });
    const tool = async (name: string, args: Structured) => (await callTool(agent, name, args, { mustSucceed: true })).structured;
    const wf = (await tool("start_workflow", { name: "Lines" })) as { workflow_id: string; share_url: string };
    const { task_id } = (await tool("start_task", { workflow_id: wf.workflow_id, name: "Add a module", goal: "g" })) as { task_id: string };
    const common = { session_id: "s-1", transcript_path: transcript, cwd: repo.dir, hook_event_name: "PostToolUse" };
    mkdirSync(join(transcript, ".."), { recursive: true });
    writeFileSync(
      transcript,
      `${JSON.stringify({
        type: "assistant",
        version: "2.1.328",
        sessionId: "s-1",
        timestamp: new Date().toISOString(),
        message: { id: "msg_1", model: "claude-sonnet-4-5-20250929", usage: { input_tokens: 10, output_tokens: 20 } },
      })}\n`,
    );

    // The agent writes a new file…
    const created = numbered(1, 5, "fresh");
    repo.write("src/new.ts", created);
    hook("claude", {
      ...common,
      tool_name: "Write",
      tool_input: { file_path: join(repo.dir, "src/new.ts"), content: created },
      tool_response: { type: "create", filePath: join(repo.dir, "src/new.ts"), content: created, structuredPatch: [], originalFile: null },
      tool_use_id: "toolu_1",
    });
    // …and replaces line 5 of an existing one with two lines.
    const original = numbered(1, 20);
    const edited = original.replace("line 5\n", "agent 5a\nagent 5b\n");
    repo.write("src/app.ts", edited);
    hook("claude", {
      ...common,
      tool_name: "Edit",
      tool_input: { file_path: join(repo.dir, "src/app.ts"), old_string: "line 5\n", new_string: "agent 5a\nagent 5b\n" },
      tool_response: {
        filePath: join(repo.dir, "src/app.ts"),
        oldString: "line 5\n",
        newString: "agent 5a\nagent 5b\n",
        originalFile: original,
        structuredPatch: [{ oldStart: 5, oldLines: 1, newStart: 5, newLines: 2, lines: ["-line 5", "+agent 5a", "+agent 5b"] }],
        userModified: false,
        replaceAll: false,
      },
      tool_use_id: "toolu_2",
    });
    // A person then edits another line of the same file in their editor (no hook sees it).
    repo.write("src/app.ts", edited.replace("line 15\n", "person 15\n"));
    repo.commitAll("Add a module");
    const endCommit = repo.git("rev-parse", "HEAD").trim();

    const completed = await callTool(
      agent,
      "complete_task",
      { task_id, status: "success", outcome: { summary: "Added" } },
      { mustSucceed: true },
    );
    await agent.close();
    expect(completed.text).toContain("lines: +8 −2 (agent 7 · others 1)");
    // Ranges and hashes were sent, never a line: no line the agent, the person or the start wrote is in any request.
    const sent = proxy.sent().join("\n");
    expect(sent).toContain('"line_attribution"');
    for (const text of ["agent 5a", "person 15", "fresh 1", "line 14"]) expect(sent).not.toContain(text);
    const files = (completed.structured as { files_changed: { lines: Structured[]; line_authors: Structured } }).files_changed;
    expect(files.lines).toEqual([
      { path: "src/app.ts", added: 3, removed: 2, agent: 2, others: 1, not_observed: 0 },
      { path: "src/new.ts", added: 5, removed: 0, agent: 5, others: 0, not_observed: 0 },
    ]);
    expect(files.line_authors).toEqual({ agent: 7, others: 1, not_observed: 0, tool: { name: "claude-code", version: "2.1.328" } });

    // The page, beside each file's counts, and in the task's provenance.
    const page = await fetchText(wf.share_url);
    expect(page).toContain('<span class="who">agent 2 · others 1<span class="sr-only"> added lines</span></span>');
    expect(page).toContain('<span class="who">agent 5<span class="sr-only"> added lines</span></span>');
    // The +/− bar's added part split by author: 3 of the largest change's 5 lines are 12 of 20 steps, 2 agent : 1 others.
    expect(page).toContain(
      '<span class="b-add w8"></span><span class="b-oth w4"></span><span class="b-nob w0"></span><span class="b-del w8"></span>',
    );
    expect(page).toContain("7 of 8 added lines last written by the agent&#39;s own edit tools (88%)");

    // The Markdown summary and the JSON export.
    const markdown = await fetchText(`${wf.share_url}/export.md`);
    expect(markdown).toContain("Lines: +8 −2 (agent 7 · others 1)");
    expect(markdown).toContain("| M | `src/app.ts` | 3 | 2 | committed, agent 2 · others 1 |");
    expect(markdown).toContain("| A | `src/new.ts` | 5 | 0 | committed, agent 5 |");
    const jsonText = await fetchText(`${wf.share_url}/export.json`);
    const json = JSON.parse(jsonText) as { tasks: { files_changed: { lines: Structured[] } }[] };
    expect(json.tasks[0]?.files_changed.lines).toEqual(files.lines);
    // `waymark verify` rebuilds every field, the authors included, from the events, and checks git.
    const exportFile = join(tempDir("waymark-export-"), "export.json");
    writeFileSync(exportFile, jsonText);
    const verified = await waymark(repo.dir, ["verify", exportFile, "--endpoint", server.url, "--repo", repo.dir]);
    expect(verified.status, verified.stdout + verified.stderr).toBe(0);

    // The Agent Trace export: valid against the spec's schema, one record for the task, at its commit.
    const shared = JSON.parse(await fetchText(`${wf.share_url}/export.agent-trace.json`)) as TraceRecord[];
    const byToken = JSON.parse(
      await fetchText(`${server.url}/api/workflows/${wf.workflow_id}/export.agent-trace.json`, { Authorization: `Bearer ${server.token}` }),
    ) as TraceRecord[];
    expect(shared).toHaveLength(1);
    for (const record of [...shared, ...byToken]) expect(validRecord(record), JSON.stringify(validRecord.errors)).toBe(true);
    const [record] = shared as [TraceRecord];
    expect(record.vcs).toEqual({ type: "git", revision: endCommit });
    expect(record.tool).toEqual({ name: "claude-code", version: "2.1.328" });
    expect(rangesOf(record)).toEqual({ "src/app.ts": ["5-6 ai", "16-16 unknown"], "src/new.ts": ["1-5 ai"] });
    expect(record.files[0]?.conversations[0]?.contributor).toEqual({ type: "ai", model_id: "anthropic/claude-sonnet-4-5-20250929" });
    // Linked to the task on the owner's page, never through the share link (records get published).
    expect(record.files[0]?.conversations[0]?.url).toBe(`${server.url}/w/${wf.workflow_id}#${task_id}`);
    expect(JSON.stringify(shared)).not.toContain(new URL(wf.share_url).pathname);
    expect(record.metadata["dev.waymark"]).toMatchObject({
      record_per: "task",
      workflow_id: wf.workflow_id,
      task_id,
      start_revision: startCommit,
    });
    // The same record through the read token.
    expect(rangesOf(byToken[0] as TraceRecord)).toEqual(rangesOf(record));
    expect(byToken[0]?.files[0]?.conversations[0]?.url).toBe(`${server.url}/w/${wf.workflow_id}#${task_id}`);
    agreesWithBlame(repo, record, startCommit);

    // `waymark trace` writes the same records through the API; `waymark blame` reads them online
    // (the last workflow started here) and from the file (offline), and agrees with the ranges.
    const out = join(tempDir("waymark-trace-"), "trace.json");
    // The endpoint the workflow was started through (the proxy): the helper remembers it per endpoint.
    const traced = await waymark(repo.dir, ["trace", "--out", out, "--url", proxy.url]);
    expect(traced.status, traced.stderr).toBe(0);
    expect(traced.stdout).toContain(`wrote 1 Agent Trace record(s) of workflow ${wf.workflow_id}`);
    expect(rangesOf((JSON.parse(readFileSync(out, "utf8")) as TraceRecord[])[0] as TraceRecord)).toEqual(rangesOf(record));
    const expected = Array.from(
      { length: 21 },
      (_, i) => `${i + 1} ${i === 4 || i === 5 ? "agent" : i === 15 ? "others" : "not_recorded"}`,
    );
    expect(await blameWho(repo.dir, ["src/app.ts", "--url", proxy.url])).toEqual(expected);
    await proxy.close();
    expect(await blameWho(join(repo.dir, "src"), ["app.ts", "--trace", out])).toEqual(expected);
    const text = await waymark(repo.dir, ["blame", "src/new.ts", "--trace", out]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${endCommit.slice(0, 8)} agent anthropic/claude-sonnet-4-5-20250929  Add a module 1) fresh 1`);
    expect(text.stdout).toContain("src/new.ts: 5 line(s): agent 5 (from 1 Agent Trace record(s), the repository's notes)");
    // `waymark summary` (the PR description) says the same as the Markdown export.
    const summary = await waymark(repo.dir, ["summary", "--workflow", wf.workflow_id, "--link", "none"]);
    expect(summary.status, summary.stderr).toBe(0);
    expect(summary.stdout).toContain("Lines: +8 −2 (agent 7 · others 1)");
    expect(summary.stdout).toContain("| M | `src/app.ts` | 3 | 2 | committed, agent 2 · others 1 |");
    // Without a record every line is "not recorded", never anyone's: a clone without the notes ref, and no export.
    const none = join(tempDir("waymark-trace-"), "none.json");
    writeFileSync(none, "[]");
    const bare = join(tempDir("waymark-clone-"), "clone");
    repo.git("clone", "-q", repo.dir, bare);
    expect(await blameWho(bare, ["src/app.ts", "--trace", none])).toEqual(expected.map((l) => l.replace(/ \w+$/, " not_recorded")));
    // A file that is not an export is a usage error naming the field.
    writeFileSync(none, JSON.stringify([{ vcs: { type: "git", revision: "zz" }, files: [] }]));
    const bad = await waymark(repo.dir, ["blame", "src/app.ts", "--trace", none]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("export 1: not Agent Trace records: record 0: vcs.revision: must be a hex commit id");
    const both = await waymark(repo.dir, ["blame", "src/app.ts", "--trace", out, "--workflow", wf.workflow_id]);
    expect(both.status).toBe(2);
    expect(both.stderr).toContain("--trace and --workflow: the records come from files or from the endpoint, not both");
  });

  it("Codex: apply_patch adds a file and updates another, then a person edits it", async () => {
    const repo = Repo.init().write("lib.py", numbered(1, 12)).commitAll("initial");
    const startCommit = repo.git("rev-parse", "HEAD").trim();
    const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
    const tool = async (name: string, args: Structured) => (await callTool(agent, name, args, { mustSucceed: true })).structured;
    const wf = (await tool("start_workflow", { name: "Codex lines" })) as { workflow_id: string; share_url: string };
    const { task_id } = (await tool("start_task", { workflow_id: wf.workflow_id, name: "Patch", goal: "g" })) as { task_id: string };
    // Codex 0.169's PostToolUse for apply_patch: the raw patch in tool_input.command; paths relative to cwd.
    const patch =
      "*** Begin Patch\n*** Add File: util.py\n+def util():\n+    return 1\n*** Update File: lib.py\n@@ line 2\n line 3\n-line 4\n+codex 4\n+codex 4b\n*** End Patch\n";
    repo.write("util.py", "def util():\n    return 1\n");
    repo.write("lib.py", numbered(1, 12).replace("line 4\n", "codex 4\ncodex 4b\n"));
    hook("codex", {
      session_id: "c-1",
      cwd: repo.dir,
      hook_event_name: "PostToolUse",
      tool_name: "apply_patch",
      tool_input: { command: patch },
    });
    // The patch is committed, then the person edits the last line and commits: two commits in the task.
    repo.commitAll("Patch");
    const patchCommit = repo.git("rev-parse", "HEAD").trim();
    repo.write("lib.py", numbered(1, 12).replace("line 4\n", "codex 4\ncodex 4b\n").replace("line 12\n", "person 12\n"));
    repo.commitAll("Person");
    const completed = await callTool(
      agent,
      "complete_task",
      { task_id, status: "success", outcome: { summary: "Patched" } },
      { mustSucceed: true },
    );
    await agent.close();
    expect(completed.text).toContain("lines: +5 −2 (agent 4 · others 1)");
    const [record] = JSON.parse(await fetchText(`${wf.share_url}/export.agent-trace.json`)) as [TraceRecord];
    expect(validRecord(record), JSON.stringify(validRecord.errors)).toBe(true);
    expect(rangesOf(record)).toEqual({ "lib.py": ["4-5 ai", "13-13 unknown"], "util.py": ["1-2 ai"] });
    // Codex's hook payloads name no version: the spec's `tool` needs one, so the agent is in the metadata.
    expect(record.tool).toBeUndefined();
    expect(record.metadata["dev.waymark"].agent).toBe("codex");
    agreesWithBlame(repo, record, startCommit);
    // The agent's lines were last touched by the task's first commit: `waymark blame` carries their
    // numbers to the record's end commit through git's diff.
    const lines = (JSON.parse((await waymark(repo.dir, ["blame", "lib.py", "--workflow", wf.workflow_id, "--json"])).stdout) as BlameJson)
      .lines;
    expect(lines.map((l) => `${l.line} ${l.who}`)).toEqual(
      Array.from({ length: 13 }, (_, i) => `${i + 1} ${i === 3 || i === 4 ? "agent" : i === 12 ? "others" : "not_recorded"}`),
    );
    expect(lines[3]).toMatchObject({ commit: patchCommit, task: "Patch", agent: "codex", workflow_id: wf.workflow_id, task_id });
  });

  it("Cursor: afterFileEdit's replaced strings, then a person's edit; the record names Cursor and its version", async () => {
    const repo = Repo.init().write("web/app.js", numbered(1, 10)).commitAll("initial");
    const startCommit = repo.git("rev-parse", "HEAD").trim();
    const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
    const tool = async (name: string, args: Structured) => (await callTool(agent, name, args, { mustSucceed: true })).structured;
    const wf = (await tool("start_workflow", { name: "Cursor lines" })) as { workflow_id: string; share_url: string };
    const { task_id } = (await tool("start_task", { workflow_id: wf.workflow_id, name: "Edit", goal: "g" })) as { task_id: string };
    const edited = numbered(1, 10).replace("line 3\n", "cursor 3\ncursor 3b\n");
    repo.write("web/app.js", edited);
    // Cursor's afterFileEdit: the file's absolute path and the strings replaced; no cwd, its workspace roots.
    hook("cursor", {
      conversation_id: "conv-1",
      generation_id: "gen-1",
      hook_event_name: "afterFileEdit",
      cursor_version: "1.7.52",
      workspace_roots: [repo.dir],
      file_path: join(repo.dir, "web/app.js"),
      edits: [{ old_string: "line 3\n", new_string: "cursor 3\ncursor 3b\n" }],
    });
    repo.write("web/app.js", edited.replace("line 9\n", "person 9\n"));
    repo.commitAll("Edit");
    const completed = await callTool(
      agent,
      "complete_task",
      { task_id, status: "success", outcome: { summary: "Edited" } },
      { mustSucceed: true },
    );
    await agent.close();
    expect(completed.text).toContain("lines: +3 −2 (agent 2 · others 1)");
    const [record] = JSON.parse(await fetchText(`${wf.share_url}/export.agent-trace.json`)) as [TraceRecord];
    expect(validRecord(record), JSON.stringify(validRecord.errors)).toBe(true);
    expect(record.tool).toEqual({ name: "cursor", version: "1.7.52" });
    expect(rangesOf(record)).toEqual({ "web/app.js": ["3-4 ai", "10-10 unknown"] });
    agreesWithBlame(repo, record, startCommit);
  });

  it("without hooks every added line is not observed: no range is anyone's, the export says why", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("initial");
    const agent = await connectThroughHelper(server, repo.dir, { cacheHome });
    const tool = async (name: string, args: Structured) => (await callTool(agent, name, args, { mustSucceed: true })).structured;
    const wf = (await tool("start_workflow", { name: "Unobserved" })) as { workflow_id: string; share_url: string };
    const { task_id } = (await tool("start_task", { workflow_id: wf.workflow_id, name: "Edit", goal: "g" })) as { task_id: string };
    repo.write("a.txt", "a\nb\nc\n").commitAll("edit");
    const completed = await callTool(
      agent,
      "complete_task",
      { task_id, status: "success", outcome: { summary: "Edited" } },
      { mustSucceed: true },
    );
    await agent.close();
    expect(completed.text).toContain("lines: +2 −0 (not observed 2)");
    const page = await fetchText(wf.share_url);
    expect(page).toContain("2 not observed (no hook of the agent observed this task): no one is credited with them");
    expect(page).not.toMatch(/<strong>Lines:<\/strong>[^<]*human/);
    const [record] = JSON.parse(await fetchText(`${wf.share_url}/export.agent-trace.json`)) as [TraceRecord];
    expect(validRecord(record), JSON.stringify(validRecord.errors)).toBe(true);
    expect(record.files).toEqual([]);
    expect(record.metadata["dev.waymark"].not_observed).toEqual([
      { path: "a.txt", lines: 2, reason: "no hook of the agent observed this task" },
    ]);
  });
});
