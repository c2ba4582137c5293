/**
 * The workflow's state a helper keeps for its hooks, answered with the write: a start_task or
 * complete_task that carries the helper's data (snapshot, changes) has it in its result's `_meta`
 * (`waymark/workflow_state`: the workflow's id and get_workflow's text after the write); a call
 * without the helper's data has none; the result's fields stay the documented ones, reviewer
 * feedback included (the state lists it as get_workflow does; the agent's write still brings it).
 */
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { connect, ok } from "../support/mcp-client";
import { ON_PAGE, workerTarget } from "../support/worker";

const HEAD = "c".repeat(40);
const BLOB = "a".repeat(40);
const META = "waymark/workflow_state";
type Raw = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
  _meta?: Record<string, unknown>;
};

it("a helper's start_task and complete_task answer with the workflow's state after the write; other calls do not", async () => {
  const client = await connect(workerTarget());
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: args })) as Raw;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    return result;
  };
  const workflowId = String((await call("start_workflow", { name: "Kept state", force_new: true })).structuredContent?.workflow_id);
  const plain = await call("start_task", { workflow_id: workflowId, name: "Plain", goal: "g" });
  expect(plain._meta?.[META]).toBeUndefined();

  // A reviewer's comment is waiting: the agent's write brings it, and the state lists it.
  const added = await env.WORKFLOW.get(env.WORKFLOW.idFromName(workflowId)).addFeedback("acme", {
    target: "workflow",
    target_id: workflowId,
    verdict: "comment",
    body: "Mind the tests",
    ...ON_PAGE,
  });
  if (!added.ok) throw new Error(added.message);

  const started = await call("start_task", {
    workflow_id: workflowId,
    name: "Helped",
    goal: "g",
    snapshot: { type: "git", head: HEAD, branch: "main", dirty: [] },
  });
  const taskId = String(started.structuredContent?.task_id);
  expect(Object.keys(started.structuredContent ?? {}).sort()).toEqual([
    "reviewer_feedback",
    "snapshot_id",
    "snapshot_type",
    "started_at",
    "task_id",
  ]);
  expect(JSON.stringify(started.structuredContent?.reviewer_feedback)).toContain("Mind the tests");
  const atStart = started._meta?.[META] as { workflow_id: string; text: string };
  expect(atStart.workflow_id).toBe(workflowId);
  expect(atStart.text.split("\n")).toEqual([
    `${workflowId} "Kept state" active`,
    expect.stringMatching(/^open: .* Plain$/),
    `open: ${taskId} Helped`,
    `reviewer comment on ${workflowId}: Mind the tests`,
  ]);

  const completed = await call("complete_task", {
    task_id: taskId,
    status: "success",
    outcome: { summary: "helped" },
    changes: {
      type: "git",
      start_head: HEAD,
      head: HEAD,
      committed: [],
      dirty: [{ path: "a.ts", head: null, worktree: { mode: "100644", blob: BLOB } }],
    },
  });
  expect(Object.keys(completed.structuredContent ?? {})).not.toContain("workflow_state");
  const atEnd = completed._meta?.[META] as { workflow_id: string; text: string };
  expect(atEnd.text).toContain(`done: ${taskId} Helped (success): helped`);
  expect(atEnd.text).not.toContain(`open: ${taskId}`);
  // The same text get_workflow answers (the feedback listed there too).
  const resumed = await call("get_workflow", { workflow_id: workflowId });
  expect(resumed.content[0]?.text).toBe(atEnd.text);

  const log = await call("log_milestone", { task_id: String(plain.structuredContent?.task_id), message: "m" });
  expect(log._meta?.[META]).toBeUndefined();
  const completedPlain = await call("complete_task", {
    task_id: String(plain.structuredContent?.task_id),
    status: "success",
    outcome: { summary: "s" },
  });
  expect(completedPlain._meta?.[META]).toBeUndefined();
  await ok(client, "complete_workflow", { workflow_id: workflowId, status: "success", summary: "done" });
});
