import { env } from "cloudflare:workers";
import type { Client } from "@modelcontextprotocol/client";
import { beforeAll, describe, expect, it } from "vitest";
import { connect } from "../support/mcp-client";
import { ON_PAGE, rpc, workerTarget } from "../support/worker";

/**
 * Typed clients (the Python SDK, fastmcp) build their result types from a tool's outputSchema and
 * drop every field it does not list. Over a realistic call of each tool, and of each mode of
 * get_workflow, every field returned must be advertised, and every advertised field must be
 * returned by some call (no schema for fields that never come). Fields are advertised by name with
 * an open schema (`{}`): a declared type would only cost tools/list bytes.
 */
type Property = Record<string, unknown>;
type Listed = { name: string; outputSchema: { type: string; properties: Record<string, Property> } };

let client: Client;
let advertised: Map<string, Record<string, Property>>;
const seen = new Map<string, Set<string>>();
const offenders: string[] = [];

async function structured(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { text: string }[];
    structuredContent?: Record<string, unknown>;
  };
  if (result.isError) throw new Error(`${name}: ${result.content[0]?.text}`);
  const value = result.structuredContent ?? {};
  const properties = advertised.get(name) ?? {};
  const keys = seen.get(name) ?? new Set<string>();
  for (const key of Object.keys(value)) {
    keys.add(key);
    const declared = properties[key];
    if (!declared) offenders.push(`${name}.${key} is returned but not in the outputSchema`);
    else if (Object.keys(declared).length > 0) offenders.push(`${name}.${key} is advertised with a closed schema`);
  }
  seen.set(name, keys);
  return value;
}

beforeAll(async () => {
  client = await connect(workerTarget());
  const { body } = await rpc({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const tools = (body?.result as { tools: Listed[] } | undefined)?.tools ?? [];
  advertised = new Map(tools.map((tool) => [tool.name, tool.outputSchema.properties]));

  // A past workflow whose decision the next task is related to.
  const past = (await structured("start_workflow", { name: "Billing v1" })).workflow_id as string;
  const pastTask = (await structured("start_task", { workflow_id: past, name: "Pick a payments library", goal: "Stripe SDK choice" }))
    .task_id as string;
  await structured("log_decision", {
    task_id: pastTask,
    category: "library_choice",
    question: "Which payments library?",
    chosen: "stripe-node",
    reasoning: "Official SDK",
  });

  const workflowId = (await structured("start_workflow", { name: "Billing v2", plan: [{ step: "1", goal: "Invoices" }] }))
    .workflow_id as string;
  await structured("start_workflow", { name: "billing V2" }); // resumed
  const task = (
    await structured("start_task", { workflow_id: workflowId, name: "Payments library upgrade", goal: "Upgrade the payments library" })
  ).task_id as string;
  await structured("log_issue", { task_id: task, type: "other", description: "Flaky webhook test", resolution: "Retried" });
  for (let i = 0; i < 6; i++) await structured("log_milestone", { task_id: task, message: `step ${i}`, progress: i * 10 }); // the sixth warns
  await structured("complete_task", {
    task_id: task,
    status: "success",
    outcome: { summary: "Upgraded", next_steps: ["Docs"] },
    metrics: { input_tokens: 1200, output_tokens: 300 },
  });
  await structured("get_workflow", { workflow_id: workflowId });
  await structured("get_workflow", { task_id: task });
  await structured("get_workflow", { query: "payments library", limit: 3 });
  await structured("get_workflow", {});
  await structured("complete_workflow", { workflow_id: workflowId, status: "success", summary: "Shipped" });

  // A reviewer's comment rides on the next result of every tool; get_workflow {workflow_id} lists them all.
  const reviewed = (await structured("start_workflow", { name: "Reviewed work" })).workflow_id as string;
  const review = async () => {
    const stub = env.WORKFLOW.get(env.WORKFLOW.idFromName(reviewed));
    const added = await stub.addFeedback("acme", {
      target: "workflow",
      target_id: reviewed,
      verdict: "comment",
      body: "Please add tests",
      ...ON_PAGE,
    });
    if (!added.ok) throw new Error(added.message);
  };
  await review();
  await structured("start_workflow", { name: "Reviewed work" }); // resumed
  await review();
  const reviewedTask = (await structured("start_task", { workflow_id: reviewed, name: "Tests", goal: "Add tests" })).task_id as string;
  await review();
  await structured("log_decision", {
    task_id: reviewedTask,
    category: "library_choice",
    question: "Which runner?",
    chosen: "vitest",
    reasoning: "Used already",
  });
  await review();
  await structured("log_issue", { task_id: reviewedTask, type: "other", description: "Slow", resolution: "Cached" });
  await review();
  await structured("log_milestone", { task_id: reviewedTask, message: "half" });
  await review();
  await structured("get_workflow", { task_id: reviewedTask });
  await review();
  await structured("complete_task", { task_id: reviewedTask, status: "success", outcome: { summary: "Tested" } });
  await review();
  await structured("complete_workflow", { workflow_id: reviewed, status: "success", summary: "Done" });
  await review();
  await structured("get_workflow", { workflow_id: reviewed });
});

describe("every returned field is advertised", () => {
  it("returns no field outside its tool's outputSchema, each advertised with an open schema", () => {
    expect(offenders).toEqual([]);
  });

  it("exercised every tool", () => {
    expect([...seen.keys()].sort()).toEqual([...advertised.keys()].sort());
  });

  it.each([
    "start_workflow",
    "start_task",
    "log_decision",
    "log_issue",
    "log_milestone",
    "complete_task",
    "complete_workflow",
    "get_workflow",
  ])("%s advertises only fields it returns", (name) => {
    expect([...(seen.get(name) ?? [])].sort()).toEqual(Object.keys(advertised.get(name) ?? {}).sort());
  });
});
