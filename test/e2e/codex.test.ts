/**
 * The real Codex CLI (pinned; test/support/agent-clis.ts) through whole sessions, set up as the
 * README says: the user's own `~/.codex/config.toml` (here: a model provider on 127.0.0.1 that
 * scripts the model through the Responses API, test/support/model-server.ts), then `waymark init
 * --agent codex` run through npx from the endpoint's own tarball against a real `wrangler dev`, the
 * token in WAYMARK_TOKEN, then `codex exec` with the trust it needs for the project's hooks; and
 * the same through the plugin (`codex plugin marketplace add` + `add`, no project trust). The
 * record is checked against what happened: the files, the commit, which files Codex's own edit
 * tool touched, the usage Codex wrote to its session file, the stop reminder, the next session's
 * start context. Then the evidence scenario (test/support/evidence-scenario.ts): the agent's
 * lines and a person's in one file, a failing then a passing test run, secrets kept out of the record.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MARKETPLACE_PATH } from "@waymark/protocol/plugin";
import { describe, expect, it } from "vitest";
import {
  type AgentCli,
  type AgentRun,
  agentEnv,
  codexExec,
  codexModelConfig,
  envWithCli,
  runAgent,
  runProcess,
} from "../support/agent-clis.ts";
import {
  callerIndex,
  codexUsage,
  completeTaskTurn,
  expectPlayedThrough,
  expectReminder,
  expectSessionContext,
  expectWorkRecorded,
  GREETING,
  startTaskTurn,
  type ToolName,
  useAgentHarness,
} from "../support/agent-harness.ts";
import { type AgentProject, agentProject, HELPER_VERSION } from "../support/agent-project.ts";
import * as evidence from "../support/evidence-scenario.ts";
import { callTool } from "../support/mcp-client.ts";
import { sumUsage, type Turn } from "../support/model-server.ts";

const MODEL = "gpt-5.5";
const NAMESPACE = "mcp__waymark";
/** Codex calls an MCP tool by its own name, in the server's namespace. */
const CODEX_TOOLS: ToolName = { name: (tool) => tool, namespace: NAMESPACE };
const SESSION_MS = 150_000;

const harness = useAgentHarness("codex", { model: MODEL, latencyMs: 250 });

const usage = codexUsage;

function project(): AgentProject {
  return harness.project as AgentProject;
}

/** `codex exec` in the repository, with the trust each setup has (codexExec). */
function codex(prompt: string, trust: "saved" | "exec" | "plugin" = "saved"): Promise<AgentRun> {
  const p = project();
  return runAgent(harness.cli as AgentCli, codexExec(prompt, trust), {
    cwd: p.repo,
    env: agentEnv(p.home, { SCRIPTED_MODEL_KEY: "scripted-model", WAYMARK_TOKEN: harness.server.token }),
    timeoutMs: SESSION_MS,
  });
}

/**
 * A waymark command in the project as the docs write it (npx from the endpoint's tarball), with
 * the project's user's environment and Codex on PATH (doctor asks Codex itself).
 */
function waymark(args: string[]): Promise<AgentRun> {
  const p = project();
  const env = envWithCli(p.home, harness.cli as AgentCli, "codex", { WAYMARK_TOKEN: harness.server.token });
  return runProcess("npx", ["-y", `--package=${harness.server.url}/helper/waymark-helper-${HELPER_VERSION}.tgz`, "waymark", ...args], {
    cwd: p.repo,
    env,
    timeoutMs: 120_000,
  });
}

/**
 * The session both setups play: find the Waymark tools, a workflow and a task, apply_patch, a shell
 * commit, a stop (reminded), complete_task, a last word.
 */
function greetingScript(): Turn[] {
  return [
    // Codex defers MCP tools behind its tool search, and adds them once their server has started.
    {
      calls: [{ name: "tool_search", kind: "tool_search", input: { query: "waymark workflow task", limit: 8 } }],
      usage: usage(0),
      latencyMs: 1000,
      again: (conversation) => !(conversation.results("tool_search").at(-1) ?? "").includes('"start_task"'),
    },
    {
      calls: [{ name: "start_workflow", namespace: NAMESPACE, input: { name: "Greeting module", description: "A real Codex session" } }],
      usage: usage(1),
    },
    startTaskTurn(CODEX_TOOLS, usage(2)),
    {
      text: "Writing the module.",
      calls: [
        {
          name: "apply_patch",
          kind: "freeform",
          input: [
            "*** Begin Patch",
            "*** Add File: src/greeting.ts",
            '+export const greeting = (name: string): string => "Hello, " + name;',
            "*** Update File: README.md",
            "@@",
            " # Greeter",
            " ",
            "-Says hello.",
            "+Says hello (see src/greeting.ts).",
            "*** End Patch",
            "",
          ].join("\n"),
        },
      ],
      usage: usage(3),
    },
    {
      calls: [
        {
          name: "exec_command",
          input: { cmd: GREETING.commitCommand },
        },
      ],
      usage: usage(4),
    },
    { text: GREETING.stopped, usage: usage(5) },
    // After the stop reminder.
    completeTaskTurn(CODEX_TOOLS, usage(6)),
    { text: "Recorded.", usage: usage(7) },
  ];
}

/**
 * The task's usage is what the model returned while it was open (apply_patch, the shell, the text
 * the stop hook answered, complete_task: its usage written after the call ran, the model streaming
 * on past the call), with the model Codex's session file names, priced from the dated table.
 */
async function expectExactUsage(taskId: string): Promise<void> {
  const open = harness.model.responses.slice(callerIndex(harness.model, "start_task") + 1, callerIndex(harness.model, "complete_task") + 1);
  expect(open.map((response) => response.turn)).toEqual([3, 4, 5, 6]);
  const sum = sumUsage(open);
  // GPT-5.5 per million tokens: $5 input, $0.50 cached input, $30 output (no prompt here is past 272K tokens).
  const cost = (sum.input_tokens * 5 + sum.cache_read_input_tokens * 0.5 + sum.output_tokens * 30) / 1e6;
  const { structured } = await callTool(harness.reader, "get_workflow", { task_id: taskId });
  expect((structured.task as Record<string, unknown>).metrics).toMatchObject({
    input_tokens: sum.input_tokens + sum.cache_read_input_tokens,
    output_tokens: sum.output_tokens,
    model: MODEL,
    cost_usd: Math.round(cost * 1e6) / 1e6,
    // Summed from the rollout by the helper, but no device of the account signed them: the client's claim.
    source: "agent",
  });
}

/** A next session in the repository starts with its workflow in the context the session-start hook injected. */
async function expectNextSessionContext(workflowId: string, trust: "saved" | "plugin" = "saved"): Promise<void> {
  harness.model.play([{ text: "Nothing left to do.", usage: usage(20) }]);
  const next = await codex("Anything left?", trust);
  expect(next.code, next.stderr).toBe(0);
  expectSessionContext(harness.model, workflowId);
}

describe("Codex, set up as the README says, through a whole session", () => {
  let taskId = "";
  let workflowId = "";

  it("waymark init --agent codex, run through npx from the endpoint's tarball, adds Waymark to the user's Codex configuration", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    harness.project = await agentProject(harness.server, {
      agent: "codex",
      cli: harness.cli,
      files: GREETING.files,
      home: { ".codex/config.toml": codexModelConfig(harness.model.url, MODEL) },
    });
    expect(project().init?.code, project().init?.stderr).toBe(0);
    const config = readFileSync(join(project().home, ".codex", "config.toml"), "utf8");
    // The user's own settings stay; the server entry runs this helper from the endpoint.
    expect(config.startsWith(codexModelConfig(harness.model.url, MODEL))).toBe(true);
    expect(config).toContain("[mcp_servers.waymark]");
    expect(config).toContain(`--package=${harness.server.url}/helper/waymark-helper-${HELPER_VERSION}.tgz`);
    const hooks = JSON.parse(readFileSync(join(project().repo, ".codex", "hooks.json"), "utf8")) as { hooks: Record<string, unknown> };
    expect(Object.keys(hooks.hooks)).toEqual(expect.arrayContaining(["SessionStart", "Stop"]));
  }, 200_000);

  it("init names the hooks feature by its current key", (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const p = project();
    expect(`${p.init?.stdout}${readFileSync(join(p.home, ".codex", "config.toml"), "utf8")}`).not.toContain("codex_hooks");
  });

  it("init --trust had Codex trust the project and Waymark's hooks (the headless setup), and doctor passes, asking Codex itself", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const init = project().init?.stdout ?? "";
    expect(init).toContain(`Codex now trusts ${project().repo}`);
    for (const event of ["SessionStart", "PostToolUse", "Stop"])
      expect(init).toMatch(new RegExp(`Codex now trusts Waymark's ${event} hook \\(sha256:`));
    // What init wrote into the project is committed first, as it says.
    const commit = /^ {2}(git add .* && git commit -m "Set up Waymark")$/m.exec(init)?.[1] as string;
    const committed = await runProcess("sh", ["-c", commit], { cwd: project().repo, env: agentEnv(project().home), timeoutMs: 30_000 });
    expect(committed.code, committed.stderr).toBe(0);
    const doctor = await waymark(["doctor"]);
    expect(doctor.stdout).toContain("ok   Codex hooks: Codex trusts Waymark's SessionStart, PostToolUse and Stop hooks");
    expect(doctor.stdout).toContain(`ok   Codex trust: Codex loads ${project().repo}/.codex/`);
    expect(doctor.stdout, doctor.stdout).toContain("All checks passed.");
  }, 200_000);

  it(
    "a session: the Waymark tools, a task, apply_patch, a shell commit, the stop reminder, complete_task",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      harness.model.play(greetingScript());
      const session = await codex("Add a greeting module and record the work in Waymark.");
      ({ workflowId, taskId } = expectPlayedThrough(harness.model, session, CODEX_TOOLS));
    },
    SESSION_MS + 30_000,
  );

  it("the files and the commit are real, and the record names them", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    await expectWorkRecorded(harness, taskId);
  });

  it("the files apply_patch wrote are marked as the agent's own edits; the shell's file is not", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const task = await expectWorkRecorded(harness, taskId);
    expect((task.files_changed as Record<string, unknown>).not_by_agent_tools).toEqual(["build-info.txt"]);
    // The shell call reached the record as an observed command: its exit code read from Codex's session file.
    const commands = task.commands as { runs: { command: string; exit_code: number | null }[] };
    expect(commands.runs.map((run) => [run.command, run.exit_code])).toEqual([[GREETING.commitCommand, 0]]);
  });

  it("line attribution: every line apply_patch added is the agent's, the shell command's file others'", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const task = await expectWorkRecorded(harness, taskId);
    type Count = { path: string; added: number; agent?: number; others?: number; not_observed?: number };
    const files = task.files_changed as { lines: Count[]; line_authors?: { tool?: { name: string } } };
    const counts = (path: string) => files.lines.find((line) => line.path === path) as Count;
    expect(counts("src/greeting.ts")).toMatchObject({ agent: counts("src/greeting.ts").added, others: 0, not_observed: 0 });
    expect(counts("README.md")).toMatchObject({ agent: counts("README.md").added, others: 0, not_observed: 0 });
    expect(counts("build-info.txt")).toMatchObject({ agent: 0, others: counts("build-info.txt").added, not_observed: 0 });
    expect(files.line_authors?.tool?.name).toBe("codex");
  });

  it("usage is exactly what the model returned while the task was open, the response that called complete_task included", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    await expectExactUsage(taskId);
  });

  it("the stop hook reminded Codex of the open task it had worked on, once", (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    expectReminder(harness.model, { id: taskId, workflowId });
  });

  it(
    "the next session starts with the repository's workflow in its context",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      await expectNextSessionContext(workflowId);
    },
    SESSION_MS + 30_000,
  );
});

describe("Codex with the Waymark plugin (the README's shortest path), through a whole session", () => {
  let taskId = "";
  let workflowId = "";

  it("codex plugin marketplace add <endpoint>/plugins/waymark.git, then codex plugin add waymark@waymark", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    harness.project?.remove();
    harness.project = await agentProject(harness.server, {
      agent: "codex",
      files: GREETING.files,
      home: { ".codex/config.toml": codexModelConfig(harness.model.url, MODEL) },
      init: false,
    });
    const env = agentEnv(project().home, { SCRIPTED_MODEL_KEY: "scripted-model", WAYMARK_TOKEN: harness.server.token });
    const run = (args: string[]) => runAgent(harness.cli as AgentCli, args, { cwd: project().repo, env, timeoutMs: 120_000 });
    const added = await run(["plugin", "marketplace", "add", `${harness.server.url}${MARKETPLACE_PATH}`]);
    expect(added.code, `${added.stdout}${added.stderr}`).toBe(0);
    const installed = await run(["plugin", "add", "waymark@waymark"]);
    expect(installed.code, `${installed.stdout}${installed.stderr}`).toBe(0);
    expect(project().git("status", "--porcelain")).toBe("");
  }, 200_000);

  it(
    "a session (the hooks trusted, the project not) records the same: files, the agent's own edits, the commit, exact usage, the stop reminder",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      harness.model.play(greetingScript());
      const session = await codex("Add a greeting module and record the work in Waymark.", "plugin");
      ({ workflowId, taskId } = expectPlayedThrough(harness.model, session, CODEX_TOOLS));
      const task = await expectWorkRecorded(harness, taskId);
      expect((task.files_changed as Record<string, unknown>).not_by_agent_tools).toEqual(["build-info.txt"]);
      await expectExactUsage(taskId);
      expectReminder(harness.model, { id: taskId, workflowId });
    },
    SESSION_MS + 30_000,
  );

  it(
    "the next session starts with the repository's workflow in its context",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      await expectNextSessionContext(workflowId, "plugin");
    },
    SESSION_MS + 30_000,
  );
});

describe("Codex's evidence: its lines and a person's in one file, a failing then a passing test run, no secret stored", () => {
  it(
    "apply_patch (a new file, then an edit), a person's edit, `npm test` failing then passing, a decision, complete_task: page, summary and Agent Trace agree",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      harness.project?.remove();
      // Set up without init --trust: Codex's own headless flags trust the project (saved) and run the hooks.
      harness.project = await agentProject(harness.server, {
        agent: "codex",
        cli: harness.cli,
        files: evidence.EVIDENCE.files,
        home: { ".codex/config.toml": codexModelConfig(harness.model.url, MODEL) },
        initArgs: ["--global-config"],
      });
      expect(project().init?.code, project().init?.stderr).toBe(0);
      await evidence.approveDevice(harness);
      const repo = project().repo;
      const shell = (cmd: string | (() => string)): Turn["calls"] => [
        { name: "exec_command", input: () => ({ cmd: typeof cmd === "string" ? cmd : cmd() }) },
      ];
      harness.model.play([
        {
          calls: [{ name: "tool_search", kind: "tool_search", input: { query: "waymark workflow task decision", limit: 8 } }],
          usage: usage(0),
          latencyMs: 1000,
          again: (conversation) => !(conversation.results("tool_search").at(-1) ?? "").includes('"start_task"'),
        },
        ...evidence.evidenceStartTurns(CODEX_TOOLS, usage),
        { calls: [{ name: "apply_patch", kind: "freeform", input: evidence.CODEX_PATCHES.mean }], usage: usage(3) },
        { calls: shell(evidence.EVIDENCE.failingCommand), usage: usage(4) },
        { calls: [{ name: "apply_patch", kind: "freeform", input: evidence.CODEX_PATCHES.fix }], usage: usage(5) },
        // Asked for its next turn, the model "thinks" while a person edits another line of the file.
        {
          calls: shell(() => {
            evidence.personEdits(repo);
            return evidence.EVIDENCE.passingCommand;
          }),
          usage: usage(6),
        },
        { calls: shell(evidence.EVIDENCE.commitCommand), usage: usage(7) },
        ...evidence.evidenceEndTurns(CODEX_TOOLS, usage, 8),
      ]);
      const session = await codex("Make total() sum its values and record the work in Waymark.", "exec");
      const ids = expectPlayedThrough(harness.model, session, CODEX_TOOLS);
      await evidence.expectEvidence(harness, ids, { tool: "codex", modelId: `openai/${MODEL}` });

      // `codex exec --trust` saved the project's trust in ~/.codex/config.toml, inside Waymark's block,
      // which ends the file: doctor still finds the block current, and init run again keeps the entry.
      const configPath = join(project().home, ".codex", "config.toml");
      const trustEntry = `[projects.${JSON.stringify(repo)}]\ntrust_level = "trusted"`;
      const written = readFileSync(configPath, "utf8");
      expect(written.indexOf(trustEntry)).toBeGreaterThan(written.indexOf("# waymark:begin"));
      expect(written.indexOf(trustEntry)).toBeLessThan(written.indexOf("# waymark:end"));
      const before = await waymark(["doctor"]);
      expect(before.stdout).toContain("ok   Codex: ~/.codex/config.toml runs waymark-helper");
      expect(before.stdout).toContain(`ok   Codex trust: Codex loads ${repo}/.codex/`);
      const again = await waymark(["init", "--url", harness.server.url, "--agent", "codex", "--global-config"]);
      expect(again.code, again.stderr).toBe(0);
      const rewritten = readFileSync(configPath, "utf8");
      expect(rewritten).toContain(trustEntry);
      expect(rewritten.indexOf(trustEntry)).toBeGreaterThan(rewritten.indexOf("# waymark:end"));
      const after = await waymark(["doctor"]);
      expect(after.stdout).toContain("ok   Codex: ~/.codex/config.toml runs waymark-helper");
      expect(after.stdout).toContain(`ok   Codex trust: Codex loads ${repo}/.codex/`);
      // The hooks ran by the bypass flag, which saves no trust: doctor says so, and names the headless way that does.
      expect(after.stdout).toMatch(/FAIL Codex hooks: Codex has not trusted Waymark's/);
      expect(after.stdout).toContain("--agent codex --trust");
    },
    SESSION_MS + 200_000,
  );
});
