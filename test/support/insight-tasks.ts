/**
 * @module test/support/insight-tasks
 * Tasks for the Insights tests recorded by a client that speaks the helper's wire format itself
 * (so every figure it sends is its claim): per agent, a number of tasks with or without a passing
 * test run after the last edit, some with a file outside their areas, each with line authors, the
 * agent's name (Agent Trace's tool), a model and a cost. Needs only a tool caller, so the workerd,
 * end-to-end and Chromium tests share it.
 */
import type { CallTool } from "../pages/fixture";

export interface AgentTasks {
  /** The agent's name as its hooks would report it (any text a client sends). */
  agent: string;
  model: string;
  tasks: number;
  /** A test run passed after the last edit (else no test ran). */
  passing: boolean;
  /** How many of the tasks (the first ones) change a file outside their areas. */
  outside?: number;
}

/** A completion as a client that sends the helper's wire format itself sends it. */
export function wireCompletion(task_id: string, i: number, spec: AgentTasks): Record<string, unknown> {
  const outside = i < (spec.outside ?? 0);
  const path = outside ? `docs/${spec.agent.length}-${i}.md` : `src/${spec.agent.length}-${i}.ts`;
  return {
    task_id,
    status: "success",
    outcome: { summary: `Task ${i}` },
    metadata: { tests_status: "passed" },
    metrics: { input_tokens: 1000 + i, output_tokens: 100, model: spec.model, cost_usd: 0.1 * (i + 1) },
    changes: {
      type: "checksum",
      transitions: [{ path, before: null, after: { mode: "100644", blob: String(i).padStart(40, "a") } }],
      source: { kind: "helper", version: "0.1.0" },
      agent_edits: { paths: [path] },
      commands: {
        runs: spec.passing ? [{ command: "npm test", at: Date.now() - 1000, exit_code: 0, duration_ms: 800, kinds: ["test"] }] : [],
        last_edit_at: Date.now() - 2000,
      },
      review: {
        lines: [{ path, added: 10, removed: 0, agent: spec.passing ? 9 : 5, others: spec.passing ? 1 : 5, not_observed: 0 }],
        commits: [],
        branch: "main",
        line_attribution: { tool: { name: spec.agent }, files: [] },
      },
    },
  };
}

/** One workflow with each agent's tasks (areas `src/**`); their task ids, in order, per agent. */
export async function recordAgentTasks(
  callTool: CallTool,
  name: string,
  agents: readonly AgentTasks[],
): Promise<{ workflowId: string; tasks: string[][] }> {
  const { workflow_id } = (await callTool("start_workflow", { name, force_new: true })) as { workflow_id: string };
  const tasks: string[][] = [];
  for (const spec of agents) {
    const ids: string[] = [];
    for (let i = 0; i < spec.tasks; i++) {
      const { task_id } = (await callTool("start_task", { workflow_id, name: `${spec.agent} ${i}`, goal: "g", areas: ["src/**"] })) as {
        task_id: string;
      };
      await callTool("complete_task", wireCompletion(task_id, i, spec));
      ids.push(task_id);
    }
    tasks.push(ids);
  }
  return { workflowId: workflow_id, tasks };
}
