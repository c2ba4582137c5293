/**
 * MCP agents against a running local dev server, shared by the benches and the bounded
 * end-to-end tests: an agent configured with the real helper, timed tool calls, whole agent
 * workflows that remember every acknowledged write, a bounded promise pool, and the two load
 * shapes (many agents with their own workflows; many writers on one workflow). Connecting and
 * calling a tool are test/support/mcp-client.ts's.
 *
 * Relative imports carry their `.ts` extension so Node's type stripping can run the benches
 * that import this file; every request goes to the `url` it is given (a local dev server).
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { BIN, SYSTEM_NODE } from "../../client-helper/test/support.ts";
import { type CallableClient, connect, type McpTarget, ok } from "./mcp-client.ts";
import { checkConsistency, exportView, readEvents, verifyWorkflow } from "./readback.ts";
import { Recorder, type Summary, summarize } from "./stats.ts";

// ── MCP ──────────────────────────────────────────────────────────────────────

export interface HelperOptions {
  /** XDG_CACHE_HOME for the helper (its task records); the environment's when absent. */
  cacheHome?: string;
  name?: string;
  /** Node and bin to run: the machine's own Node and this checkout's build by default (the benches run an old build's too). */
  node?: string;
  bin?: string;
  /** More `waymark mcp` flags, e.g. `--timeout`. */
  args?: string[];
  /** Drops the helper's stderr. */
  quiet?: boolean;
  /** More environment, e.g. XDG_CONFIG_HOME where its device key lives. */
  env?: Record<string, string>;
}

/** An agent configured with the real helper (`waymark mcp` over stdio) in `dir`, forwarding to a running `wrangler dev`. */
export async function connectThroughHelper(target: McpTarget, dir: string, options: HelperOptions = {}): Promise<Client> {
  const agent = new Client({ name: options.name ?? "agent", version: "1.0.0" });
  const env: Record<string, string> = { ...(process.env as Record<string, string>), WAYMARK_TOKEN: target.token };
  if (options.cacheHome !== undefined) env.XDG_CACHE_HOME = options.cacheHome;
  Object.assign(env, options.env);
  await agent.connect(
    new StdioClientTransport({
      command: options.node ?? SYSTEM_NODE,
      args: [options.bin ?? BIN, "mcp", "--url", `${target.url}/mcp`, "--dir", dir, ...(options.args ?? [])],
      env,
      ...(options.quiet ? { stderr: "ignore" as const } : {}),
    }),
  );
  return agent;
}

/**
 * A write token of the agent's own, made by the owner with the Tokens page's API (`POST
 * /api/tokens`), as the README sets an agent up: the agent and the owner signed in to the page are
 * then different credentials (a page session signed in with the agent's is the agent's).
 */
export async function agentWriteToken(owner: McpTarget, name = "the agent"): Promise<{ id: string; token: string }> {
  const response = await fetch(`${owner.url}/api/tokens`, {
    method: "POST",
    headers: { Authorization: `Bearer ${owner.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name, scopes: ["read", "write"] }),
  });
  if (response.status !== 201) throw new Error(`POST /api/tokens answered ${response.status}: ${await response.text()}`);
  const made = (await response.json()) as { id: string; token: string };
  return { id: made.id, token: made.token };
}

/** Calls a tool that must succeed, timing it into `recorder` under the tool's name. */
export async function timed(
  client: CallableClient,
  recorder: Recorder | null,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const started = performance.now();
  try {
    return await ok(client, name, args);
  } finally {
    recorder?.add(name, performance.now() - started);
  }
}

export async function healthRoundTrip(target: McpTarget): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${target.url}/health`);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`/health answered ${response.status}`);
  return performance.now() - started;
}

// ── agent workflows that remember what was acknowledged ─────────────────────

/** Ids the server acknowledged; every one must be readable afterwards. */
export interface Acked {
  workflowId: string;
  shareUrl: string;
  tasks: string[];
  decisions: string[];
  issues: string[];
  milestones: string[];
  /** task id → number of files its complete_task sent (all distinct, all added). */
  completed: Map<string, number>;
  workflowCompleted: boolean;
}

export function newAcked(workflowId: string, shareUrl: string): Acked {
  return { workflowId, shareUrl, tasks: [], decisions: [], issues: [], milestones: [], completed: new Map(), workflowCompleted: false };
}

const blob = (seed: string) => {
  let hash = 0x811c9dc5;
  for (const ch of seed) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, "0").repeat(5);
};

/** Helper-style checksum changes: `files` new files under a path unique to the task. */
export function checksumChanges(prefix: string, files: number) {
  return {
    type: "checksum",
    transitions: Array.from({ length: files }, (_, k) => ({
      path: `${prefix}/file-${k}.ts`,
      before: null,
      after: { mode: "100644", blob: blob(`${prefix}/${k}`) },
    })),
  };
}

export interface AgentOptions {
  label: string;
  tasks: number;
  filesPerTask?: number;
  recorder?: Recorder | null;
  /** Called with every acknowledged write as soon as it is acknowledged (the faults bench keeps them across a crash). */
  onAcked?: (acked: Acked) => void;
}

/**
 * One agent's whole workflow: start_workflow; per task start_task, log_decision, log_issue,
 * two log_milestone, complete_task with files; get_workflow; complete_workflow.
 * 3 + 6 × tasks calls. Throws on the first failure, with `acked` holding what was acknowledged.
 */
export async function runAgentWorkflow(client: CallableClient, options: AgentOptions, acked?: { current: Acked | null }): Promise<Acked> {
  const rec = options.recorder ?? null;
  const files = options.filesPerTask ?? 2;
  const wf = await timed(client, rec, "start_workflow", {
    name: `Load ${options.label}`,
    description: "bench workflow",
    plan: [{ step: "1", goal: "work" }],
  });
  if (wf.resumed || typeof wf.share_url !== "string") {
    throw new Error(`start_workflow "Load ${options.label}" created no workflow (resumed: ${String(wf.resumed)})`);
  }
  const state = newAcked(String(wf.workflow_id), wf.share_url);
  if (acked) acked.current = state;
  options.onAcked?.(state);
  for (let t = 0; t < options.tasks; t++) {
    const task = await timed(client, rec, "start_task", {
      workflow_id: state.workflowId,
      name: `Task ${t}`,
      goal: `Goal ${t}`,
      areas: [`src/${options.label}/**`],
    });
    const taskId = String(task.task_id);
    state.tasks.push(taskId);
    const decision = await timed(client, rec, "log_decision", {
      task_id: taskId,
      category: "trade_off",
      question: `Which way for ${t}?`,
      options_considered: ["left", "right"],
      chosen: "left",
      reasoning: "shorter",
    });
    state.decisions.push(String(decision.id));
    const issue = await timed(client, rec, "log_issue", {
      task_id: taskId,
      type: "bug_encountered",
      description: `Bug in ${t}`,
      resolution: "fixed",
      requires_human_review: t % 2 === 0,
    });
    state.issues.push(String(issue.id));
    for (const progress of [30, 70]) {
      const ms = await timed(client, rec, "log_milestone", { task_id: taskId, message: `Task ${t} at ${progress}%`, progress });
      state.milestones.push(String(ms.id));
    }
    await timed(client, rec, "complete_task", {
      task_id: taskId,
      status: "success",
      outcome: { summary: `Task ${t} done`, next_steps: ["next"] },
      changes: checksumChanges(`src/${options.label}/t${t}`, files),
    });
    state.completed.set(taskId, files);
  }
  await timed(client, rec, "get_workflow", { workflow_id: state.workflowId });
  await timed(client, rec, "complete_workflow", { workflow_id: state.workflowId, status: "success", summary: "all done" });
  state.workflowCompleted = true;
  return state;
}

/** Runs `count` jobs with at most `width` at a time. */
export async function pool<T>(count: number, width: number, job: (index: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(count);
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, count) }, async () => {
    for (let i = next++; i < count; i = next++) {
      try {
        results[i] = { status: "fulfilled", value: await job(i) };
      } catch (reason) {
        results[i] = { status: "rejected", reason };
      }
    }
  });
  await Promise.all(lanes);
  return results;
}

// ── the two load shapes (bench/load.ts at full size, the load A/B of npm run bench, test/e2e/load.test.ts smaller) ──

export interface AgentsResult {
  agents: number;
  workflows: number;
  calls: number;
  seconds: number;
  latency: Summary;
  /** Every call's latency, ms (to pool rounds). */
  samples: number[];
  byTool: Record<string, Summary>;
  errors: string[];
  problems: string[];
}

export interface WritersResult {
  writers: number;
  calls: number;
  seconds: number;
  events: number;
  latency: Summary;
  errors: string[];
  problems: string[];
}

/** An agent's MCP client (an SDK v2 client with version negotiation unless the caller brings its own: bench/lib/wire-client.ts). */
export type AgentConnect = (target: McpTarget, index: number) => Promise<CallableClient & { close(): Promise<void> }>;

const sdkAgent: AgentConnect = (target) => connect(target, { negotiation: "auto" });

export async function loadAgents(
  target: McpTarget,
  options: {
    agents: number;
    workflows: number;
    tasks: number;
    connectAgent?: AgentConnect;
    /** Called once every agent is done, before the workflows are read back (a bench stops its CPU count there). */
    afterCalls?: () => void;
  },
): Promise<AgentsResult> {
  const recorder = new Recorder();
  const started = performance.now();
  const done: Acked[] = [];
  // Names unique to this call: a workflow an earlier round left open must not be resumed by name.
  const round = Math.random().toString(36).slice(2, 8);
  const results = await pool(options.agents, options.agents, async (i) => {
    const client = await (options.connectAgent ?? sdkAgent)(target, i);
    for (let w = 0; w < options.workflows; w++) {
      done.push(await runAgentWorkflow(client, { label: `${round}-agent${i}-w${w}`, tasks: options.tasks, recorder }));
    }
    await client.close();
  });
  const seconds = (performance.now() - started) / 1000;
  options.afterCalls?.();
  const errors = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
  const problems: string[] = [];
  for (const acked of done) problems.push(...(await verifyWorkflow(acked)));
  return {
    agents: options.agents,
    workflows: options.workflows,
    calls: recorder.all().length,
    seconds,
    latency: summarize(recorder.all()),
    samples: recorder.all(),
    byTool: recorder.summaries(),
    errors,
    problems,
  };
}

export async function loadWriters(target: McpTarget, options: { writers: number; writes: number }): Promise<WritersResult> {
  const owner = await connect(target, { negotiation: "auto" });
  const wf = await timed(owner, null, "start_workflow", { name: "Many writers" });
  const acked = newAcked(String(wf.workflow_id), String(wf.share_url));
  const shared: string[] = [];
  for (const name of ["Shared A", "Shared B"]) {
    shared.push(
      String((await timed(owner, null, "start_task", { workflow_id: acked.workflowId, name, goal: "take many writes" })).task_id),
    );
  }
  acked.tasks.push(...shared);
  const recorder = new Recorder();
  const started = performance.now();
  const results = await pool(options.writers, options.writers, async (w) => {
    const client = await connect(target, { negotiation: "auto" });
    for (let i = 0; i < options.writes; i++) {
      const taskId = shared[(w + i) % 2] as string;
      if (i % 4 === 3) {
        const d = await timed(client, recorder, "log_decision", {
          task_id: taskId,
          category: "trade_off",
          question: `w${w} #${i}?`,
          chosen: "y",
          reasoning: "r",
        });
        acked.decisions.push(String(d.id));
      } else {
        const m = await timed(client, recorder, "log_milestone", { task_id: taskId, message: `writer ${w} #${i}`, progress: i });
        acked.milestones.push(String(m.id));
      }
    }
    const own = await timed(client, recorder, "start_task", {
      workflow_id: acked.workflowId,
      parent_task_id: shared[0],
      name: `Writer ${w}`,
      goal: "own",
    });
    acked.tasks.push(String(own.task_id));
    await timed(client, recorder, "complete_task", {
      task_id: own.task_id,
      status: "success",
      outcome: { summary: `writer ${w}` },
      changes: checksumChanges(`src/writer${w}`, 1),
    });
    acked.completed.set(String(own.task_id), 1);
    await client.close();
  });
  const seconds = (performance.now() - started) / 1000;
  const events = await readEvents(acked.shareUrl);
  const view = await exportView(acked.shareUrl);
  return {
    writers: options.writers,
    calls: recorder.all().length,
    seconds,
    events: events.length,
    latency: summarize(recorder.all()),
    errors: results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : [])),
    problems: checkConsistency(view, events, acked),
  };
}
