/**
 * The real Claude Code (pinned; test/support/agent-clis.ts) does not wait for the Waymark MCP
 * server's connection to the endpoint before its first model request: `waymark mcp` answers the
 * session's opening (the handshake and the lists) from the one it kept from the last session
 * (client-helper/src/proxy/opening.ts) and connects only once a tool is called. A proxy in front
 * of the real `wrangler dev` notes when each request of the helper arrives; the scripted model,
 * when each request of the agent does. Set up as the README says (`waymark init --agent claude`
 * through npx from the endpoint's tarball, the token in WAYMARK_TOKEN).
 *
 * Checked by order, never by duration: with the opening kept, the agent's first model request
 * comes before the helper's first request to the endpoint, and the tools still work; with the
 * kept copy removed (as every session was before), the helper's handshake with the endpoint
 * comes first.
 *
 * The first session starts the helper through npx, cold. On a busy machine that start can
 * outlast Claude Code's bound on its discovery probe, and Claude Code then opens another way
 * (it falls back to `initialize`): that opening is the one kept, and a warm session, which opens
 * with the probe, finds none of its own. So a second, warm, session keeps a warm opening (kept
 * openings are keyed by their first message, several at once), and the third is the one checked.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type AgentCli, claudeEnv, claudePrint, runAgent } from "../support/agent-clis.ts";
import { useAgentHarness } from "../support/agent-harness.ts";
import { type AgentProject, agentProject } from "../support/agent-project.ts";
import { type DroppingProxy, startDroppingProxy } from "../support/dropping-proxy.ts";
import type { Turn } from "../support/model-server.ts";

const M = "mcp__waymark__";
const SESSION_MS = 150_000;
const zero = { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

const harness = useAgentHarness("claude", { model: "claude-sonnet-4-5-20250929", latencyMs: 0 });
let proxy: DroppingProxy;
let project: AgentProject | undefined;

beforeAll(async () => {
  if (!harness.cli) return;
  proxy = await startDroppingProxy(harness.server.url);
  project = await agentProject(proxy, { agent: "claude", files: { "README.md": "# Opening\n" } });
  harness.project = project;
}, 240_000);
afterAll(async () => {
  await proxy?.close();
});

/** A session that finds the Waymark tools, starts a workflow and reads it back; `started` gets the workflow's id. */
function script(name: string, started: (id: string) => void): Turn[] {
  return [
    {
      calls: [{ name: "ToolSearch", input: { query: `select:${M}start_workflow,${M}get_workflow`, max_results: 5 } }],
      usage: zero,
      again: (conversation) => !(conversation.results("ToolSearch").at(-1) ?? "").split("\n").includes(`${M}get_workflow`),
    },
    { calls: [{ name: `${M}start_workflow`, input: { name, force_new: true } }], usage: zero },
    {
      calls: [
        {
          name: `${M}get_workflow`,
          input: (conversation) => {
            const id = conversation.field(`${M}start_workflow`, "workflow_id");
            started(id);
            return { workflow_id: id };
          },
        },
      ],
      usage: zero,
    },
    { text: "Started.", usage: zero },
  ];
}

type Session = { firstModelRequestAt: number; firstHandshakeAt: number | undefined; workflowStarted: boolean };

/** One `claude -p` session: when its first model request came, when its helper's first handshake with the endpoint did. */
async function session(name: string): Promise<Session> {
  const agent = project as AgentProject;
  const sentBefore = proxy.requests().length;
  let workflowId = "";
  harness.model.play(
    script(name, (id) => {
      workflowId = id;
    }),
  );
  const run = await runAgent(harness.cli as AgentCli, claudePrint("Start a workflow.", ["mcp__waymark"]), {
    cwd: agent.repo,
    env: claudeEnv(agent.home, harness.model.url, { WAYMARK_TOKEN: harness.server.token }),
    timeoutMs: SESSION_MS,
  });
  expect(run.code, run.stderr).toBe(0);
  expect(harness.model.errors).toEqual([]);
  expect(harness.model.remaining()).toBe(0);
  const handshake = proxy
    .requests()
    .slice(sentBefore)
    .find((request) => request.method === "POST" && (JSON.parse(request.body) as { method?: string }).method === "initialize");
  // The workflow the agent started, read back through the agent's own get_workflow call.
  const readBack = harness.model.requestText(harness.model.mainRequests().length - 1);
  return {
    firstModelRequestAt: harness.model.mainRequests()[0]?.at ?? Number.NaN,
    firstHandshakeAt: handshake?.at,
    workflowStarted: /^wf_[a-z2-7]{20}$/.test(workflowId) && readBack.includes(name),
  };
}

/** The methods of each kept opening, in order: what a failed check prints. */
function keptOpeningMethods(): string[][] {
  return keptOpenings().flatMap((text) =>
    (JSON.parse(text) as { openings: { sent: string }[][] }).openings.map((opening) =>
      opening.map((exchange) => String((JSON.parse(exchange.sent) as { method?: unknown }).method)),
    ),
  );
}

function keptOpenings(): string[] {
  const dir = join((project as AgentProject).home, ".cache", "waymark", "openings");
  return existsSync(dir) ? readdirSync(dir).map((file) => readFileSync(join(dir, file), "utf8")) : [];
}

it(
  "with the last session's opening kept, Claude Code's first model request comes before the helper reaches the endpoint, and the tools work",
  async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    expect(project?.init?.code, project?.init?.stderr).toBe(0);
    // The first session has nothing kept: it keeps its opening (the token never in it).
    const first = await session("First session");
    expect(first.workflowStarted).toBe(true);
    const kept = keptOpenings();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toContain("tools/list");
    expect(kept[0]).toContain("start_workflow");
    expect(kept[0]).not.toContain(harness.server.token);

    const warm = await session("Second session");
    expect(warm.workflowStarted).toBe(true);
    const openings = keptOpeningMethods();

    const next = await session("Third session");
    expect(next.workflowStarted).toBe(true);
    // The helper did reach the endpoint (for the tool call), after the agent's first request went out.
    expect(next.firstHandshakeAt).toBeDefined();
    expect(next.firstModelRequestAt, `openings kept before the session: ${JSON.stringify(openings)}`).toBeLessThan(
      next.firstHandshakeAt as number,
    );
  },
  4 * SESSION_MS,
);

it(
  "without a kept opening (as before), the helper's handshake with the endpoint comes before Claude Code's first model request",
  async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    rmSync(join((project as AgentProject).home, ".cache", "waymark", "openings"), { recursive: true, force: true });
    const cold = await session("Cold session");
    expect(cold.workflowStarted).toBe(true);
    expect(cold.firstHandshakeAt).toBeDefined();
    expect(cold.firstHandshakeAt as number).toBeLessThan(cold.firstModelRequestAt);
    expect(keptOpenings()).toHaveLength(1);
  },
  2 * SESSION_MS,
);
