/**
 * Every model the pinned agent CLIs use by default has a row in the helper's price table, asked of
 * the CLIs themselves: Claude Code and Codex run headless with no model configured (and Claude
 * Code with its `sonnet` and `haiku` aliases) against the scripted model, which records the model
 * each request names. A new CLI version that changes its default fails here until the table has a
 * row for the new model (a model no row names gets no cost at all).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { priceOf } from "../../client-helper/src/usage/prices.ts";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures.js";
import {
  type AgentCli,
  agentClis,
  agentEnv,
  claudeEnv,
  claudePrint,
  codexModelConfig,
  runAgent,
  stopAgents,
} from "../support/agent-clis.ts";
import { ModelServer } from "../support/model-server.ts";
import { failUnderCi, skipLocally, skippedBecause } from "../support/prerequisites.ts";

const clis = agentClis();
let model: ModelServer;

beforeAll(async () => {
  model = await new ModelServer().start();
});
afterAll(async () => {
  stopAgents();
  await model?.stop();
  cleanupTempDirs();
});

/** The models the agent's requests named while `run` ran (play() starts the record afresh). */
async function modelsAsked(run: () => Promise<{ code: number | null; stderr: string }>): Promise<string[]> {
  model.play([
    { text: "Hello.", usage: { input_tokens: 10, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
  ]);
  const result = await run();
  expect(result.code, result.stderr).toBe(0);
  // Main-loop requests and side requests (titles, token counts) alike: each is billed at its model's price.
  const named = model.requests.flatMap((request) => (typeof request.body.model === "string" ? [request.body.model] : []));
  return [...new Set(named)];
}

describe(`Claude Code's default models have prices${skippedBecause(clis.claude.skip ?? null)}`, () => {
  it.skipIf(skipLocally(clis.claude.skip ?? null)).each([
    ["no model set", []],
    ["--model sonnet", ["--model", "sonnet"]],
    ["--model haiku", ["--model", "haiku"]],
  ])("%s", async (_case, flags) => {
    failUnderCi(clis.claude.skip ?? null, "the real Claude Code CLI");
    const home = tempDir("waymark-default-model-");
    const asked = await modelsAsked(() =>
      runAgent(clis.claude.cli as AgentCli, claudePrint("Say hello.", ["Read"], flags), {
        cwd: home,
        env: claudeEnv(home, model.url),
        timeoutMs: 60_000,
      }),
    );
    expect(asked.length).toBeGreaterThan(0);
    for (const id of asked) expect(priceOf(id), `${id} has no row in client-helper/src/usage/prices.ts`).not.toBeNull();
  });
});

describe(`Codex's default model has a price${skippedBecause(clis.codex.skip ?? null)}`, () => {
  it.skipIf(skipLocally(clis.codex.skip ?? null))("no model set", async () => {
    failUnderCi(clis.codex.skip ?? null, "the real Codex CLI");
    const home = tempDir("waymark-default-model-");
    mkdirSync(join(home, ".codex"), { recursive: true });
    writeFileSync(join(home, ".codex", "config.toml"), codexModelConfig(model.url, null));
    const asked = await modelsAsked(() =>
      runAgent(clis.codex.cli as AgentCli, ["exec", "--skip-git-repo-check", "Say hello."], {
        cwd: home,
        env: agentEnv(home, { SCRIPTED_MODEL_KEY: "scripted-model" }),
        timeoutMs: 60_000,
      }),
    );
    expect(asked.length).toBeGreaterThan(0);
    for (const id of asked) expect(priceOf(id), `${id} has no row in client-helper/src/usage/prices.ts`).not.toBeNull();
  });
});
