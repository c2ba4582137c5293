import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { ORIGIN, workerFetch, workerTarget } from "../support/worker";

type Totals = { tasks: number; input_tokens: number; output_tokens: number; cost_usd: number };

describe("metrics per task (complete_task.metrics)", () => {
  it("stores them, rolls them up per workflow and per account, and shows them in exports and on the page", async () => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string; share_url: string }>(client, "start_workflow", { name: "Metered" });
    const parent = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Parent", goal: "g" });
    const child = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id: wf.workflow_id,
      parent_task_id: parent.task_id,
      name: "Child",
      goal: "g",
    });
    await ok(client, "complete_task", {
      task_id: child.task_id,
      status: "success",
      outcome: { summary: "child" },
      metrics: { input_tokens: 1200, output_tokens: 300, model: "claude-sonnet-4", cost_usd: 0.0123 },
    });
    await ok(client, "complete_task", {
      task_id: parent.task_id,
      status: "success",
      outcome: { summary: "parent" },
      metrics: { input_tokens: 800, cost_usd: 0.0077 },
    });
    const third = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "Unmetered", goal: "g" });
    await ok(client, "complete_task", { task_id: third.task_id, status: "success", outcome: { summary: "no metrics" } });

    const task = await ok<{ task: { metrics: unknown } }>(client, "get_workflow", { task_id: child.task_id });
    expect(task.task.metrics).toEqual({
      input_tokens: 1200,
      output_tokens: 300,
      model: "claude-sonnet-4",
      cost_usd: 0.0123,
      source: "agent",
    });
    const bare = await ok<{ task: { metrics: unknown } }>(client, "get_workflow", { task_id: third.task_id });
    expect(bare.task.metrics).toBeNull();

    const resume = await ok<{ totals: Totals }>(client, "get_workflow", { workflow_id: wf.workflow_id });
    expect(resume.totals).toMatchObject({ tasks: 3, input_tokens: 2000, output_tokens: 300, cost_usd: 0.02 });

    const closed = await ok<{ totals: Totals }>(client, "complete_workflow", {
      workflow_id: wf.workflow_id,
      status: "success",
      summary: "ok",
    });
    expect(closed.totals).toMatchObject({ input_tokens: 2000, output_tokens: 300, cost_usd: 0.02 });

    const totals = await env.ACCOUNT.get(env.ACCOUNT.idFromName("acme")).totals();
    expect(totals).toMatchObject({ workflows: 1, input_tokens: 2000, output_tokens: 300, cost_usd: 0.02 });

    const exported = (await (await workerFetch(`${wf.share_url}/export.json`)).json()) as {
      totals: Totals;
      tasks: { name: string; metrics: unknown }[];
    };
    expect(exported.totals).toMatchObject({ input_tokens: 2000, output_tokens: 300, cost_usd: 0.02 });
    expect(exported.tasks.find((t) => t.name === "Child")?.metrics).toMatchObject({ model: "claude-sonnet-4" });

    const markdown = await (await workerFetch(`${wf.share_url}/export.md`)).text();
    expect(markdown).toContain("**Tokens:** 2300 · **Cost:** $0.02");
    // Agent text in the export is escaped only where GFM would act on it (the model name is the agent's).
    expect(markdown).toContain("Usage: 1200 in · 300 out tokens · claude-sonnet-4 · $0.01");

    const page = await (await workerFetch(wf.share_url)).text();
    expect(page).toContain("Usage: 1,200 in · 300 out tokens · claude-sonnet-4 · $0.01");
    expect(page).toContain("<b>2,300</b><span>tokens</span>");
    expect(wf.share_url.startsWith(ORIGIN)).toBe(true);
  });

  it.each([
    [{ input_tokens: -1 }, "INPUT_VALIDATION_ERROR: metrics.input_tokens: must be ≥ 0"],
    [{ output_tokens: 1.5 }, "INPUT_VALIDATION_ERROR: metrics.output_tokens: must be a int"],
    [{ cost_usd: 2_000_000 }, "INPUT_VALIDATION_ERROR: metrics.cost_usd: must be ≤ 1000000"],
    [{ model: "" }, "INPUT_VALIDATION_ERROR: metrics.model: must not be empty"],
    [{ tokens: 5 }, "INPUT_VALIDATION_ERROR: metrics: unknown field(s): tokens"],
  ])("refuses bad metrics %j by field and rule, storing nothing", async (metrics, message) => {
    const client = await connect(workerTarget());
    const wf = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Bad metrics", force_new: true });
    const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id: wf.workflow_id, name: "T", goal: "g" });
    const result = await callTool(client, "complete_task", {
      task_id: task.task_id,
      status: "success",
      outcome: { summary: "s" },
      metrics,
    });
    expect(result.isError).toBe(true);
    expect(result.text.replace("must be a integer", "must be a int")).toBe(message);
    const state = await ok<{ task: { status: string } }>(client, "get_workflow", { task_id: task.task_id });
    expect(state.task.status).toBe("in_progress");
  });
});
