/**
 * Builds a workflow that uses every agent-written field, through the MCP endpoint.
 * Shared by the workerd page tests and the Chromium tests (it needs only a fetch).
 * `text(label)` supplies each field's value (the label itself, or an XSS payload);
 * `path(label)` each file path given through the helper-only `changes` input.
 */
export type CallTool = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;
type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

let nextId = 1;

/** tools/call over plain JSON-RPC (the endpoint is stateless); throws on a tool error, returns structuredContent. */
export function toolCaller(fetchFn: Fetch, mcpUrl: string, token: string): CallTool {
  return async (name, args) => {
    const response = await fetchFn(mcpUrl, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }),
    });
    const body = await response.text();
    const json =
      body.startsWith("event:") || body.startsWith("data:") ? (body.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice(6) : body;
    const message = JSON.parse(json) as {
      result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text?: string }[] };
    };
    const result = message.result;
    if (!result || result.isError) throw new Error(`${name} failed: ${json.slice(0, 500)}`);
    return result.structuredContent ?? {};
  };
}

const blob = (c: string) => c.repeat(40);
const file = (c: string) => ({ mode: "100644", blob: blob(c) });

export interface RecordedWorkflow {
  workflowId: string;
  shareUrl: string;
  rootTaskId: string;
  childTaskId: string;
  siblingTaskId: string;
}

export async function recordFullWorkflow(
  callTool: CallTool,
  options: {
    text?: (label: string) => string;
    path?: (label: string) => string;
    complete?: boolean;
    /** Called right after start_workflow, e.g. to open the page so the rest arrives live. */
    onStarted?: (shareUrl: string) => Promise<void>;
  } = {},
): Promise<RecordedWorkflow> {
  const text = options.text ?? ((label: string) => label);
  const path = options.path ?? ((label: string) => label);
  const wf = await callTool("start_workflow", {
    name: text("Workflow name"),
    description: text("Workflow description"),
    plan: [
      { step: text("Plan step"), goal: text("Plan goal") },
      { step: "2", goal: "Second step" },
    ],
  });
  const workflowId = String(wf.workflow_id);
  await options.onStarted?.(String(wf.share_url));
  const root = await callTool("start_task", {
    workflow_id: workflowId,
    name: text("Root task"),
    goal: text("Root goal"),
    areas: [text("auth"), "src/auth/**"],
  });
  const rootTaskId = String(root.task_id);
  await callTool("log_decision", {
    task_id: rootTaskId,
    category: "library_choice",
    question: text("Decision question"),
    options_considered: [text("Option A"), "Option B"],
    chosen: text("Option A"),
    reasoning: text("Decision reasoning"),
    trade_offs: text("Decision trade-offs"),
  });
  const child = await callTool("start_task", {
    workflow_id: workflowId,
    parent_task_id: rootTaskId,
    name: text("Subtask"),
    goal: text("Subtask goal"),
    areas: [text("area"), "src/auth/**"],
  });
  const childTaskId = String(child.task_id);
  const sibling = await callTool("start_task", {
    workflow_id: workflowId,
    parent_task_id: rootTaskId,
    name: text("Sibling task"),
    goal: text("Sibling goal"),
    areas: ["src/auth/**"],
  });
  const siblingTaskId = String(sibling.task_id);
  await callTool("log_milestone", {
    task_id: childTaskId,
    message: text("Milestone message"),
    progress: 50,
    metadata: { [text("meta key")]: text("meta value") },
  });
  await callTool("log_issue", {
    task_id: childTaskId,
    type: "bug_encountered",
    description: text("Issue description"),
    resolution: text("Issue resolution"),
    requires_human_review: true,
  });
  await callTool("complete_task", {
    task_id: childTaskId,
    status: "success",
    outcome: {
      summary: text("Subtask summary"),
      achievements: [text("Achievement")],
      limitations: [text("Limitation")],
      next_steps: [text("Next step")],
      manual_review_needed: true,
      manual_review_reason: text("Review reason"),
    },
    metadata: {
      packages_added: [text("package-added")],
      packages_removed: [text("package-removed")],
      commands_executed: [text("npm test")],
      tests_status: "passed",
    },
    changes: {
      type: "checksum",
      transitions: [
        { path: path("src/auth/jwt.ts"), before: null, after: file("a") },
        { path: path("src/auth/session.ts"), before: file("b"), after: file("c") },
        { path: path("README.md"), before: file("d"), after: file("e") },
        { path: path("src/auth/gone.ts"), before: file("f"), after: null },
        { path: path("src/auth/old-name.ts"), before: file("9"), after: null },
        { path: path("src/auth/new-name.ts"), before: null, after: file("9") },
      ],
    },
  });
  await callTool("complete_task", {
    task_id: siblingTaskId,
    status: "failed",
    outcome: { summary: text("Sibling summary") },
    changes: { type: "checksum", transitions: [{ path: path("src/auth/jwt.ts"), before: null, after: file("a") }] },
  });
  await callTool("complete_task", { task_id: rootTaskId, status: "partial_success", outcome: { summary: text("Root summary") } });
  if (options.complete) {
    await callTool("complete_workflow", {
      workflow_id: workflowId,
      status: "partial_success",
      summary: text("Workflow summary"),
      achievements: [text("Workflow achievement")],
      limitations: [text("Workflow limitation")],
    });
  }
  return { workflowId, shareUrl: String(wf.share_url), rootTaskId, childTaskId, siblingTaskId };
}
