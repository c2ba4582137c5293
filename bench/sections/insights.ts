/**
 * The account's Insights at 10,000 tasks (docs/insights.md): a server of its own, an account
 * filled through the tools the way clients record (20 workflows of 500 tasks, three agents, two
 * models each, two repositories; tests, areas, lines and usage in each completion, people's
 * verdicts on some), then `GET /api/insights` (a read token) for the last 30 days grouped by agent,
 * model and repository, its CSV, and the dashboard's page, each interleaved with `GET /health` as
 * the floor. Target: the figures in ≤ 200 ms. The figures are summed from the account's rollups
 * (one row per day and group), never from the tasks, so the request reads days × groups rows;
 * the bench checks the answer counts every task and verdict before it times anything.
 */
import type { Client } from "@modelcontextprotocol/client";
import { pool, timed } from "../../test/support/agents.ts";
import { type DevServer, startDevServer } from "../../test/support/dev-server.ts";
import { eventually } from "../../test/support/eventually.ts";
import { connect } from "../../test/support/mcp-client.ts";
import { ownerSession, reviewTask } from "../../test/support/owner-session.ts";
import { summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { atMost, count, percentiles, times } from "../lib/table.ts";

const TARGET_MS = 200;
const AGENTS = [
  { agent: "claude-code", models: ["claude-sonnet-4-5", "claude-opus-4-1"] },
  { agent: "codex", models: ["gpt-5.5", "gpt-5-codex"] },
  { agent: "cursor", models: ["auto", "composer-1"] },
];
const REPOSITORIES = [
  { fingerprint: "1".repeat(64), remote: "github.com/acme/app", branch: "main" },
  { fingerprint: "2".repeat(64), remote: "github.com/acme/api", branch: "main" },
];

/** A completion as a client speaking the helper's wire format sends it; `i` picks what it claims and what was observed. */
function completion(taskId: string, i: number): Record<string, unknown> {
  const { agent, models } = AGENTS[i % AGENTS.length] as (typeof AGENTS)[number];
  const passing = i % 5 !== 0;
  const path = i % 11 === 0 ? `docs/t${i}.md` : `src/t${i}.ts`;
  return {
    task_id: taskId,
    status: i % 13 === 0 ? "failed" : "success",
    outcome: { summary: `Task ${i}` },
    metadata: { tests_status: "passed" },
    metrics: { input_tokens: 5000 + i, output_tokens: 700, model: models[i % 2], cost_usd: 0.01 * (1 + (i % 40)) },
    changes: {
      type: "checksum",
      transitions: [{ path, before: null, after: { mode: "100644", blob: i.toString(16).padStart(40, "0") } }],
      source: { kind: "helper", version: "0.1.0" },
      agent_edits: { paths: [path] },
      commands: {
        runs: passing ? [{ command: "npm test", at: Date.now() - 500, exit_code: 0, duration_ms: 900, kinds: ["test"] }] : [],
        last_edit_at: Date.now() - 1000,
      },
      review: {
        lines: [{ path, added: 20, removed: 2, agent: 15 + (i % 6), others: 5 - (i % 6), not_observed: 0 }],
        commits: [],
        branch: "main",
        line_attribution: { tool: { name: agent }, files: [] },
      },
    },
  };
}

interface Built {
  tasks: number;
  verdicts: number;
}

async function fill(context: BenchContext, server: DevServer, workflows: number, perWorkflow: number): Promise<Built> {
  const clients: Client[] = await Promise.all(
    Array.from({ length: 8 }, () => connect({ url: server.url, token: server.token }) as Promise<Client>),
  );
  const cookie = await ownerSession(server.url, server.token);
  let verdicts = 0;
  try {
    for (let w = 0; w < workflows; w++) {
      const first = clients[0] as Client;
      const wf = await timed(first, null, "start_workflow", {
        name: `Insights bench ${w}`,
        force_new: true,
        repository: REPOSITORIES[w % REPOSITORIES.length],
      });
      const workflowId = String(wf.workflow_id);
      const done = await pool(perWorkflow, clients.length, async (k) => {
        const i = w * perWorkflow + k;
        const client = clients[k % clients.length] as Client;
        const task = await timed(client, null, "start_task", { workflow_id: workflowId, name: `Task ${i}`, goal: "g", areas: ["src/**"] });
        await timed(client, null, "complete_task", completion(String(task.task_id), i));
        // A person's verdict on every twentieth task, through the page's form.
        if (i % 20 === 0) {
          const verdict = i % 40 === 0 ? "approved" : "changes_requested";
          await reviewTask(server.url, cookie, { workflow: workflowId, task: String(task.task_id), verdict, body: "ok" });
          verdicts++;
        }
      });
      const failed = done.find((r) => r.status === "rejected");
      if (failed) throw new Error(`filling workflow ${w}: ${String((failed as PromiseRejectedResult).reason)}`);
      context.log(`insights: ${count((w + 1) * perWorkflow)} of ${count(workflows * perWorkflow)} tasks recorded`);
    }
  } finally {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
  }
  return { tasks: workflows * perWorkflow, verdicts };
}

/** `runs` GETs of `url`, each followed by a GET /health (the floor), after five warm-up pairs. */
async function timeGets(
  url: string,
  headers: Record<string, string>,
  runs: number,
): Promise<{ value: number[]; floor: number[]; bytes: number }> {
  const value: number[] = [];
  const floor: number[] = [];
  let bytes = 0;
  const health = `${new URL(url).origin}/health`;
  for (let i = 0; i < runs + 5; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers });
    const body = await response.arrayBuffer();
    const took = performance.now() - started;
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    bytes = body.byteLength;
    const h0 = performance.now();
    await (await fetch(health)).arrayBuffer();
    const h = performance.now() - h0;
    if (i >= 5) {
      value.push(took);
      floor.push(h);
    }
  }
  return { value, floor, bytes };
}

export async function insightsBench(context: BenchContext, serverVars: Record<string, string>): Promise<void> {
  const workflows = context.quick ? 4 : 20;
  const perWorkflow = 500;
  const server = await startDevServer({ vars: serverVars });
  try {
    const started = performance.now();
    const built = await fill(context, server, workflows, perWorkflow);
    const fillMinutes = (performance.now() - started) / 60_000;
    const tokenResponse = await fetch(`${server.url}/api/tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "insights bench", scopes: ["read"] }),
    });
    const readToken = ((await tokenResponse.json()) as { token: string }).token;
    const query = "days=30&by=agent,model,repository";
    // Correct before fast: every task and verdict counted, in the groups they were recorded in.
    const insights = await eventually(
      "the rollups counting every task and verdict",
      async () => {
        const response = await fetch(`${server.url}/api/insights?${query}`, { headers: { Authorization: `Bearer ${readToken}` } });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`/api/insights answered ${response.status}: ${text.slice(0, 300)}`);
        const body = JSON.parse(text) as { total: { tasks: number; figures: { id: string; part?: number }[] }; groups: unknown[] };
        const reviewed = body.total.figures.find((f) => f.id === "reviewed")?.part ?? 0;
        return body.total.tasks === built.tasks && reviewed === built.verdicts ? body : null;
      },
      120_000,
      1000,
    );
    if (insights.groups.length !== AGENTS.length * 2 * REPOSITORIES.length)
      context.fail(`insights: ${insights.groups.length} groups, not ${AGENTS.length * 2 * REPOSITORIES.length}`);

    const cookie = await ownerSession(server.url, server.token);
    const runs = context.quick ? 20 : 50;
    const bearer = { Authorization: `Bearer ${readToken}` };
    const json = await timeGets(`${server.url}/api/insights?${query}`, bearer, runs);
    const csv = await timeGets(`${server.url}/api/insights.csv?${query}`, bearer, runs);
    const page = await timeGets(`${server.url}/dashboard/insights?${query}`, { Cookie: cookie }, runs);
    const size = `${count(built.tasks)} tasks, ${count(built.verdicts)} verdicts${context.quick ? " (--quick)" : ""}`;
    const rows: [string, typeof json][] = [
      [`GET /api/insights (JSON), ${size}, n=${runs}`, json],
      [`GET /api/insights.csv, n=${runs}`, csv],
      [`GET /dashboard/insights (page), n=${runs}`, page],
    ];
    for (const [measure, timing] of rows) {
      const value = summarize(timing.value);
      const floor = summarize(timing.floor);
      context.table.add({
        area: "insights",
        measure,
        value: percentiles(value),
        floor: `/health ${percentiles(floor)}`,
        ratio: times(value.median, floor.median),
        target: atMost(value.p95, TARGET_MS, " ms (p95)"),
      });
    }
    context.results.insights = {
      tasks: built.tasks,
      verdicts: built.verdicts,
      groups: insights.groups.length,
      fill_minutes: fillMinutes,
      json: { ...summarize(json.value), bytes: json.bytes },
      csv: { ...summarize(csv.value), bytes: csv.bytes },
      page: { ...summarize(page.value), bytes: page.bytes },
      floor: summarize(json.floor),
    };
  } finally {
    await server.stop();
  }
}
