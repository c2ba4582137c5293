import { describe, expect, it } from "vitest";
import { callTool, connect, ok } from "../support/mcp-client";
import { TOKENS, workerTarget } from "../support/worker";

describe("get_workflow", () => {
  it("resumes a workflow: open tasks with their last milestone, recent logs, next steps", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", {
      name: "Resume me",
      plan: [{ step: "1", goal: "g" }],
    });
    const done = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "Done", goal: "g" });
    await ok(client, "log_decision", {
      task_id: done.task_id,
      category: "architecture",
      question: "Monolith?",
      chosen: "Yes",
      reasoning: "Small team",
    });
    await ok(client, "complete_task", { task_id: done.task_id, status: "success", outcome: { summary: "s", next_steps: ["Write docs"] } });
    const open = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "Open", goal: "Keep going" });
    await ok(client, "log_milestone", { task_id: open.task_id, message: "Tests running" });
    await ok(client, "log_issue", {
      task_id: open.task_id,
      type: "unclear_requirement",
      description: "Which locale?",
      resolution: "Assumed en",
      requires_human_review: true,
    });

    const resumed = await callTool(client, "get_workflow", { workflow_id });
    expect(resumed.structured).toMatchObject({
      workflow: { id: workflow_id, name: "Resume me", status: "active", plan: [{ step: "1", goal: "g" }] },
      open_tasks: [{ task_id: open.task_id, name: "Open", goal: "Keep going", last_milestone: "Tests running", parent_task_id: null }],
      recent_decisions: [{ task_id: done.task_id, question: "Monolith?", chosen: "Yes" }],
      recent_issues: [{ description: "Which locale?", requires_human_review: true }],
      next_steps: ["Write docs"],
      totals: { tasks: 2, open_tasks: 1, decisions: 1, issues: 1, reviews_needed: 1 },
    });
    expect(resumed.text).toContain(`open: ${open.task_id} Open`);
    // What is already done, so an agent that lost its context does not redo it.
    expect(resumed.structured).toMatchObject({
      completed_tasks: [{ task_id: done.task_id, name: "Done", status: "success", summary: "s", parent_task_id: null }],
      plan_progress: [{ step: "1", goal: "g", done_by: [done.task_id] }],
    });
    expect(resumed.text).toContain(`done: ${done.task_id} Done (success): s`);
    expect(resumed.text.length).toBeLessThan(600);
  });

  it("returns one task in full, and only to its owner", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Detail" });
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name: "T", goal: "g", areas: ["auth"] });
    await ok(client, "complete_task", { task_id, status: "failed", outcome: { summary: "Could not", limitations: ["time"] } });
    const detail = await ok<{ task: Record<string, unknown> }>(client, "get_workflow", { task_id });
    expect(detail.task).toMatchObject({
      id: task_id,
      status: "failed",
      areas: ["auth"],
      outcome: { summary: "Could not", limitations: ["time"] },
    });
    const stranger = await callTool(await connect(workerTarget(TOKENS.globex)), "get_workflow", { task_id });
    expect(stranger.text).toMatch(/^NOT_FOUND: task_id: /);
  });

  it("lists the account's open workflows without an id, never another account's", async () => {
    const globex = await connect(workerTarget(TOKENS.globex));
    const { workflow_id } = await ok<{ workflow_id: string }>(globex, "start_workflow", { name: "Globex only" });
    const mine = await ok<{ workflows: { workflow_id: string }[] }>(globex, "get_workflow", {});
    expect(mine.workflows.map((w) => w.workflow_id)).toContain(workflow_id);
    const theirs = await ok<{ workflows: { workflow_id: string }[] }>(await connect(workerTarget(TOKENS.acme)), "get_workflow", {});
    expect(theirs.workflows.map((w) => w.workflow_id)).not.toContain(workflow_id);
  });

  it("resume lists completed tasks newest first, bounded, and ties plan steps to the tasks named after them", async () => {
    const client = await connect(workerTarget());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", {
      name: "Plan progress",
      plan: [
        { step: "1", goal: "Install NextAuth v5" },
        { step: "2", goal: "Migrate callbacks" },
        { step: "3", goal: "Write the docs" },
      ],
    });
    const names = ["1. Install NextAuth v5", "Callbacks", ...Array.from({ length: 22 }, (_, i) => `Chore ${i}`)];
    const ids: string[] = [];
    for (const name of names) {
      const goal = name === "Callbacks" ? "Migrate callbacks to the new API" : "g";
      const task = await ok<{ task_id: string }>(client, "start_task", { workflow_id, name, goal });
      await ok(client, "complete_task", { task_id: task.task_id, status: "success", outcome: { summary: `${name} done.\nDetails…` } });
      ids.push(task.task_id);
    }
    const resumed = await callTool(client, "get_workflow", { workflow_id });
    const completed = (resumed.structured as { completed_tasks: { task_id: string; summary: string }[] }).completed_tasks;
    expect(completed).toHaveLength(20);
    expect(completed[0]).toMatchObject({ task_id: ids.at(-1), summary: "Chore 21 done." });
    expect(resumed.structured).toMatchObject({
      plan_progress: [
        { step: "1", done_by: [ids[0]] },
        { step: "2", done_by: [ids[1]] },
        { step: "3", done_by: [] },
      ],
    });
    expect(resumed.text).toContain(`plan 1: done by ${ids[0]}`);
    expect(resumed.text).toContain("plan 3: not done yet");
  });
});
