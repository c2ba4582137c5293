import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HOOK_EVENTS, isWaymarkHookCommand } from "@waymark/protocol/agent-config";
import { AGENT_NAMES, agentHooks } from "@waymark/protocol/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS } from "../src/agents/registry.js";
import { agentCalled, cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, closedPort, ensureBuilt, SYSTEM_NODE } from "./support.js";

// The contract every agent of the list keeps, whichever it is: what init writes for it is in place
// for doctor and comes out again, the hooks it installs are recognised as Waymark's, and its hooks
// answer in its own format when they have nothing to say. A new agent gets these checks by being
// in the list (@waymark/protocol/agents).

beforeAll(() => ensureBuilt());
afterAll(cleanupTempDirs);

const URL_ = "https://waymark.example.com";
const ENDPOINT = { origin: URL_, mcp: `${URL_}/mcp` };

/** A project and a user of their own; the helper run as the agents run it, with the payload on stdin. */
function place() {
  const repo = Repo.init();
  const home = tempDir("waymark-home-");
  const env = { PATH: "/usr/bin:/bin", HOME: home, XDG_CACHE_HOME: join(home, ".cache"), XDG_CONFIG_HOME: join(home, ".config") };
  const run = (args: string[], input = "") => {
    const result = spawnSync(SYSTEM_NODE, [BIN, ...args], { cwd: repo.dir, encoding: "utf8", input, env });
    return { code: result.status, stdout: result.stdout };
  };
  return { repo, home, env, run };
}

describe("the agent list", () => {
  it("binds every agent of the list to the helper's module of the same name, in the list's order", () => {
    expect(AGENTS.map((agent) => agent.name)).toEqual(AGENT_NAMES);
    expect(new Set(AGENTS.map((agent) => agent.label)).size).toBe(AGENTS.length);
  });
});

describe.each(AGENT_NAMES)("every agent keeps the contract: %s", (name) => {
  const agent = agentCalled(name);

  it("init writes its files, doctor finds each in place, a second run changes nothing, --remove takes it all out", async () => {
    const { repo, home, env, run } = place();
    // An endpoint that refuses at once: doctor checks the files against it.
    const origin = (await closedPort()).replace(/\/mcp$/, "");
    const init = run(["init", "--url", origin, "--agent", name, "--global-config"]);
    expect(init.code).toBe(0);
    // What init wrote into the project is committed first, as it says.
    const commit = /^ {2}(git add .* && git commit -m "Set up Waymark")$/m.exec(init.stdout)?.[1];
    expect(commit, init.stdout).toBeDefined();
    expect(spawnSync("sh", ["-c", commit as string], { cwd: repo.dir, encoding: "utf8" }).status).toBe(0);
    const ctx = { project: repo.dir, home, env, endpoint: { origin, mcp: `${origin}/mcp` }, version: "0.1.0" };
    const files = agent.setup.files(ctx);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(existsSync(file.path), file.path).toBe(true);
    const doctor = run(["doctor"]).stdout;
    expect(doctor.match(new RegExp(`^ok {3}${agent.label}: .* runs waymark-helper 0\\.1\\.0$`, "gm"))).toHaveLength(files.length);
    expect(doctor).not.toContain(`FAIL ${agent.label}`);
    expect(doctor).toContain("ok   project files: what init wrote into the project is committed (or ignored)");
    expect(run(["init", "--url", origin, "--agent", name, "--global-config"]).stdout).toContain(`${agent.label}: already up to date`);
    expect(run(["init", "--remove", "--agent", name]).code).toBe(0);
    for (const file of files) expect(existsSync(file.path), file.path).toBe(false);
    // What is left is the removal of the files the setup commit added.
    const left = spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: repo.dir, encoding: "utf8" }).stdout;
    expect(left.split("\n").filter((line) => line !== "" && !line.startsWith(" D "))).toEqual([]);
  });

  it("installs hooks that init and doctor recognise as Waymark's, each running for this agent", () => {
    const hooks = agentHooks(agent, ENDPOINT, "0.1.0");
    expect(hooks.length).toBeGreaterThan(0);
    for (const hook of hooks) {
      expect(isWaymarkHookCommand(hook.command), hook.event).toBe(true);
      expect(hook.command.includes(`--agent ${name} `) || hook.command.includes(`/${name}.XXXXXXXXXX`), hook.event).toBe(true);
    }
  });

  it("answers in its own format: nothing to say is its silence, context and reminders are JSON", () => {
    const { repo, run } = place();
    const silence = agent.answers.silence === null ? "" : `${agent.answers.silence}\n`;
    const payload = JSON.stringify({ cwd: repo.dir, workspace_roots: [repo.dir], session_id: "s", hook_event_name: "Stop" });
    for (const event of HOOK_EVENTS) {
      expect(run(["hook", event, "--agent", name], payload), event).toEqual({ code: 0, stdout: silence });
      expect(run(["hook", event, "--agent", name], "{not json"), event).toEqual({ code: 0, stdout: silence });
    }
    expect(JSON.parse(agent.answers.context("Open task: tk_1"))).toBeTruthy();
    expect(JSON.parse(agent.answers.reminder(JSON.stringify('Complete "tk_1"\nwith complete_task')))).toBeTruthy();
  });

  it("spools a tool call's payload without Node, as the file its name starts, and says its silence", () => {
    const { repo, home, env } = place();
    const line = agentHooks(agent, ENDPOINT, "0.1.0").find((hook) => hook.command.includes("/spool"))?.command ?? "";
    const payload = JSON.stringify({ cwd: repo.dir, tool_name: "Write" });
    const result = spawnSync("sh", ["-c", line], { cwd: repo.dir, encoding: "utf8", input: payload, env });
    expect(result.stdout).toBe(agent.answers.silence === null ? "" : `${agent.answers.silence}\n`);
    const spool = join(home, ".cache", "waymark", "spool");
    const names = readdirSync(spool);
    expect(names).toEqual([expect.stringMatching(new RegExp(`^${name}\\.`))]);
    expect(readFileSync(join(spool, names[0] ?? ""), "utf8")).toBe(payload);
  });
});
