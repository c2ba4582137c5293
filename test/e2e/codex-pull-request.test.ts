/**
 * A pull request made by the real Codex CLI (pinned; test/support/agent-clis.ts), followed to main
 * (test/support/agent-pull-request.ts): the user's own `~/.codex/config.toml` (a model provider on
 * 127.0.0.1 the model server scripts), then `waymark init --agent codex` in a clone of a bare
 * origin, through npx from the endpoint's tarball; one `codex exec` session in which Codex's own
 * apply_patch changes the files, a person edits a line between two model turns, its shell runs the
 * tests and commits on a branch, complete_task records the task (its helper writes the notes) and
 * the shell pushes the branch and the notes; then `waymark ci` through action.yml as GitHub Actions
 * runs it on the pull request, the merges as the platforms make them, the README's after-merge job,
 * and `waymark blame` and `waymark verify --repo` on main in a fresh clone.
 */
import { afterAll, describe, it } from "vitest";
import { type AgentCli, agentEnv, codexExec, codexModelConfig, runAgent } from "../support/agent-clis.ts";
import { codexUsage, expectPlayedThrough, type ToolName, useAgentHarness } from "../support/agent-harness.ts";
import * as pullRequest from "../support/agent-pull-request.ts";
import { CODEX_PATCHES, EVIDENCE, evidenceStartTurns, personEdits } from "../support/evidence-scenario.ts";
import { cleanupScenarios } from "../support/merge-scenario.ts";
import type { Turn } from "../support/model-server.ts";

const MODEL = "gpt-5.5";
const NAMESPACE = "mcp__waymark";
const TOOLS: ToolName = { name: (tool) => tool, namespace: NAMESPACE };
const SESSION_MS = 150_000;

const harness = useAgentHarness("codex", { model: MODEL, latencyMs: 250 });
afterAll(cleanupScenarios);

const usage = codexUsage;

const shell: pullRequest.Shell = (cmd) => [{ name: "exec_command", input: () => ({ cmd: typeof cmd === "string" ? cmd : cmd() }) }];

function script(repo: string): Turn[] {
  return [
    {
      calls: [{ name: "tool_search", kind: "tool_search", input: { query: "waymark workflow task", limit: 8 } }],
      usage: usage(0),
      latencyMs: 1000,
      again: (conversation) => !(conversation.results("tool_search").at(-1) ?? "").includes('"start_task"'),
    },
    ...evidenceStartTurns(TOOLS, usage),
    { calls: [{ name: "apply_patch", kind: "freeform", input: CODEX_PATCHES.mean }], usage: usage(3) },
    { calls: shell(pullRequest.PULL_REQUEST.branchCommand), usage: usage(4) },
    { calls: shell("npm test"), usage: usage(5) },
    { calls: [{ name: "apply_patch", kind: "freeform", input: CODEX_PATCHES.fix }], usage: usage(6) },
    // Asked for its next turn, the model "thinks" while a person edits another line of the file.
    {
      calls: shell(() => {
        personEdits(repo);
        return "npm test";
      }),
      usage: usage(7),
    },
    { calls: shell(EVIDENCE.commitCommand), usage: usage(8) },
    ...pullRequest.pullRequestEndTurns(TOOLS, shell, usage, 9),
  ];
}

describe("a pull request made by Codex survives every merge, and waymark ci checks it", () => {
  let pr: pullRequest.PushedPullRequest | undefined;

  it(
    "one session: a task, apply_patch, a branch, shell tests, apply_patch beside a person's edit, complete_task, the branch and notes pushed",
    async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      const project = await pullRequest.teamProject(harness, {
        agent: "codex",
        home: { ".codex/config.toml": codexModelConfig(harness.model.url, MODEL) },
      });
      harness.model.play(script(project.repo));
      // The project's hooks trusted, run without the interactive review; full access, as the agent commits and pushes.
      const session = await runAgent(
        harness.cli as AgentCli,
        codexExec("Make total() sum its values on a branch, record the work in Waymark and push it.", "exec"),
        {
          cwd: project.repo,
          env: agentEnv(project.home, { SCRIPTED_MODEL_KEY: "scripted-model", WAYMARK_TOKEN: harness.server.token }),
          timeoutMs: SESSION_MS,
        },
      );
      const ids = expectPlayedThrough(harness.model, session, TOOLS);
      pr = await pullRequest.expectPushed(harness, ids, { tool: "codex", modelId: `openai/${MODEL}` });
    },
    SESSION_MS + 240_000,
  );

  pullRequest.definePullRequestChecks(harness, () => pr, { tool: "codex", model: MODEL });
});
