/**
 * One endpoint setting for every command: `--url`, else WAYMARK_URL, else the endpoint
 * `waymark init` kept in the user-level config; the base URL and its /mcp are one endpoint.
 * Against a real Streamable HTTP MCP server, through the real bin.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, FakeRemote, SYSTEM_NODE } from "./support.js";

const TOKEN = "endpoint-test-token";
let remote: FakeRemote;
let origin: string;

beforeAll(async () => {
  ensureBuilt();
  remote = new FakeRemote(TOKEN);
  await remote.start();
  origin = new URL(remote.url).origin;
});
afterAll(async () => {
  await remote.stop();
  cleanupTempDirs();
});

type Setup = { repo: Repo; env: Record<string, string> };

function setup(extra: Record<string, string> = {}): Setup {
  const home = tempDir("waymark-home-");
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith("WAYMARK_")) env[key] = value;
  return {
    repo: Repo.init(),
    env: {
      ...env,
      HOME: home,
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_CONFIG_HOME: join(home, ".config"),
      WAYMARK_TOKEN: TOKEN,
      ...extra,
    },
  };
}

/** The bin, without blocking this process (the endpoint runs in it). */
function waymark(s: Setup, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(SYSTEM_NODE, [BIN, ...args], { cwd: s.repo.dir, env: s.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("every command reaches the endpoint from its base URL or its /mcp", () => {
  it.each([
    ["the base URL", () => origin],
    ["the base URL with a trailing slash", () => `${origin}/`],
    ["the MCP URL", () => `${origin}/mcp`],
  ])("waymark summary --url <%s>", async (_case, url) => {
    const run = await waymark(setup(), ["summary", "--workflow", "wf_base", "--url", url()]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("## Workflow wf_base");
  });
});

// Each test runs init and three or four more commands, each a Node process of its own: seconds on
// an idle machine, and past the 60 s default once at load 17 on 2 cores. A hang detector.
describe("without --url, the endpoint init kept is used", { timeout: 120_000 }, () => {
  it("summary, doctor and mcp find it after `waymark init --url <base>`", async () => {
    const s = setup();
    const init = await waymark(s, ["init", "--url", origin, "--agent", "claude"]);
    expect(init.code, init.stderr).toBe(0);
    const summary = await waymark(s, ["summary", "--workflow", "wf_kept"]);
    expect(summary.code, summary.stderr).toBe(0);
    expect(summary.stdout).toContain("## Workflow wf_kept");
    const doctor = await waymark(s, ["doctor"]);
    expect(doctor.stdout).toContain(`ok   token: accepted by ${origin}/mcp`);

    const transport = new StdioClientTransport({ command: SYSTEM_NODE, args: [BIN, "mcp"], cwd: s.repo.dir, env: s.env, stderr: "pipe" });
    const client = new Client({ name: "endpoint-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain("start_task");
    } finally {
      await client.close();
    }
  });

  it("WAYMARK_URL and --url come before it", async () => {
    const s = setup();
    expect((await waymark(s, ["init", "--url", "http://127.0.0.1:9/", "--agent", "claude"])).code).toBe(0);
    s.env.WAYMARK_URL = origin;
    expect((await waymark(s, ["summary", "--workflow", "wf_env"])).stdout).toContain("wf_env");
    delete s.env.WAYMARK_URL;
    expect((await waymark(s, ["summary", "--workflow", "wf_flag", "--url", origin])).stdout).toContain("wf_flag");
  });

  it("a user-level config that is not JSON is named in the error", async () => {
    const s = setup();
    mkdirSync(join(s.env.XDG_CONFIG_HOME as string, "waymark"), { recursive: true });
    writeFileSync(join(s.env.XDG_CONFIG_HOME as string, "waymark", "config.json"), "not json");
    const run = await waymark(s, ["summary", "--workflow", "wf"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${join(s.env.XDG_CONFIG_HOME as string, "waymark", "config.json")} is not a JSON object`);
  });
});

describe("doctor after a Codex-only or Cursor-only init", () => {
  it.each(["codex", "cursor"])(
    "%s: every check passes, and Codex's trust is reported as not checked without codex on PATH",
    async (agent) => {
      const s = setup({ PATH: "/usr/bin:/bin", CODEX_HOME: join(tempDir("waymark-codex-"), ".codex") });
      const init = await waymark(s, ["init", "--url", origin, "--agent", agent, "--global-config"]);
      expect(init.code).toBe(0);
      // What init wrote into the project is committed first, as it says.
      const commit = /^ {2}(git add .* && git commit -m "Set up Waymark")$/m.exec(init.stdout)?.[1] as string;
      expect(spawnSync("sh", ["-c", commit], { cwd: s.repo.dir }).status).toBe(0);
      const doctor = await waymark(s, ["doctor"]);
      expect(doctor.stdout).not.toContain("FAIL");
      expect(doctor.code, doctor.stdout).toBe(0);
      if (agent === "codex") expect(doctor.stdout).toContain("skip Codex trust: not checked (codex is not on PATH)");
      expect(doctor.stdout).toContain("All checks passed.");
    },
  );
});

describe("doctor when the Waymark plugin is enabled and init set the project up too", () => {
  it.each([
    ["claude", ".claude/settings.json", '{"enabledPlugins": {"waymark@waymark": true}}'],
    ["codex", ".codex/config.toml", '[plugins."waymark@waymark"]\nenabled = true\n'],
  ])("%s: says every hook would run twice, and how to keep one", async (agent, file, content) => {
    const home = tempDir("waymark-home-");
    const s = setup({ PATH: "/usr/bin:/bin", HOME: home, CODEX_HOME: join(home, ".codex") });
    mkdirSync(join(home, file, ".."), { recursive: true });
    writeFileSync(join(home, file), content);
    expect((await waymark(s, ["init", "--url", origin, "--agent", agent, "--global-config"])).code).toBe(0);
    const doctor = await waymark(s, ["doctor"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain("the Waymark plugin is enabled for you and this project is also set up by waymark init");
    expect(doctor.stdout).toContain(`fix: keep one: waymark init --remove --agent ${agent}`);
  });
});
