/**
 * A pull request made by the real Claude Code CLI (pinned; test/support/agent-clis.ts), followed to
 * main (test/support/agent-pull-request.ts): `waymark init --agent claude` in a clone of a bare
 * origin, through npx from the endpoint's tarball; one session, scripted by the model server, in
 * which Claude Code's own Write and Edit change the files, a person edits a line between two model
 * turns, Bash runs the tests and commits on a branch, complete_task records the task (its helper
 * writes the notes) and Bash pushes the branch and the notes; then `waymark ci` through action.yml
 * as GitHub Actions runs it on the pull request, the merges as the platforms make them, the README's
 * after-merge job, and `waymark blame` and `waymark verify --repo` on main in a fresh clone.
 */
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { type AgentCli, claudeEnv, claudePrint, runAgent } from "../support/agent-clis.ts";
import { expectPlayedThrough, type ToolName, useAgentHarness } from "../support/agent-harness.ts";
import * as pullRequest from "../support/agent-pull-request.ts";
import { EVIDENCE, evidenceStartTurns, personEdits } from "../support/evidence-scenario.ts";
import { cleanupScenarios } from "../support/merge-scenario.ts";
import type { Turn, Usage } from "../support/model-server.ts";

const MODEL = "claude-sonnet-4-5-20250929";
const M = "mcp__waymark__";
const TOOLS: ToolName = { name: (tool) => `${M}${tool}` };
const SESSION_MS = 150_000;

const harness = useAgentHarness("claude", { model: MODEL, latencyMs: 250 });
afterAll(cleanupScenarios);

function usage(n: number): Usage {
  return {
    input_tokens: 1000 + 37 * n,
    output_tokens: 50 + 7 * n,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 9000 + 311 * n,
  };
}

const bash: pullRequest.Shell = (command) => [
  { name: "Bash", input: () => ({ command: typeof command === "string" ? command : command(), description: "Run" }) },
];

function script(repo: string): Turn[] {
  const sum = join(repo, "src", "sum.js");
  return [
    {
      calls: [{ name: "ToolSearch", input: { query: `select:${M}start_workflow,${M}start_task,${M}complete_task`, max_results: 5 } }],
      usage: usage(0),
      latencyMs: 1000,
      again: (conversation) => !(conversation.results("ToolSearch").at(-1) ?? "").split("\n").includes(`${M}start_task`),
    },
    ...evidenceStartTurns(TOOLS, usage),
    { calls: [{ name: "Write", input: { file_path: join(repo, "src", "mean.js"), content: EVIDENCE.mean } }], usage: usage(3) },
    { calls: bash(pullRequest.PULL_REQUEST.branchCommand), usage: usage(4) },
    { calls: bash("npm test"), usage: usage(5) },
    { calls: [{ name: "Read", input: { file_path: sum } }], usage: usage(6) },
    {
      calls: [{ name: "Edit", input: { file_path: sum, old_string: EVIDENCE.brokenLine, new_string: EVIDENCE.fixedLine } }],
      usage: usage(7),
    },
    // Asked for its next turn, the model "thinks" while a person edits another line of the file.
    {
      calls: bash(() => {
        personEdits(repo);
        return "npm test";
      }),
      usage: usage(8),
    },
    { calls: bash(EVIDENCE.commitCommand), usage: usage(9) },
    ...pullRequest.pullRequestEndTurns(TOOLS, bash, usage, 10),
  ];
}

describe("a pull request made by Claude Code survives every merge, and waymark ci checks it", () => {
  let pr: pullRequest.PushedPullRequest | undefined;

  it(
    "one session: a task, Write, a branch, Bash tests, Edit beside a person's edit, complete_task, the branch and notes pushed",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      const project = await pullRequest.teamProject(harness, { agent: "claude" });
      harness.model.play(script(project.repo));
      const session = await runAgent(
        harness.cli as AgentCli,
        claudePrint("Make total() sum its values on a branch, record the work in Waymark and push it.", [
          "mcp__waymark",
          "Bash",
          "Write",
          "Edit",
          "Read",
        ]),
        {
          cwd: project.repo,
          env: claudeEnv(project.home, harness.model.url, { WAYMARK_TOKEN: harness.server.token }),
          timeoutMs: SESSION_MS,
        },
      );
      const ids = expectPlayedThrough(harness.model, session, TOOLS);
      pr = await pullRequest.expectPushed(harness, ids, { tool: "claude-code", modelId: `anthropic/${MODEL}` });
    },
    SESSION_MS + 240_000,
  );

  pullRequest.definePullRequestChecks(harness, () => pr, { tool: "claude-code", model: MODEL });
});
