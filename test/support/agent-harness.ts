/**
 * @module test/support/agent-harness
 * What a real-agent test file shares: the pinned CLI (or the reason it cannot run: the file's tests
 * are skipped with it locally and fail with it under CI=true, ./prerequisites.ts), the shared
 * `wrangler dev` with an account of the file's own (./shared-server.ts: it serves this checkout's
 * helper tarball, which starting it built), the scripted model, and a reader (an MCP client of the
 * dev server) to check the record with; started before the file's tests, stopped, with any agent
 * process left and the project made, after them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, expect } from "vitest";
import { type AgentCli, type AgentRun, agentClis, stopAgents } from "./agent-clis.ts";
import { type AgentProject, HELPER_VERSION } from "./agent-project.ts";
import type { DevServer } from "./dev-server.ts";
import { connect, ok } from "./mcp-client.ts";
import { inJson, ModelServer, type ModelServerOptions, type Turn, type Usage } from "./model-server.ts";
import { failUnderCi } from "./prerequisites.ts";
import { sharedDevServer } from "./shared-server.ts";

export interface AgentHarness {
  /** The CLI; undefined when it cannot start here, with the reason in `skip`. */
  cli: AgentCli | undefined;
  skip: string | undefined;
  server: DevServer;
  model: ModelServer;
  reader: Client;
  /** The project a test made, removed after the file's tests. */
  project: AgentProject | undefined;
}

/** Registers the file's beforeAll/afterAll; the fields are set once beforeAll has run. */
export function useAgentHarness(agent: "claude" | "codex", model: ModelServerOptions): AgentHarness {
  const harness = { cli: undefined, skip: undefined, project: undefined } as unknown as AgentHarness;
  beforeAll(async () => {
    const availability = agentClis()[agent];
    harness.cli = availability.cli;
    harness.skip = availability.skip;
    failUnderCi(availability.skip ?? null, `the real ${agent} CLI`);
    if (!availability.cli) return;
    // The agent installs the helper from the server's tarball: starting the shared server built this checkout's.
    harness.server = sharedDevServer();
    harness.model = await new ModelServer(model).start();
    harness.reader = await connect(harness.server, { name: `${agent}-test-reader`, negotiation: "auto" });
  }, 240_000);
  afterAll(async () => {
    stopAgents();
    await harness.reader?.close().catch(() => {});
    await harness.model?.stop();
    await harness.server?.stop();
    harness.project?.remove();
  });
  return harness;
}

// ── what both agents' sessions are checked for ──────────────────────────────

/** The index in `model.responses` of the first response that called `tool`; fails the test when none did. */
export function callerIndex(model: ModelServer, tool: string): number {
  const index = model.callerOf(tool);
  expect(index, `no response called ${tool}`).toBeGreaterThanOrEqual(0);
  return index;
}

/**
 * The stop hook's reminder of the open task: in the request that answers the response after which
 * the agent stopped (GREETING.stopped), and in no request before it.
 */
export function expectReminder(model: ModelServer, task: { id: string; workflowId: string }): void {
  const reminder = inJson(`Waymark: task ${task.id} "${GREETING.task}" in workflow ${task.workflowId}`);
  const stopped = model.responses.findIndex((response) => response.text === GREETING.stopped);
  const reminded = model.mainRequests().map((_, index) => model.requestText(index).includes(reminder));
  expect(reminded.indexOf(true)).toBe(stopped + 1);
  expect(model.requestText(stopped + 1)).toContain("is still open. If its work is done, call complete_task");
}

/**
 * A session's first request carries the session-start hook's context: the workflow, and its state as
 * get_workflow tells it (fresh, or as the helper kept it after the last task: either is the state).
 */
export function expectSessionContext(model: ModelServer, workflowId: string): void {
  const first = model.requestText(0);
  expect(first).toContain("Waymark: work recorded in this repository.");
  expect(first).toContain(workflowId);
  expect(first).toMatch(/Workflow state \(get_workflow(, [^)]+)?\):/);
}

// ── the scenario both agents play ────────────────────────────────────────────

/** The project both agents start from, and what their session makes of it. */
/** The subject of the commit `waymark init` says to make of its project files. */
/** Distinct figures per Codex response (OpenAI's input counts its cached part; see ModelServer), so one counted twice or missed shows in the sums. */
export function codexUsage(n: number): Usage {
  return {
    input_tokens: 2000 + 41 * n,
    output_tokens: 60 + 11 * n,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 4000 + 97 * n,
  };
}

export const SETUP_COMMIT = "Set up Waymark";

export const GREETING = {
  files: { "README.md": "# Greeter\n\nSays hello.\n", "src/app.ts": "export const app = 1;\n" },
  module: 'export const greeting = (name: string): string => "Hello, " + name;\n',
  readme: "# Greeter\n\nSays hello (see src/greeting.ts).\n",
  task: "Add a greeting module",
  commit: "Add a greeting module",
  /** The text of the response after which the agent stops with the task still open. */
  stopped: "The module is written and committed.",
  /** The shell command that writes a file no edit tool touched and commits the work. */
  commitCommand: "printf 'built\\n' > build-info.txt && git add -A && git commit -q -m 'Add a greeting module'",
} as const;

/** An agent's name for a Waymark tool: `name` as it calls it, in Codex's `namespace`. */
export interface ToolName {
  name: (tool: string) => string;
  namespace?: string;
}

/** start_task of the scenario's task, in the workflow start_workflow answered with. */
export function startTaskTurn(tools: ToolName, usage: Usage): Turn {
  return {
    calls: [
      {
        name: tools.name("start_task"),
        namespace: tools.namespace,
        input: (conversation) => ({
          workflow_id: conversation.field(tools.name("start_workflow"), "workflow_id"),
          name: GREETING.task,
          goal: "A greeting module, documented in the README",
          areas: ["src/**", "README.md"],
        }),
      },
    ],
    usage,
  };
}

/**
 * complete_task of the task start_task answered with; the model takes longer for this one, and
 * streams on after the call's block closed (its usage comes last), as a real model may: the
 * agent runs the call before it knows the response's usage.
 */
export function completeTaskTurn(tools: ToolName, usage: Usage): Turn {
  return {
    calls: [
      {
        name: tools.name("complete_task"),
        namespace: tools.namespace,
        input: (conversation) => ({
          task_id: conversation.field(tools.name("start_task"), "task_id"),
          status: "success",
          outcome: { summary: "Added src/greeting.ts and documented it." },
        }),
      },
    ],
    usage,
    latencyMs: 600,
    tailMs: 500,
  };
}

/** The session ran the whole script and nothing past it; its workflow and task ids. */
export function expectPlayedThrough(model: ModelServer, run: AgentRun, tools: ToolName): { workflowId: string; taskId: string } {
  expect(run.timedOut, run.stderr).toBe(false);
  expect(model.errors).toEqual([]);
  expect(run.code, run.stderr).toBe(0);
  expect(model.remaining()).toBe(0);
  // The task ended there: no reminder after complete_task, no request beyond the script.
  expect(model.responses.filter((response) => response.turn === -1)).toEqual([]);
  const workflowId = String(model.inputOf(tools.name("start_task")).workflow_id);
  const taskId = String(model.inputOf(tools.name("complete_task")).task_id);
  expect(workflowId).toMatch(/^wf_/);
  expect(taskId).toMatch(/^tk_/);
  return { workflowId, taskId };
}

/**
 * The session's work is on disk and in git (the new module, the README edit, one commit of both
 * and of a file a shell command wrote), and the task's record names it; the record's task for
 * further checks.
 */
export async function expectWorkRecorded(harness: AgentHarness, taskId: string): Promise<Record<string, unknown>> {
  const project = harness.project as AgentProject;
  expect(readFileSync(join(project.repo, "src", "greeting.ts"), "utf8")).toBe(GREETING.module);
  expect(readFileSync(join(project.repo, "README.md"), "utf8")).toBe(GREETING.readme);
  // The project's first commit, then init's files when the setup committed them as init says, then the agent's.
  const log = project.git("log", "--format=%s").trim().split("\n");
  expect(log).toEqual(log.includes(SETUP_COMMIT) ? [GREETING.commit, SETUP_COMMIT, "initial"] : [GREETING.commit, "initial"]);
  expect(project.git("status", "--porcelain")).toBe("");
  const head = project.git("rev-parse", "HEAD").trim();
  const structured = await ok(harness.reader, "get_workflow", { task_id: taskId });
  const task = structured.task as Record<string, unknown>;
  expect(task.status).toBe("success");
  expect(task.files_changed).toMatchObject({
    added: ["build-info.txt", "src/greeting.ts"],
    modified: ["README.md"],
    deleted: [],
    branch: "main",
    commits: [{ sha: head.slice(0, 7), subject: GREETING.commit }],
    // The helper computed them, but no device of the account is approved: its claim (init made a key nobody approved; the plugin path has none).
    source: {
      kind: "claimed",
      version: HELPER_VERSION,
      reason: expect.stringMatching(/^(not signed by a device|signed by device SHA256:\S{43}, which this account has not approved)$/),
    },
  });
  expect(task.repository).toMatchObject({ branch: "main", end_commit: head });
  return task;
}
