/**
 * The plugin marketplace every endpoint serves (/plugins/waymark.git): real `git` clones it
 * (shallow, as Claude Code does, and whole, then fetches again), it holds the plugin of
 * @waymark/protocol/plugin made for this endpoint and its helper version, it refuses pushes and
 * other services; and the real agent CLIs accept it: `claude plugin marketplace add` + `install`
 * (Claude Code 2.1.328) and `codex plugin marketplace add` + `add` (Codex 0.169.0), when those
 * are installed (test/support/agent-clis, `npm run agent-clis`; CLAUDE_BIN / CODEX_BIN name
 * others), each skipped with its reason otherwise.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { MARKETPLACE_PATH, marketplaceFiles } from "@waymark/protocol/plugin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures.js";
import type { DevServer } from "../support/dev-server.js";
import { failUnderCi, skipLocally, skippedBecause } from "../support/prerequisites.js";
import { sharedDevServer } from "../support/shared-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "client-helper", "package.json"), "utf8")) as { version: string }).version;
let server: DevServer;
let repository: string;

beforeAll(async () => {
  server = sharedDevServer();
  repository = `${server.url}${MARKETPLACE_PATH}`;
}, 180_000);
afterAll(async () => {
  cleanupTempDirs();
});

const GIT_ENV = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1", HOME: tmpdir() };
const git = (args: string[], cwd?: string) => spawnSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8", timeout: 60_000 });

/** Every file of a checkout (the .git folder aside) with its text. */
function files(dir: string, base = dir, out: Record<string, string> = {}): Record<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === ".git") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files(path, base, out);
    else out[path.slice(base.length + 1)] = readFileSync(path, "utf8");
  }
  return out;
}

describe("the marketplace repository, with git", () => {
  it("clones shallow and whole, holds the plugin made for this endpoint and helper version, and fetches again", () => {
    const expected = Object.fromEntries(
      marketplaceFiles({ origin: server.url, mcp: `${server.url}/mcp` }, VERSION).map((file) => [file.path, file.content]),
    );
    const shallow = join(tempDir("waymark-plugin-"), "shallow");
    const cloned = git(["clone", "-q", "--depth", "1", repository, shallow]);
    expect(cloned.status, cloned.stderr).toBe(0);
    expect(files(shallow)).toEqual(expected);
    const whole = join(tempDir("waymark-plugin-"), "whole");
    expect(git(["clone", "-q", repository, whole]).status).toBe(0);
    expect(files(whole)).toEqual(expected);
    expect(git(["fsck", "--strict"], whole).status).toBe(0);
    expect(git(["fetch", "-q"], whole).status).toBe(0);
    expect(git(["rev-parse", "HEAD"], shallow).stdout).toBe(git(["rev-parse", "HEAD"], whole).stdout);
    // The plugin runs this endpoint's helper, version for version.
    const mcp = JSON.parse(expected["plugins/waymark/.mcp.json"] ?? "{}");
    expect(mcp.mcpServers.waymark.args.join(" ")).toContain(`--package=${server.url}/helper/waymark-helper-${VERSION}.tgz`);
    expect(JSON.parse(expected["plugins/waymark/.claude-plugin/plugin.json"] ?? "{}").version).toBe(VERSION);
  });

  it("refuses pushes, other services and objects it does not have", async () => {
    const push = await fetch(`${repository}/info/refs?service=git-receive-pack`);
    expect(push.status).toBe(403);
    expect(await push.text()).toContain("service: only git-upload-pack");
    const work = join(tempDir("waymark-plugin-"), "work");
    expect(git(["clone", "-q", repository, work]).status).toBe(0);
    writeFileSync(join(work, "x.txt"), "x");
    git(["add", "x.txt"], work);
    git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], work);
    expect(git(["push", "-q", "origin", "HEAD:main"], work).status).not.toBe(0);
    const missing = `0032want ${"1".repeat(40)}\n00000009done\n`;
    const answer = await fetch(`${repository}/git-upload-pack`, {
      method: "POST",
      headers: { "Content-Type": "application/x-git-upload-pack-request" },
      body: missing,
    });
    expect(await answer.text()).toContain(`ERR upload-pack: not our ref ${"1".repeat(40)}`);
    const garbage = await fetch(`${repository}/git-upload-pack`, {
      method: "POST",
      headers: { "Content-Type": "application/x-git-upload-pack-request" },
      body: "zzzz",
    });
    expect(garbage.status).toBe(400);
  });
});

/** An agent CLI: CLAUDE_BIN / CODEX_BIN, else the pinned install of test/support/agent-clis, else why not. */
function agentCli(name: "claude" | "codex"): { command: string; args: string[] } | { skip: string } {
  const named = process.env[name === "claude" ? "CLAUDE_BIN" : "CODEX_BIN"];
  if (named) return { command: named, args: [] };
  const cache = join(ROOT, "node_modules", ".cache", "agent-clis");
  for (const prefix of existsSync(cache) ? readdirSync(cache) : []) {
    const candidate =
      name === "claude"
        ? join(cache, prefix, "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
        : join(cache, prefix, "node_modules", "@openai", "codex", "bin", "codex.js");
    if (existsSync(candidate))
      return name === "claude" ? { command: candidate, args: [] } : { command: process.execPath, args: [candidate] };
  }
  return {
    skip: `${name} is not installed here (npm run agent-clis installs it; ${name === "claude" ? "CLAUDE_BIN" : "CODEX_BIN"} names one)`,
  };
}

function agentRun(cli: { command: string; args: string[] }, args: string[], env: Record<string, string>) {
  const run = spawnSync(cli.command, [...cli.args, ...args], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
  return { code: run.status, out: `${run.stdout}${run.stderr}` };
}

/** Why the CLI cannot run here, or null: locally its test is skipped, under CI=true it fails (../support/prerequisites). */
const missing = (cli: ReturnType<typeof agentCli>) => ("skip" in cli ? cli.skip : null);
const claude = agentCli("claude");
const codex = agentCli("codex");

describe("the real agent CLIs accept what the endpoint serves", () => {
  it.skipIf(skipLocally(missing(claude)))(
    `claude plugin marketplace add <endpoint>${MARKETPLACE_PATH}, then install waymark@waymark${skippedBecause(missing(claude))}`,
    () => {
      failUnderCi(missing(claude), "the real Claude Code CLI");
      if ("skip" in claude) return;
      const home = tempDir("waymark-claude-home-");
      const env = { HOME: home, DISABLE_TELEMETRY: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
      const added = agentRun(claude, ["plugin", "marketplace", "add", repository], env);
      expect(added.code, added.out).toBe(0);
      expect(added.out).toContain("Successfully added marketplace: waymark");
      const installed = agentRun(claude, ["plugin", "install", "waymark@waymark"], env);
      expect(installed.code, installed.out).toBe(0);
      const details = agentRun(claude, ["plugin", "details", "waymark@waymark"], env);
      expect(details.out).toContain(`waymark ${VERSION}`);
      expect(details.out).toMatch(/Skills \(1\)\s+waymark/);
      expect(details.out).toMatch(/Hooks \(4\)\s+SessionStart, PostToolUse, PostToolUseFailure, Stop/);
      expect(details.out).toMatch(/MCP servers \(1\)\s+waymark/);
    },
  );

  it.skipIf(skipLocally(missing(codex)))(
    `codex plugin marketplace add <endpoint>${MARKETPLACE_PATH}, then add waymark@waymark${skippedBecause(missing(codex))}`,
    () => {
      failUnderCi(missing(codex), "the real Codex CLI");
      if ("skip" in codex) return;
      const home = tempDir("waymark-codex-home-");
      mkdirSync(join(home, ".codex"));
      writeFileSync(join(home, ".codex", "config.toml"), "");
      const env = { HOME: home, CODEX_HOME: join(home, ".codex") };
      const added = agentRun(codex, ["plugin", "marketplace", "add", repository], env);
      expect(added.code, added.out).toBe(0);
      const installed = agentRun(codex, ["plugin", "add", "waymark@waymark"], env);
      expect(installed.code, installed.out).toBe(0);
      const listed = agentRun(codex, ["plugin", "list"], env);
      expect(listed.out).toMatch(new RegExp(`waymark@waymark\\s+installed, enabled\\s+${VERSION.replaceAll(".", "\\.")}`));
      const root = join(home, ".codex", "plugins", "cache", "waymark", "waymark", VERSION);
      expect(JSON.parse(readFileSync(join(root, ".codex-plugin", "plugin.json"), "utf8")).hooks).toBe("./hooks/codex.json");
    },
  );
});
