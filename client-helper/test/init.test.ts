import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { stopCommand } from "@waymark/protocol/agent-config";
import { CLAUDE } from "@waymark/protocol/agents/claude";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, closedPort, ensureBuilt, SYSTEM_NODE } from "./support.js";

/** The environment references the configurations carry instead of the token (Claude Code and Cursor syntax). */
const CLAUDE_TOKEN_REF = ["$", "{WAYMARK_TOKEN}"].join("");
const CURSOR_TOKEN_REF = ["$", "{env:WAYMARK_TOKEN}"].join("");

const URL_ = "https://waymark.example.com";
/**
 * What every agent's configuration runs: this helper version from the endpoint, as the stdio MCP
 * server; the helper a previous run noted in the cache dir first (no npm start-up), else npx.
 */
const MCP_ARGS = [
  "-c",
  `b=$(cat "${"$"}{XDG_CACHE_HOME:-$HOME/.cache}/waymark/helper-0.1.0.bin" 2>/dev/null) && [ -f "$b" ] && exec node "$b" mcp --url https://waymark.example.com/mcp; ` +
    "exec npx -y --package=https://waymark.example.com/helper/waymark-helper-0.1.0.tgz waymark mcp --url https://waymark.example.com/mcp",
];
const SECRET = "wm_secret_token_that_must_never_be_written";

beforeAll(() => ensureBuilt());
afterAll(cleanupTempDirs);

type Setup = { repo: Repo; home: string; cache: string };

function setup(): Setup {
  return { repo: Repo.init(), home: tempDir("waymark-home-"), cache: tempDir("waymark-cache-") };
}

/** The helper as a child process with a fake home: nothing of the real user's is read or written. */
function waymark(s: Setup, args: string[], extraEnv: Record<string, string> = {}) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith("WAYMARK_") && key !== "CODEX_HOME") env[key] = value;
  const result = spawnSync(SYSTEM_NODE, [BIN, ...args], {
    cwd: s.repo.dir,
    encoding: "utf8",
    env: {
      ...env,
      HOME: s.home,
      XDG_CACHE_HOME: s.cache,
      XDG_CONFIG_HOME: join(s.home, ".config"),
      WAYMARK_TOKEN: SECRET,
      PATH: "/usr/bin:/bin",
      ...extraEnv,
    },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Every file under the given roots, with its bytes (the .git folder aside). */
function snapshotTree(...roots: string[]): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (root: string, dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === ".git") continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        files[`${relative(root, path)}/`] = "";
        walk(root, path);
      } else files[`${root}:${relative(root, path)}`] = readFileSync(path, "utf8");
    }
  };
  for (const root of roots) walk(root, root);
  return files;
}

/** A tree snapshot without the user-level endpoint setting init keeps (~/.config/waymark/config.json). */
function withoutUserConfig(files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(files).filter(([path]) => !/(^|[/:])\.config\/(waymark\/(config\.json|device-key\.json)?)?$/.test(path)),
  );
}

/** A project whose owner already has content in every file init touches, in their own formatting. */
function seedUserFiles(s: Setup): void {
  const w = (path: string, text: string) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
  };
  w(join(s.repo.dir, "CLAUDE.md"), "# House rules\n\nUse tabs.\n");
  w(join(s.repo.dir, "AGENTS.md"), "Agents: run `make test` first."); // no final newline
  w(join(s.repo.dir, ".mcp.json"), '{\n\t"mcpServers": {\n\t\t"other": {\n\t\t\t"command": "other-server"\n\t\t}\n\t}\n}\n');
  w(
    join(s.repo.dir, ".claude", "settings.json"),
    `${JSON.stringify({ permissions: { allow: ["Bash(npm test)"] }, hooks: { PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: "prettier --write" }] }] } }, null, 2)}\n`,
  );
  w(join(s.repo.dir, ".cursor", "hooks.json"), '{"version":1,"hooks":{"stop":[{"command":"./notify.sh"}]}}');
  w(join(s.home, ".codex", "config.toml"), 'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n');
}

/** The file as Codex's TOML reader would take it (Python's tomllib: a duplicate table is an error). */
function toml(path: string): Record<string, unknown> {
  return JSON.parse(
    execFileSync("python3", ["-c", "import json,sys,tomllib; print(json.dumps(tomllib.load(open(sys.argv[1],'rb'))))", path], {
      encoding: "utf8",
    }),
  );
}

describe("waymark init --agent codex: what Codex 0.169 reads", () => {
  it.each([
    ["no [features] table of the user's", 'model = "gpt-5"\n', { hooks: true }, ""],
    ["its own [features] table (left as it is)", "[features]\nweb_search = true\n", { web_search: true }, ""],
    [
      "the deprecated codex_hooks key",
      "[features]\ncodex_hooks = true\n",
      { codex_hooks: true },
      "codex_hooks, the deprecated name of hooks",
    ],
    ["hooks turned off", "[features]\nhooks = false\n", { hooks: false }, "([features] hooks = false): set hooks = true"],
  ])("config.toml with %s stays valid TOML, with the server and the hooks feature", (_case, before, features, said) => {
    const s = setup();
    mkdirSync(join(s.home, ".codex"), { recursive: true });
    writeFileSync(join(s.home, ".codex", "config.toml"), before);
    const run = waymark(s, ["init", "--url", URL_, "--agent", "codex", "--global-config"]);
    expect(run.code, run.stderr).toBe(0);
    const config = toml(join(s.home, ".codex", "config.toml"));
    expect(config.features).toEqual(features);
    expect(config.mcp_servers).toEqual({
      waymark: {
        command: "sh",
        args: MCP_ARGS,
        env_vars: ["WAYMARK_TOKEN", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"],
      },
    });
    if (said) expect(run.stdout).toContain(said);
    // A second run changes nothing; --remove gives the file back.
    expect(waymark(s, ["init", "--url", URL_, "--agent", "codex", "--global-config"]).stdout).toContain("already up to date");
    expect(waymark(s, ["init", "--remove", "--agent", "codex"]).code).toBe(0);
    expect(readFileSync(join(s.home, ".codex", "config.toml"), "utf8")).toBe(before);
  });
});

describe("waymark init asks before it writes a file of the user's outside the project", () => {
  /** init on a terminal (util-linux `script` gives it one), answering `answer` to its question. */
  function onTerminal(s: Setup, answer: string) {
    const env: Record<string, string> = {
      PATH: "/usr/bin:/bin",
      HOME: s.home,
      XDG_CACHE_HOME: s.cache,
      XDG_CONFIG_HOME: join(s.home, ".config"),
      TERM: "dumb",
    };
    const command = [SYSTEM_NODE, BIN, "init", "--url", URL_, "--agent", "codex"].map((word) => `'${word}'`).join(" ");
    return spawnSync("script", ["-qec", command, "/dev/null"], {
      cwd: s.repo.dir,
      encoding: "utf8",
      env,
      input: `${answer}\n`,
      timeout: 60_000,
    });
  }

  it("without a terminal or --global-config: ~/.codex/config.toml stays as it is, init prints the change and how to allow it, doctor says the same", () => {
    const s = setup();
    const path = join(s.home, ".codex", "config.toml");
    mkdirSync(join(s.home, ".codex"), { recursive: true });
    writeFileSync(path, 'model = "gpt-5.5"\n');
    const run = waymark(s, ["init", "--url", URL_, "--agent", "codex"]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path, "utf8")).toBe('model = "gpt-5.5"\n');
    expect(run.stdout).toContain("Codex: wrote AGENTS.md, .codex/hooks.json\n");
    expect(run.stdout).toContain("left ~/.codex/config.toml as it is (outside the project; not asked: no terminal)");
    expect(run.stdout).toContain("run init again with --global-config, or make it yourself:");
    expect(run.stdout).toContain("+[mcp_servers.waymark]");
    const doctor = waymark(s, ["doctor", "--url", "http://127.0.0.1:9"]);
    expect(doctor.stdout).toContain("FAIL Codex: ~/.codex/config.toml: no [mcp_servers.waymark] block");
    expect(doctor.stdout).toContain("fix: run: waymark init --url http://127.0.0.1:9/mcp --agent codex --global-config");
  });

  it.each([
    ["n", false],
    ["y", true],
  ])("on a terminal, answering %s", (answer, written) => {
    const s = setup();
    const path = join(s.home, ".codex", "config.toml");
    mkdirSync(join(s.home, ".codex"), { recursive: true });
    writeFileSync(path, 'model = "gpt-5.5"\n');
    const run = onTerminal(s, answer);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(
      "Codex reads its MCP servers from ~/.codex/config.toml, outside this project. Add Waymark's block to it? [y/N]",
    );
    expect(readFileSync(path, "utf8").includes("[mcp_servers.waymark]")).toBe(written);
    if (!written) expect(run.stdout).toContain("not asked: answered no");
  });

  it("says what to commit, and the command it prints commits exactly init's project files", () => {
    const s = setup();
    const run = waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor"]);
    const commit = /^ {2}(git add .* && git commit -m "Set up Waymark")$/m.exec(run.stdout)?.[1] as string;
    expect(commit).toBe(
      'git add .mcp.json .claude/settings.json CLAUDE.md .cursor/mcp.json .cursor/rules/waymark.mdc .cursor/hooks.json && git commit -m "Set up Waymark"',
    );
    expect(spawnSync("sh", ["-c", commit], { cwd: s.repo.dir }).status).toBe(0);
    expect(s.repo.git("status", "--porcelain", "--untracked-files=all")).toBe("");
    // Run again: nothing left to commit, nothing said about it.
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor"]).stdout).not.toContain("git add");
  });

  it("prints the alias that puts `waymark` on PATH when it is not there (init ran through npx, whose PATH entry lasts one run)", () => {
    const alias = "alias waymark='npx -y --package=https://waymark.example.com/helper/waymark-helper-0.1.0.tgz waymark'";
    const bin = (dir: string) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "waymark"), "#!/bin/sh\n", { mode: 0o755 });
      return dir;
    };
    const npxOnly = bin(join(tempDir("waymark-npm-"), "_npx", "3f2a", "node_modules", ".bin"));
    const s = setup();
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude"], { PATH: `${npxOnly}:/usr/bin:/bin` }).stdout).toContain(alias);
    const installed = bin(tempDir("waymark-global-bin-"));
    expect(waymark(setup(), ["init", "--url", URL_, "--agent", "claude"], { PATH: `${installed}:/usr/bin:/bin` }).stdout).not.toContain(
      alias,
    );
  });
});

describe("waymark init and doctor keep what Codex itself writes into Waymark's block", () => {
  /**
   * What Codex 0.169 writes into its config.toml when Waymark's block ends the file (observed):
   * `codex exec --trust` adds the project's trust, trusting a hook its hash, both as tables it puts
   * before the file's closing comments (inside the block); `codex features enable` a key of [features].
   */
  function codexWrites(config: string, project: string): string {
    return config
      .replace("hooks = true\n", "hooks = true\nweb_search = true\n")
      .replace(
        "# waymark:end",
        `\n[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n\n[hooks.state.${JSON.stringify(`${project}/.codex/hooks.json:stop:0:0`)}]\ntrusted_hash = "sha256:0f"\n# waymark:end`,
      );
  }

  it("init moves Codex's tables out of the block and keeps its [features] key, doctor calls the block current, --remove leaves them", async () => {
    const s = setup();
    const path = join(s.home, ".codex", "config.toml");
    mkdirSync(join(s.home, ".codex"), { recursive: true });
    const before = 'model = "gpt-5.5"\n';
    writeFileSync(path, before);
    const url = (await closedPort()).replace(/\/mcp$/, "");
    expect(waymark(s, ["init", "--url", url, "--agent", "codex", "--global-config"]).code).toBe(0);
    const project = realpathSync(s.repo.dir);
    writeFileSync(path, codexWrites(readFileSync(path, "utf8"), project));
    // Doctor: the block still runs this helper (Codex's entries are not a difference).
    const doctor = waymark(s, ["doctor"]);
    expect(doctor.stdout).toContain("ok   Codex: ~/.codex/config.toml runs waymark-helper 0.1.0");
    // Init again: nothing of Codex's is lost; its tables now follow the block, its feature stays in [features].
    expect(waymark(s, ["init", "--url", url, "--agent", "codex", "--global-config"]).code).toBe(0);
    const config = toml(path) as { projects: unknown; hooks: unknown; features: unknown; mcp_servers: { waymark: unknown } };
    expect(config.projects).toEqual({ [project]: { trust_level: "trusted" } });
    expect(config.hooks).toEqual({ state: { [`${project}/.codex/hooks.json:stop:0:0`]: { trusted_hash: "sha256:0f" } } });
    expect(config.features).toEqual({ hooks: true, web_search: true });
    const text = readFileSync(path, "utf8");
    expect(text.indexOf("[projects.")).toBeGreaterThan(text.indexOf("# waymark:end"));
    expect(waymark(s, ["init", "--url", url, "--agent", "codex", "--global-config"]).stdout).toContain("Codex: already up to date");
    // --remove takes out Waymark's server and hooks feature only.
    expect(waymark(s, ["init", "--remove", "--agent", "codex"]).code).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(
      `${before}\n[features]\nweb_search = true\n\n[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n\n[hooks.state.${JSON.stringify(`${project}/.codex/hooks.json:stop:0:0`)}]\ntrusted_hash = "sha256:0f"\n`,
    );
    expect(toml(path)).toMatchObject({ model: "gpt-5.5", features: { web_search: true } });
  });

  it("--remove straight after Codex wrote into the block keeps Codex's entries too", () => {
    const s = setup();
    const path = join(s.home, ".codex", "config.toml");
    mkdirSync(join(s.home, ".codex"), { recursive: true });
    writeFileSync(path, 'model = "gpt-5.5"\n');
    expect(waymark(s, ["init", "--url", URL_, "--agent", "codex", "--global-config"]).code).toBe(0);
    const project = realpathSync(s.repo.dir);
    writeFileSync(path, codexWrites(readFileSync(path, "utf8"), project));
    expect(waymark(s, ["init", "--remove", "--agent", "codex"]).code).toBe(0);
    expect(toml(path)).toEqual({
      model: "gpt-5.5",
      features: { web_search: true },
      projects: { [project]: { trust_level: "trusted" } },
      hooks: { state: { [`${project}/.codex/hooks.json:stop:0:0`]: { trusted_hash: "sha256:0f" } } },
    });
  });
});

describe("waymark init", () => {
  it("writes each agent's server entry, instructions and hooks, and never the token", () => {
    const s = setup();
    const run = waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("export WAYMARK_TOKEN=");

    const mcp = JSON.parse(readFileSync(join(s.repo.dir, ".mcp.json"), "utf8"));
    expect(mcp.mcpServers.waymark).toEqual({
      type: "stdio",
      command: "sh",
      args: MCP_ARGS,
      env: { WAYMARK_TOKEN: CLAUDE_TOKEN_REF },
    });
    const settings = JSON.parse(readFileSync(join(s.repo.dir, ".claude", "settings.json"), "utf8"));
    expect(Object.keys(settings.hooks)).toEqual(["SessionStart", "PostToolUse", "PostToolUseFailure", "Stop"]);
    expect(settings.hooks.PostToolUse[0]).toMatchObject({
      matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash",
      hooks: [{ type: "command", async: true }],
    });
    // A shell command that exits non-zero reaches Claude Code's PostToolUseFailure: its exit code is evidence too.
    expect(settings.hooks.PostToolUseFailure[0]).toMatchObject({ matcher: "Bash", hooks: [{ type: "command", async: true }] });
    expect(settings.hooks.SessionStart[0].hooks[0].async).toBeUndefined();
    // The stop hook runs the helper only when the stop state it left does not settle it (hooks.test.ts runs that line).
    expect(settings.hooks.Stop[0].hooks[0].command).toBe(
      stopCommand(
        CLAUDE,
        `node "${"$"}{XDG_CACHE_HOME:-$HOME/.cache}/waymark/helper-0.1.0.mjs" hook stop --agent claude --url https://waymark.example.com/mcp 2>/dev/null` +
          " || npx -y --package=https://waymark.example.com/helper/waymark-helper-0.1.0.tgz waymark hook stop --agent claude --url https://waymark.example.com/mcp",
      ),
    );
    const cursor = JSON.parse(readFileSync(join(s.repo.dir, ".cursor", "mcp.json"), "utf8"));
    expect(cursor.mcpServers.waymark.env).toEqual({ WAYMARK_TOKEN: CURSOR_TOKEN_REF });
    const cursorHooks = JSON.parse(readFileSync(join(s.repo.dir, ".cursor", "hooks.json"), "utf8"));
    expect(cursorHooks.version).toBe(1);
    expect(Object.keys(cursorHooks.hooks)).toEqual(["sessionStart", "afterFileEdit", "afterShellExecution", "subagentStop", "stop"]);
    expect(readFileSync(join(s.repo.dir, ".cursor", "rules", "waymark.mdc"), "utf8")).toMatch(
      /^---\ndescription: .+\nalwaysApply: true\n---\n<!-- waymark:begin/,
    );
    const codex = readFileSync(join(s.home, ".codex", "config.toml"), "utf8");
    expect(codex).toContain('[mcp_servers.waymark]\ncommand = "sh"\n');
    expect(codex).toContain('env_vars = ["WAYMARK_TOKEN", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"]');
    expect(codex).toContain("[features]\nhooks = true\n# waymark:end");
    const codexHooks = JSON.parse(readFileSync(join(s.repo.dir, ".codex", "hooks.json"), "utf8"));
    expect(Object.keys(codexHooks.hooks)).toEqual(["SessionStart", "PostToolUse", "Stop"]);
    expect(codexHooks.hooks.PostToolUse[0].matcher).toBe("apply_patch|Bash");
    expect(run.stdout).toContain("Codex runs what a project defines only once you trust it");
    expect(run.stdout).toContain(`[projects.${JSON.stringify(realpathSync(s.repo.dir))}]`);
    expect(run.stdout).toContain("type /hooks");
    for (const file of ["CLAUDE.md", "AGENTS.md"]) expect(readFileSync(join(s.repo.dir, file), "utf8")).toContain("call `complete_task`");

    const everything = JSON.stringify(snapshotTree(s.repo.dir, s.home, s.cache));
    expect(everything).not.toContain(SECRET);
  });

  it("is idempotent: a second run changes nothing and says so", () => {
    const s = setup();
    seedUserFiles(s);
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]).code).toBe(0);
    const after = snapshotTree(s.repo.dir, s.home);
    const again = waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]);
    expect(again.code).toBe(0);
    expect(again.stdout.match(/already up to date/g)).toHaveLength(3);
    expect(snapshotTree(s.repo.dir, s.home)).toEqual(after);
  });

  it("--dry-run prints a unified diff and writes nothing", () => {
    const s = setup();
    seedUserFiles(s);
    const before = snapshotTree(s.repo.dir, s.home, s.cache);
    const run = waymark(s, ["init", "--url", URL_, "--agent", "claude", "--dry-run"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n@@ -1,3 +1,21 @@\n # House rules\n \n Use tabs.\n+\n+<!-- waymark:begin",
    );
    expect(run.stdout).toContain("--- a/.mcp.json\n+++ b/.mcp.json\n");
    expect(run.stdout).toMatch(/^\+\t\t"waymark": \{$/m);
    expect(run.stdout).toContain("would write .mcp.json, .claude/settings.json, CLAUDE.md");
    expect(snapshotTree(s.repo.dir, s.home, s.cache)).toEqual(before);
  });

  it("keeps the user's content and formatting outside its entries", () => {
    const s = setup();
    seedUserFiles(s);
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]).code).toBe(0);
    const mcp = readFileSync(join(s.repo.dir, ".mcp.json"), "utf8");
    expect(mcp).toMatch(/^\{\n\t"mcpServers": \{\n\t\t"other": \{\n\t\t\t"command": "other-server"\n\t\t\},\n\t\t"waymark"/);
    const settings = JSON.parse(readFileSync(join(s.repo.dir, ".claude", "settings.json"), "utf8"));
    expect(settings.permissions).toEqual({ allow: ["Bash(npm test)"] });
    expect(settings.hooks.PostToolUse[0]).toEqual({ matcher: "Write", hooks: [{ type: "command", command: "prettier --write" }] });
    expect(settings.hooks.PostToolUse).toHaveLength(2);
    expect(readFileSync(join(s.repo.dir, "CLAUDE.md"), "utf8")).toMatch(/^# House rules\n\nUse tabs.\n\n<!-- waymark:begin/);
    expect(readFileSync(join(s.home, ".codex", "config.toml"), "utf8")).toMatch(
      /^model = "gpt-5"\n\n\[mcp_servers.docs\]\ncommand = "docs-mcp"\n\n# waymark:begin/,
    );
    expect(JSON.parse(readFileSync(join(s.repo.dir, ".cursor", "hooks.json"), "utf8")).hooks.stop[0]).toEqual({ command: "./notify.sh" });
  });

  it("--remove gives every file back byte for byte, and removes what it created", () => {
    const s = setup();
    seedUserFiles(s);
    const before = snapshotTree(s.repo.dir, s.home);
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]).code).toBe(0);
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]).code).toBe(0);
    const removed = waymark(s, ["init", "--remove"]);
    expect(removed.code, removed.stderr).toBe(0);
    // The user-level endpoint setting and device key stay: they are the user's, shared by every project.
    expect(withoutUserConfig(snapshotTree(s.repo.dir, s.home))).toEqual(before);

    const fresh = setup();
    const empty = snapshotTree(fresh.repo.dir, fresh.home);
    expect(waymark(fresh, ["init", "--url", URL_, "--agent", "claude,cursor,codex", "--global-config"]).code).toBe(0);
    expect(waymark(fresh, ["init", "--remove"]).code).toBe(0);
    expect(withoutUserConfig(snapshotTree(fresh.repo.dir, fresh.home))).toEqual(empty);
  });

  it("--remove after the user edited a file takes out only Waymark's part", () => {
    const s = setup();
    seedUserFiles(s);
    expect(waymark(s, ["init", "--url", URL_, "--agent", "claude,codex", "--global-config"]).code).toBe(0);
    const claudeMd = join(s.repo.dir, "CLAUDE.md");
    writeFileSync(claudeMd, `${readFileSync(claudeMd, "utf8")}\n## Added later\n`);
    const settingsPath = join(s.repo.dir, ".claude", "settings.json");
    const settings = JSON.parse(readFileSync(settingsPath, "utf8"));
    settings.model = "opus";
    writeFileSync(settingsPath, `${JSON.stringify(settings, null, 2)}\n`);
    expect(waymark(s, ["init", "--remove"]).code).toBe(0);
    expect(readFileSync(claudeMd, "utf8")).toBe("# House rules\n\nUse tabs.\n\n## Added later\n");
    expect(JSON.parse(readFileSync(settingsPath, "utf8"))).toEqual({
      permissions: { allow: ["Bash(npm test)"] },
      hooks: { PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: "prettier --write" }] }] },
      model: "opus",
    });
  });

  it("finds the agents present, and says how to name them when there is none", () => {
    const s = setup();
    const none = waymark(s, ["init", "--url", URL_]);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain("--agent claude,cursor,codex");
    mkdirSync(join(s.home, ".cursor"));
    writeFileSync(join(s.repo.dir, "CLAUDE.md"), "# x\n");
    const found = waymark(s, ["init", "--url", URL_]);
    expect(found.code).toBe(0);
    expect(found.stdout).toContain("Claude Code (found CLAUDE.md): wrote");
    expect(found.stdout).toContain("Cursor (found ~/.cursor/): wrote");
    expect(found.stdout).not.toContain("Codex");
    expect(existsSync(join(s.home, ".codex"))).toBe(false);
  });

  it.each([
    [["init"], 2, "no endpoint: pass --url <endpoint>"],
    [["init", "--url", "ftp://x"], 2, "--url must be an http(s) URL"],
    [["init", "--url", "https://user:pw@x.example"], 2, "must not carry credentials"],
    [["init", "--url", URL_, "--agent", "vim"], 2, 'unknown agent "vim"'],
    [["init", "--url", URL_, "--bogus"], 2, "Unknown option '--bogus'"],
  ])("refuses %j with exit code %d", (args, code, message) => {
    const run = waymark(setup(), args);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });

  it("refuses to write over an invalid JSON file or a Waymark table of the user's own, and names it", () => {
    const s = setup();
    writeFileSync(join(s.repo.dir, ".mcp.json"), "{ oops");
    mkdirSync(join(s.home, ".codex"));
    writeFileSync(join(s.home, ".codex", "config.toml"), '[mcp_servers.waymark]\ncommand = "mine"\n');
    const run = waymark(s, ["init", "--url", URL_, "--agent", "claude,codex", "--global-config"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/error: .*\.mcp\.json is not valid JSON/);
    expect(run.stdout).toMatch(/error: .*config\.toml already defines \[mcp_servers.waymark\]/);
    expect(readFileSync(join(s.repo.dir, ".mcp.json"), "utf8")).toBe("{ oops");
    expect(readFileSync(join(s.home, ".codex", "config.toml"), "utf8")).toBe('[mcp_servers.waymark]\ncommand = "mine"\n');
  });

  it("sets up the repository's top level when run in a subdirectory", () => {
    const s = setup();
    mkdirSync(join(s.repo.dir, "packages", "app"), { recursive: true });
    const run = spawnSync(SYSTEM_NODE, [BIN, "init", "--url", URL_, "--agent", "claude"], {
      cwd: join(s.repo.dir, "packages", "app"),
      encoding: "utf8",
      env: { ...process.env, HOME: s.home, XDG_CACHE_HOME: s.cache },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(join(s.repo.dir, ".mcp.json"))).toBe(true);
    expect(existsSync(join(s.repo.dir, "packages", "app", ".mcp.json"))).toBe(false);
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: s.repo.dir, encoding: "utf8" })).toContain(".mcp.json");
  });
});

describe("waymark doctor without a reachable endpoint", () => {
  it("fails the endpoint check with its fix, skips the token, still checks git and the hooks", async () => {
    const s = setup();
    const url = (await closedPort()).replace(/\/mcp$/, "");
    expect(waymark(s, ["init", "--url", url, "--agent", "cursor"]).code).toBe(0);
    const doctor = waymark(s, ["doctor"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`FAIL endpoint: cannot reach ${url}/health`);
    expect(doctor.stdout).toContain("fix: check that the endpoint is up");
    expect(doctor.stdout).toContain("FAIL token: not checked: the endpoint cannot be reached");
    expect(doctor.stdout).toMatch(/ok {3}git: git version/);
    expect(doctor.stdout).toContain("ok   Cursor: .cursor/hooks.json runs waymark-helper 0.1.0");
    expect(doctor.stdout).not.toContain("Claude Code");
  });

  it("with nothing set up, says to run init", () => {
    const s = setup();
    const doctor = waymark(s, ["doctor", "--url", "http://127.0.0.1:9"]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain("FAIL agents: no agent is set up for Waymark in this project");
    expect(doctor.stdout).toContain("fix: run: waymark init --url http://127.0.0.1:9/mcp");
  });
});
