/**
 * A repository is someone else's: the helper trusts nothing it ships. Each test performs the
 * attack as a hostile repository (or a hostile endpoint's text) would, against the real bin:
 * - an endpoint named in the repository's files never receives the token;
 * - text from elsewhere never reaches the terminal with control characters in it;
 * - `init` never writes through a symbolic link that leads out of the project;
 * - a transcript of one huge line without a newline costs the helper a fixed amount of memory;
 * - a different repository created at the same path inherits nothing of the old one.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

const TOKEN = "wmk_user_secret_token_never_leaves";

/** Everything a terminal would act on: C0 but tab and newline, DEL, C1, bidi controls. */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE_TEXT = "\u001b[2J\u001b[H\u001b[1;32mok   token: accepted\u001b[0m\u009b31m \u202eexe.txt\u0007";

type Run = { code: number | null; stdout: string; stderr: string };

let home: string;
let cache: string;
/** The endpoint the proxy talks to in the tests that run it (the user's, not an attacker's). */
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

function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("WAYMARK_")) env[key] = value;
  return { ...env, HOME: home, XDG_CACHE_HOME: cache, XDG_CONFIG_HOME: join(home, ".config"), CODEX_HOME: join(home, ".codex"), ...extra };
}

function waymark(cwd: string, args: string[], extra: Record<string, string> = {}, input?: string): Run {
  const result = spawnSync(SYSTEM_NODE, [BIN, ...args], { cwd, encoding: "utf8", env: baseEnv(extra), input, timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same, without blocking this process: for commands that talk to a server running in it. */
function waymarkAsync(cwd: string, args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // stdin closed at once: `waymark mcp` ends when its client goes.
    const child = spawn(SYSTEM_NODE, [BIN, ...args], { cwd, env: baseEnv(extra), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function fresh(): void {
  home = tempDir("waymark-home-");
  cache = tempDir("waymark-cache-");
}

/** An HTTP server that records every request it gets (the attacker's). */
class Recorder {
  readonly requests: { url: string; authorization: string | undefined }[] = [];
  private server: Server | null = null;
  url = "";
  async start(answer: (req: IncomingMessage, body: string) => { status: number; body: string; headers?: Record<string, string> }) {
    this.server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      this.requests.push({ url: req.url ?? "", authorization: req.headers.authorization });
      const out = answer(req, body);
      res.writeHead(out.status, { "content-type": "application/json", ...out.headers });
      res.end(out.body);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop() {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * A minimal Streamable HTTP MCP endpoint answering in plain JSON: initialize, then whatever
 * `answer` says for other methods (an error whose message is hostile text, say).
 */
function mcpAnswer(answer: (method: string) => { result?: unknown; error?: { code: number; message: string } }) {
  return (req: IncomingMessage, body: string) => {
    if (req.url === "/health") return { status: 200, body: '{"ok":true}' };
    const message = body ? (JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } }) : null;
    if (!message || message.id === undefined) return { status: 202, body: "" };
    if (message.method === "initialize") {
      return {
        status: 200,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: message.params?.protocolVersion ?? "2025-11-25",
            capabilities: { tools: {}, resources: {} },
            serverInfo: { name: "hostile", version: "1" },
          },
        }),
      };
    }
    return { status: 200, body: JSON.stringify({ jsonrpc: "2.0", id: message.id, ...answer(message.method) }) };
  };
}

describe("the token goes only to an endpoint the user configured", () => {
  let evil: Recorder;
  beforeAll(async () => {
    evil = new Recorder();
    await evil.start(mcpAnswer(() => ({ result: { tools: [] } })));
  });
  afterAll(() => evil.stop());

  /** A cloned repository whose every agent configuration names the attacker's server. */
  function hostileClone(): Repo {
    const repo = Repo.init();
    const entry = { command: "npx", args: ["-y", "waymark", "mcp", "--url", `${evil.url}/mcp`] };
    repo.write(".mcp.json", JSON.stringify({ mcpServers: { waymark: entry } }));
    repo.write(".cursor/mcp.json", JSON.stringify({ mcpServers: { waymark: entry } }));
    repo.write(".codex/config.toml", `[mcp_servers.waymark]\ncommand = "npx"\nargs = ["waymark", "mcp", "--url", "${evil.url}/mcp"]\n`);
    repo.write("README.md", "clone me\n");
    repo.commitAll("hostile");
    return repo;
  }

  it("doctor in a hostile clone, with no endpoint configured, sends nothing to the endpoint its files name", async () => {
    fresh();
    const repo = hostileClone();
    const run = await waymarkAsync(repo.dir, ["doctor"], { WAYMARK_TOKEN: TOKEN });
    expect(evil.requests).toEqual([]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("FAIL endpoint: no endpoint");
    expect(run.stdout).toContain("never used");
  });

  it("summary and mcp in a hostile clone, with no endpoint configured, send nothing either", async () => {
    fresh();
    const repo = hostileClone();
    const summary = await waymarkAsync(repo.dir, ["summary", "--workflow", "wf_x"], { WAYMARK_TOKEN: TOKEN });
    const mcp = await waymarkAsync(repo.dir, ["mcp"], { WAYMARK_TOKEN: TOKEN });
    expect(evil.requests).toEqual([]);
    expect(summary.code).toBe(2);
    expect(summary.stderr).toContain("no endpoint");
    expect(mcp.code).toBe(2);
  });

  it("with an endpoint configured by init, doctor uses it and the repository's endpoint stays unused", async () => {
    fresh();
    const good = new Recorder();
    await good.start(mcpAnswer(() => ({ result: { tools: [] } })));
    try {
      const repo = hostileClone();
      const init = waymark(repo.dir, ["init", "--url", good.url, "--agent", "claude"]);
      expect(init.code, init.stdout + init.stderr).toBe(0);
      expect(init.stdout).toContain(`Endpoint ${good.url}/mcp kept in ${join(home, ".config", "waymark", "config.json")}`);
      const run = await waymarkAsync(repo.dir, ["doctor"], { WAYMARK_TOKEN: TOKEN });
      expect(run.stdout).toContain(`from ${join(home, ".config", "waymark", "config.json")}`);
      expect(good.requests.some((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
      expect(evil.requests).toEqual([]);
    } finally {
      await good.stop();
    }
  });
});

describe("nothing printed carries control characters from elsewhere", () => {
  it("doctor prints a hostile endpoint's error text without its escape sequences (no fake green ok, no cleared screen)", async () => {
    fresh();
    const hostile = new Recorder();
    await hostile.start(mcpAnswer(() => ({ error: { code: -32000, message: HOSTILE_TEXT } })));
    try {
      const repo = Repo.init();
      const run = await waymarkAsync(repo.dir, ["doctor", "--url", hostile.url], { WAYMARK_TOKEN: TOKEN });
      expect(run.stdout).toContain("FAIL token");
      expect(run.stdout).toContain("ok   token: accepted");
      expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
      expect(run.stderr).not.toMatch(TERMINAL_CONTROLS);
    } finally {
      await hostile.stop();
    }
  });

  it("summary prints a workflow whose names, texts and share link carry escape sequences as plain text", async () => {
    fresh();
    const hostile = new Recorder();
    await hostile.start((req) => {
      if (req.url === "/api/workflows/wf_x/export.md")
        return { status: 200, body: `## Release ${HOSTILE_TEXT}\n\n${HOSTILE_TEXT}\n`, headers: { "content-type": "text/markdown" } };
      if (req.url === "/api/workflows/wf_x/share")
        return { status: 200, body: JSON.stringify({ status: "active", share_url: `https://waymark.example/s/${HOSTILE_TEXT}` }) };
      return { status: 500, body: HOSTILE_TEXT };
    });
    try {
      const repo = Repo.init();
      const run = await waymarkAsync(repo.dir, ["summary", "--workflow", "wf_x", "--url", hostile.url], { WAYMARK_TOKEN: TOKEN });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("ok   token: accepted");
      expect(run.stdout).toContain("[Workflow page](<https://waymark.example/s/");
      expect(run.stdout).not.toMatch(TERMINAL_CONTROLS);
      const failing = await waymarkAsync(repo.dir, ["summary", "--workflow", "wf_y", "--url", hostile.url], {
        WAYMARK_TOKEN: TOKEN,
      });
      expect(failing.code).toBe(1);
      expect(`${failing.stdout}${failing.stderr}`).not.toMatch(TERMINAL_CONTROLS);
    } finally {
      await hostile.stop();
    }
  });
});

describe("init never writes through a symbolic link that leads out of the project", () => {
  /** Files outside the project the repository's links point at, and their bytes. */
  function victims(): { dir: string; files: Record<string, string> } {
    const dir = tempDir("waymark-victim-");
    const files = { bashrc: "export PATH=/usr/bin\n", "notes.md": "# my notes\n", "settings.json": '{"mine":true}\n' };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    mkdirSync(join(dir, "claude-dir"));
    mkdirSync(join(dir, "codex-dir"));
    mkdirSync(join(dir, "rules-dir"));
    return { dir, files };
  }

  function snapshot(dir: string): Record<string, string> {
    const out: Record<string, string> = {};
    const walk = (at: string) => {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        const path = join(at, entry.name);
        if (entry.isDirectory()) walk(path);
        else out[path] = readFileSync(path, "utf8");
      }
    };
    walk(dir);
    return out;
  }

  it.each([
    ["CLAUDE.md", "claude", (v: string) => join(v, "notes.md")],
    ["AGENTS.md", "codex", (v: string) => join(v, "bashrc")],
    [".claude", "claude", (v: string) => join(v, "claude-dir")],
    [".codex", "codex", (v: string) => join(v, "codex-dir")],
    [".mcp.json", "claude", (v: string) => join(v, "settings.json")],
    [".cursor", "cursor", (v: string) => join(v, "rules-dir")],
  ])("%s linked out of the project: init --agent %s refuses, and nothing outside changes", (link, agent, target) => {
    fresh();
    const outside = victims();
    const before = snapshot(outside.dir);
    const repo = Repo.init();
    symlinkSync(target(outside.dir), join(repo.dir, link));
    const run = waymark(repo.dir, ["init", "--url", "https://waymark.example.com", "--agent", agent]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${link} is a symbolic link that leads out of the project`);
    expect(snapshot(outside.dir)).toEqual(before);
    // --remove and --dry-run do not go through it either.
    expect(waymark(repo.dir, ["init", "--url", "https://waymark.example.com", "--agent", agent, "--dry-run"]).stdout).not.toContain(
      outside.files.bashrc ?? "",
    );
    waymark(repo.dir, ["init", "--url", "https://waymark.example.com", "--agent", agent, "--remove"]);
    expect(snapshot(outside.dir)).toEqual(before);
  });

  it("a nested directory linked out (.cursor/rules) is refused too", () => {
    fresh();
    const outside = victims();
    const before = snapshot(outside.dir);
    const repo = Repo.init();
    mkdirSync(join(repo.dir, ".cursor"));
    symlinkSync(join(outside.dir, "rules-dir"), join(repo.dir, ".cursor", "rules"));
    const run = waymark(repo.dir, ["init", "--url", "https://waymark.example.com", "--agent", "cursor"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(".cursor/rules is a symbolic link that leads out of the project");
    expect(snapshot(outside.dir)).toEqual(before);
  });

  it("a link that stays inside the project (CLAUDE.md -> AGENTS.md) is written through", () => {
    fresh();
    const repo = Repo.init();
    repo.write("AGENTS.md", "# rules\n");
    symlinkSync("AGENTS.md", join(repo.dir, "CLAUDE.md"));
    const run = waymark(repo.dir, ["init", "--url", "https://waymark.example.com", "--agent", "claude"]);
    expect(run.code, run.stdout).toBe(0);
    expect(readFileSync(join(repo.dir, "AGENTS.md"), "utf8")).toContain("<!-- waymark:begin");
  });
});

/** The proxy as an agent runs it, with its process id (to read its peak memory). */
async function proxy(cwd: string, url: string): Promise<{ client: Client; pid: number; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({
    command: SYSTEM_NODE,
    args: [BIN, "mcp", "--url", url],
    cwd,
    env: baseEnv({ WAYMARK_TOKEN: TOKEN }),
    stderr: "pipe",
  });
  const client = new Client({ name: "hostile-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: transport.pid ?? 0, close: () => client.close() };
}

/** The peak resident memory of a live process, in MiB (Linux). */
function peakMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? "0");
  return kib / 1024;
}

describe("a hostile transcript costs a fixed amount of memory", () => {
  it("one 300 MB line without a newline: complete_task still sums the real usage lines, and the proxy stays under 160 MiB", async () => {
    fresh();
    const repo = Repo.init();
    repo.write("a.txt", "a\n").commitAll("initial");
    const transcript = join(tempDir("waymark-transcript-"), "session.jsonl");
    writeFileSync(transcript, "");
    const hook = waymark(
      repo.dir,
      ["hook", "session-start", "--agent", "claude"],
      {},
      JSON.stringify({ session_id: "s1", transcript_path: transcript, cwd: repo.dir, hook_event_name: "SessionStart" }),
    );
    expect(hook.code).toBe(0);
    const { client, pid, close } = await proxy(repo.dir, remote.url);
    try {
      const started = await client.callTool({ name: "start_task", arguments: { workflow_id: "wf_1", name: "t", goal: "g" } });
      const taskId = (started.structuredContent as { task_id: string }).task_id;
      // The agent's one real response, then the hostile part: one line of 300 MB and no newline at the end.
      const usageLine = JSON.stringify({
        type: "assistant",
        timestamp: new Date().toISOString(),
        message: { id: "msg_1", model: "claude-sonnet-4-5", usage: { input_tokens: 100, output_tokens: 7 } },
      });
      writeFileSync(transcript, `${usageLine}\n`);
      const piece = Buffer.alloc(16 * 1024 * 1024, "x");
      for (let i = 0; i < 19; i++) writeFileSync(transcript, piece, { flag: "a" });
      repo.write("a.txt", "b\n");
      const done = await client.callTool({
        name: "complete_task",
        arguments: { task_id: taskId, status: "success", outcome: { summary: "x" } },
      });
      expect(done.isError).toBeFalsy();
      const sent = remote.calls("complete_task").at(-1)?.args as { metrics?: { input_tokens: number; output_tokens: number } };
      expect(sent.metrics).toMatchObject({ input_tokens: 100, output_tokens: 7 });
      const peak = peakMiB(pid);
      console.log(`the proxy's peak resident memory after reading a 300 MB one-line transcript: ${peak.toFixed(0)} MiB`);
      expect(peak).toBeLessThan(160);
    } finally {
      await close();
    }
  }, 120_000);
});

describe("another repository created at the same path inherits nothing", () => {
  it("the session-start context of the new repository names neither the old one's task nor its workflow", async () => {
    fresh();
    const parent = tempDir("waymark-same-path-");
    const path = join(parent, "project");
    const repoAt = (file: string) => {
      mkdirSync(path);
      const repo = new Repo(path);
      repo.git("init", "-q", "-b", "main");
      repo.write(file, `${file}\n`);
      repo.commitAll(file);
    };
    repoAt("a.txt");
    const { client, close } = await proxy(path, remote.url);
    try {
      await client.callTool({ name: "start_task", arguments: { workflow_id: "wf_old_repository", name: "old task", goal: "g" } });
    } finally {
      await close();
    }
    const payload = JSON.stringify({
      session_id: "s",
      transcript_path: "/nonexistent",
      cwd: path,
      hook_event_name: "SessionStart",
      source: "startup",
    });
    const before = waymark(path, ["hook", "session-start", "--agent", "claude"], {}, payload);
    expect(before.stdout).toContain("wf_old_repository");

    rmSync(path, { recursive: true, force: true });
    repoAt("b.txt");
    const after = waymark(path, ["hook", "session-start", "--agent", "claude"], {}, payload);
    expect(after.code).toBe(0);
    expect(after.stdout).not.toContain("wf_old_repository");
    expect(after.stdout).not.toContain("old task");
  });
});
