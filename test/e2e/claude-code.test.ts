/**
 * The real Claude Code CLI (pinned; test/support/agent-clis.ts) through whole sessions, set up as
 * the README says against a real `wrangler dev`: `waymark init --agent claude` run through npx from
 * the endpoint's own tarball, and the plugin (`claude plugin marketplace add` + `install`), the
 * token in WAYMARK_TOKEN, the model scripted on 127.0.0.1 (test/support/model-server.ts, 250 ms
 * before each response, complete_task's response streamed on 500 ms past the call). The record is
 * checked against what happened: the files, the commit, which files the agent's own edit tools
 * touched, usage equal to what the model returned, the stop reminder, the next session's context.
 * Then the evidence scenario (test/support/evidence-scenario.ts): the agent's lines and a person's
 * in one file, a failing then a passing test run, secrets kept out of the record.
 */
import { join } from "node:path";
import { MARKETPLACE_PATH } from "@waymark/protocol/plugin";
import { describe, expect, it } from "vitest";
import { type AgentCli, type AgentRun, claudeEnv, claudePrint, runAgent } from "../support/agent-clis.ts";
import {
  callerIndex,
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
import { type AgentProject, agentProject } from "../support/agent-project.ts";
import * as evidence from "../support/evidence-scenario.ts";
import { callTool } from "../support/mcp-client.ts";
import { offeredTools, sumUsage, type Turn, type Usage } from "../support/model-server.ts";

const MODEL = "claude-sonnet-4-5-20250929";
const M = "mcp__waymark__";
/** Claude Code calls an MCP tool by `mcp__<server>__<tool>`. */
const CLAUDE_TOOLS: ToolName = { name: (tool) => `${M}${tool}` };
const SESSION_MS = 150_000;

const harness = useAgentHarness("claude", { model: MODEL, latencyMs: 250 });

/** Distinct figures per response, so a response counted twice or missed shows in the sums. */
function usage(n: number): Usage {
  return {
    input_tokens: 1000 + 37 * n,
    output_tokens: 50 + 7 * n,
    cache_creation_input_tokens: 200 + 3 * n,
    cache_read_input_tokens: 9000 + 311 * n,
  };
}

function project(): AgentProject {
  return harness.project as AgentProject;
}

/** `claude -p` in the repository, as a headless user runs it; `server`: the Waymark MCP server's tool prefix, as allowed. */
function claude(prompt: string, server = "mcp__waymark"): Promise<AgentRun> {
  return runAgent(harness.cli as AgentCli, claudePrint(prompt, [server, "Bash", "Write", "Edit", "Read"]), {
    cwd: project().repo,
    env: claudeEnv(project().home, harness.model.url, { WAYMARK_TOKEN: harness.server.token }),
    timeoutMs: SESSION_MS,
  });
}

/**
 * The session both setups play: find the Waymark tools (named `${prefix}<tool>`), a workflow and a
 * task, Write, Read + Edit, a Bash commit, a stop (reminded), complete_task, a last word.
 */
function greetingScript(prefix: string): Turn[] {
  const tools: ToolName = { name: (tool) => `${prefix}${tool}` };
  const readme = join(project().repo, "README.md");
  return [
    // The agent connects its MCP servers while the first request is out: search until they are there.
    {
      calls: [
        {
          name: "ToolSearch",
          input: { query: `select:${prefix}start_workflow,${prefix}start_task,${prefix}complete_task`, max_results: 5 },
        },
      ],
      usage: usage(0),
      latencyMs: 1000,
      again: (conversation) => !(conversation.results("ToolSearch").at(-1) ?? "").split("\n").includes(`${prefix}start_task`),
    },
    {
      calls: [{ name: `${prefix}start_workflow`, input: { name: "Greeting module", description: "A real Claude Code session" } }],
      usage: usage(1),
    },
    startTaskTurn(tools, usage(2)),
    {
      text: "Writing the module.",
      calls: [
        {
          name: "Write",
          input: {
            file_path: join(project().repo, "src", "greeting.ts"),
            content: GREETING.module,
          },
        },
      ],
      usage: usage(3),
    },
    { calls: [{ name: "Read", input: { file_path: readme } }], usage: usage(4) },
    {
      calls: [{ name: "Edit", input: { file_path: readme, old_string: "Says hello.", new_string: "Says hello (see src/greeting.ts)." } }],
      usage: usage(5),
    },
    {
      calls: [
        {
          name: "Bash",
          input: {
            command: GREETING.commitCommand,
            description: "Commit",
          },
        },
      ],
      usage: usage(6),
    },
    { text: GREETING.stopped, usage: usage(7) },
    // After the stop reminder.
    completeTaskTurn(tools, usage(8)),
    { text: "Recorded.", usage: usage(9) },
  ];
}

/**
 * The task's usage is what the model returned while it was open (Write, Read, Edit, Bash, the text
 * the stop hook answered, complete_task: its response written after the call ran, and streamed on
 * past the call), priced from the dated table.
 */
async function expectExactUsage(prefix: string, taskId: string): Promise<void> {
  const open = harness.model.responses.slice(
    callerIndex(harness.model, `${prefix}start_task`) + 1,
    callerIndex(harness.model, `${prefix}complete_task`) + 1,
  );
  // Write, Read, Edit, Bash, the text the stop hook answered, complete_task.
  expect(open.map((response) => response.turn)).toEqual([3, 4, 5, 6, 7, 8]);
  expect(Math.min(...open.map((response) => response.finishedAt - response.receivedAt))).toBeGreaterThanOrEqual(250);
  const sum = sumUsage(open);
  // Sonnet 4.5 per million tokens: $3 input, $15 output, $3.75 cache writes (5 minutes), $0.30 cache reads.
  const cost =
    (sum.input_tokens * 3 + sum.output_tokens * 15 + sum.cache_creation_input_tokens * 3.75 + sum.cache_read_input_tokens * 0.3) / 1e6;
  const { structured } = await callTool(harness.reader, "get_workflow", { task_id: taskId });
  expect((structured.task as Record<string, unknown>).metrics).toEqual({
    input_tokens: sum.input_tokens + sum.cache_creation_input_tokens + sum.cache_read_input_tokens,
    output_tokens: sum.output_tokens,
    model: MODEL,
    cost_usd: Math.round(cost * 1e6) / 1e6,
    // Summed from the transcript by the helper, but no device of the account signed them: the client's claim.
    source: "agent",
  });
}

/** A next session in the repository starts with its workflow in the context the session-start hook injected. */
async function expectNextSessionContext(workflowId: string, server: string): Promise<void> {
  harness.model.play([{ text: "Nothing left to do.", usage: usage(20) }]);
  const next = await claude("Anything left?", server);
  expect(next.code, next.stderr).toBe(0);
  expect(harness.model.remaining()).toBe(0);
  expectSessionContext(harness.model, workflowId);
}

describe("Claude Code, set up as the README says, through a whole session", () => {
  let taskId = "";
  let workflowId = "";

  it("waymark init --agent claude, run through npx from the endpoint's tarball, sets the project up", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    harness.project = await agentProject(harness.server, {
      agent: "claude",
      files: GREETING.files,
    });
    expect(project().init?.code, project().init?.stderr).toBe(0);
    expect(project().init?.stdout).toContain("Claude Code: wrote .mcp.json, .claude/settings.json, CLAUDE.md");
  }, 200_000);

  it(
    "a session: the Waymark tools, a task, Write, Read + Edit, a Bash commit, the stop reminder, complete_task",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      harness.model.play(greetingScript(M));
      const session = await claude("Add a greeting module and record the work in Waymark.");
      ({ workflowId, taskId } = expectPlayedThrough(harness.model, session, CLAUDE_TOOLS));
    },
    SESSION_MS + 30_000,
  );

  it("the model was offered the Waymark tools, without the helper's own inputs", (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const last = harness.model.mainRequests().at(-1);
    expect(last).toBeDefined();
    const offered = offeredTools(last as NonNullable<typeof last>);
    expect(offered).toEqual(
      expect.arrayContaining([`${M}start_workflow`, `${M}start_task`, `${M}complete_task`, "Write", "Edit", "Read", "Bash"]),
    );
    const tools = (last?.body.tools ?? []) as { name: string; input_schema?: { properties?: Record<string, unknown> } }[];
    const complete = tools.find((tool) => tool.name === `${M}complete_task`);
    expect(Object.keys(complete?.input_schema?.properties ?? {})).toEqual(expect.arrayContaining(["task_id", "status", "outcome"]));
    expect(Object.keys(complete?.input_schema?.properties ?? {})).not.toContain("changes");
  });

  it("the files and the commit are real, and the record names them, marking the file no edit tool touched", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const task = await expectWorkRecorded(harness, taskId);
    // Write and Edit touched the other two (the PostToolUse hook recorded them); a shell command wrote this one.
    expect((task.files_changed as Record<string, unknown>).not_by_agent_tools).toEqual(["build-info.txt"]);
    // The Bash call reached the record as an observed command (its PostToolUse payload, spooled): exit 0, no output.
    const commands = task.commands as { runs: { command: string; exit_code: number | null; kinds: string[] }[] };
    expect(commands.runs.map((run) => [run.command, run.exit_code, run.kinds])).toEqual([[GREETING.commitCommand, 0, []]]);
  });

  it("line attribution: every line Write and Edit added is the agent's, the shell command's file others'", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const task = await expectWorkRecorded(harness, taskId);
    type Count = { path: string; added: number; agent?: number; others?: number; not_observed?: number };
    const files = task.files_changed as { lines: Count[]; line_authors?: { tool?: { name: string; version?: string } } };
    const by = Object.fromEntries(files.lines.map((line) => [line.path, line]));
    const counts = (path: string) => by[path] as Count;
    expect(counts("src/greeting.ts")).toMatchObject({ agent: counts("src/greeting.ts").added, others: 0, not_observed: 0 });
    expect(counts("README.md")).toMatchObject({ agent: counts("README.md").added, others: 0, not_observed: 0 });
    expect(counts("build-info.txt")).toMatchObject({ agent: 0, others: counts("build-info.txt").added, not_observed: 0 });
    expect(files.line_authors?.tool?.name).toBe("claude-code");
  });

  it("usage is exactly what the model returned while the task was open, the response that called complete_task included", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    await expectExactUsage(M, taskId);
  });

  it("the stop hook reminded the agent of the open task it had edited, once", (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    expectReminder(harness.model, { id: taskId, workflowId });
  });

  it(
    "the next session starts with the repository's workflow in its context",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      await expectNextSessionContext(workflowId, "mcp__waymark");
    },
    SESSION_MS + 30_000,
  );
});

describe("Claude Code with the Waymark plugin (the README's shortest path), through a whole session", () => {
  /** Claude Code names a plugin's MCP server `plugin:<plugin>:<server>`, its tools `mcp__plugin_<plugin>_<server>__<tool>`. */
  const P = "mcp__plugin_waymark_waymark__";
  let taskId = "";
  let workflowId = "";

  it("claude plugin marketplace add <endpoint>/plugins/waymark.git, then claude plugin install waymark@waymark", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    harness.project?.remove();
    harness.project = await agentProject(harness.server, { agent: "claude", files: GREETING.files, init: false });
    const env = claudeEnv(project().home, harness.model.url, { WAYMARK_TOKEN: harness.server.token });
    const run = (args: string[]) => runAgent(harness.cli as AgentCli, args, { cwd: project().repo, env, timeoutMs: 120_000 });
    const added = await run(["plugin", "marketplace", "add", `${harness.server.url}${MARKETPLACE_PATH}`]);
    expect(added.code, `${added.stdout}${added.stderr}`).toBe(0);
    const installed = await run(["plugin", "install", "waymark@waymark"]);
    expect(installed.code, `${installed.stdout}${installed.stderr}`).toBe(0);
    // Nothing was written into the project: the plugin lives in the user's Claude Code configuration.
    expect(project().git("status", "--porcelain")).toBe("");
  }, 200_000);

  it(
    "a session records the same: files, the agent's own edits, the commit, exact usage, the stop reminder",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      harness.model.play(greetingScript(P));
      const session = await claude("Add a greeting module and record the work in Waymark.", "mcp__plugin_waymark_waymark");
      const tools: ToolName = { name: (tool) => `${P}${tool}` };
      ({ workflowId, taskId } = expectPlayedThrough(harness.model, session, tools));
      const task = await expectWorkRecorded(harness, taskId);
      expect((task.files_changed as Record<string, unknown>).not_by_agent_tools).toEqual(["build-info.txt"]);
      await expectExactUsage(P, taskId);
      expectReminder(harness.model, { id: taskId, workflowId });
    },
    SESSION_MS + 30_000,
  );

  it(
    "the next session starts with the repository's workflow in its context",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      await expectNextSessionContext(workflowId, "mcp__plugin_waymark_waymark");
    },
    SESSION_MS + 30_000,
  );
});

describe("Claude Code's evidence: its lines and a person's in one file, a failing then a passing test run, no secret stored", () => {
  it(
    "Write, Edit, a person's edit, `npm test` failing then passing, a decision, complete_task: page, summary and Agent Trace agree",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      harness.project?.remove();
      harness.project = await agentProject(harness.server, { agent: "claude", files: evidence.EVIDENCE.files });
      expect(project().init?.code, project().init?.stderr).toBe(0);
      await evidence.approveDevice(harness);
      const repo = project().repo;
      const sum = join(repo, "src", "sum.js");
      const bash = (command: string | (() => string)): Turn["calls"] => [
        { name: "Bash", input: () => ({ command: typeof command === "string" ? command : command(), description: "Run" }) },
      ];
      harness.model.play([
        {
          calls: [
            {
              name: "ToolSearch",
              input: { query: `select:${M}start_workflow,${M}start_task,${M}log_decision,${M}complete_task`, max_results: 5 },
            },
          ],
          usage: usage(0),
          latencyMs: 1000,
          again: (conversation) => !(conversation.results("ToolSearch").at(-1) ?? "").split("\n").includes(`${M}start_task`),
        },
        ...evidence.evidenceStartTurns(CLAUDE_TOOLS, usage),
        {
          calls: [{ name: "Write", input: { file_path: join(repo, "src", "mean.js"), content: evidence.EVIDENCE.mean } }],
          usage: usage(3),
        },
        { calls: bash(evidence.EVIDENCE.failingCommand), usage: usage(4) },
        { calls: [{ name: "Read", input: { file_path: sum } }], usage: usage(5) },
        {
          calls: [
            { name: "Edit", input: { file_path: sum, old_string: evidence.EVIDENCE.brokenLine, new_string: evidence.EVIDENCE.fixedLine } },
          ],
          usage: usage(6),
        },
        // Asked for its next turn, the model "thinks" while a person edits another line of the file.
        {
          calls: bash(() => {
            evidence.personEdits(repo);
            return evidence.EVIDENCE.passingCommand;
          }),
          usage: usage(7),
        },
        { calls: bash(evidence.EVIDENCE.commitCommand), usage: usage(8) },
        ...evidence.evidenceEndTurns(CLAUDE_TOOLS, usage, 9),
      ]);
      const session = await claude("Make total() sum its values and record the work in Waymark.");
      const ids = expectPlayedThrough(harness.model, session, CLAUDE_TOOLS);
      await evidence.expectEvidence(harness, ids, { tool: "claude-code", modelId: `anthropic/${MODEL}` });
    },
    SESSION_MS + 200_000,
  );
});
