import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "../support/dev-server";
import { eventually } from "../support/eventually";
import { connect as connectTo, ok as tool } from "../support/mcp-client";
import { EXPECTED_TOOLS } from "../support/tools";

const run = promisify(execFile);

let server: DevServer;

beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

const connect = () => connectTo(server, { negotiation: "auto", name: "e2e-v2" });

describe("the whole chain through wrangler dev", () => {
  it("records a hierarchical workflow, survives a restart, and reads it back", async () => {
    const client = await connect();
    const { workflow_id } = (await tool(client, "start_workflow", {
      name: "End to end",
      description: "A hierarchical workflow over HTTP",
      plan: [{ step: "1", goal: "Build" }],
    })) as { workflow_id: string };
    const parent = (await tool(client, "start_task", { workflow_id, name: "Parent", goal: "Everything", areas: ["src/**"] })) as {
      task_id: string;
    };
    const subtasks: string[] = [];
    for (const name of ["Sub A", "Sub B"]) {
      const sub = (await tool(client, "start_task", { workflow_id, parent_task_id: parent.task_id, name, goal: `Do ${name}` })) as {
        task_id: string;
      };
      subtasks.push(sub.task_id);
      await tool(client, "log_decision", {
        task_id: sub.task_id,
        category: "trade_off",
        question: `${name}?`,
        chosen: "yes",
        reasoning: "simplest",
      });
      await tool(client, "log_issue", {
        task_id: sub.task_id,
        type: "bug_encountered",
        description: `${name} bug`,
        resolution: "patched",
        requires_human_review: name === "Sub B",
      });
      await tool(client, "log_milestone", { task_id: sub.task_id, message: `${name} half way`, progress: 50 });
    }
    const [subA, subB] = subtasks as [string, string];
    await tool(client, "complete_task", { task_id: subA, status: "success", outcome: { summary: "A done", next_steps: ["Ship A"] } });
    // Sub B stays open until after the restart: get_workflow must show it.
    await server.restart();

    const resumed = await connect();
    const state = (await tool(resumed, "get_workflow", { workflow_id })) as {
      open_tasks: { task_id: string }[];
      recent_issues: { requires_human_review: boolean }[];
      next_steps: string[];
    };
    expect(state.open_tasks.map((t) => t.task_id)).toEqual([parent.task_id, subB]);
    expect(state.recent_issues[0]?.requires_human_review).toBe(true);
    expect(state.next_steps).toEqual(["Ship A"]);
    // The account index catches up after the restart through the outbox's alarm (its push timer died with the process).
    const open = await eventually(
      "the account index shows the workflow's two open tasks",
      async () => {
        const list = (await tool(resumed, "get_workflow", {})) as { workflows: { workflow_id: string; open_tasks: number }[] };
        return list.workflows.find((w) => w.workflow_id === workflow_id)?.open_tasks === 2 ? list : null;
      },
      20_000,
    );
    expect(open.workflows.find((w) => w.workflow_id === workflow_id)?.open_tasks).toBe(2);

    await tool(resumed, "complete_task", {
      task_id: subB,
      status: "partial_success",
      outcome: { summary: "B mostly done", manual_review_needed: true, manual_review_reason: "edge cases" },
    });
    await tool(resumed, "complete_task", { task_id: parent.task_id, status: "success", outcome: { summary: "All done" } });
    const closed = (await tool(resumed, "complete_workflow", {
      workflow_id,
      status: "success",
      summary: "Shipped",
      achievements: ["A", "B"],
    })) as {
      totals: { tasks: number; open_tasks: number; decisions: number; issues: number; reviews_needed: number };
    };
    expect(closed.totals).toMatchObject({ tasks: 3, open_tasks: 0, decisions: 2, issues: 2, reviews_needed: 2 });

    await server.restart();
    const v1 = await connectTo(server, { sdk: "v1", name: "e2e-v1" });
    const after = (await tool(v1, "get_workflow", { workflow_id })) as {
      workflow: { status: string };
      open_tasks: unknown[];
      recent_decisions: unknown[];
    };
    expect(after.workflow.status).toBe("success");
    expect(after.open_tasks).toEqual([]);
    expect(after.recent_decisions).toHaveLength(2);
    // Two restarts of wrangler dev, each a few seconds on an idle machine and tens of them on a busy
    // one (over the 60 s default once, on a 2-core machine at load 18): a hang detector, not a speed claim.
  }, 180_000);

  it("lists the tools with the MCP Inspector CLI", async () => {
    const { stdout } = await run(
      "npx",
      ["mcp-inspector", "--cli", `${server.url}/mcp`, "--method", "tools/list", "--header", `Authorization: Bearer ${server.token}`],
      {
        timeout: 60_000,
        env: process.env,
      },
    );
    const names = (JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((t) => t.name).sort();
    expect(names).toEqual([...EXPECTED_TOOLS]);
  });

  it("refuses the Inspector without a token", async () => {
    const response = await fetch(`${server.url}/mcp`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
  });
});
