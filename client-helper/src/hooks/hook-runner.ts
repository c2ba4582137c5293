/**
 * @module hooks/hook-runner
 * `waymark hook <event>`: what the agent's hooks run. It reads the JSON payload the agent
 * writes on stdin and answers in that agent's documented output format (its answers and the
 * payload fields every hook reads are its definition's, @waymark/protocol/agents/<agent>):
 * - session-start: the open tasks and the last workflow of this repository, as context for
 *   the new or resumed session, with the workflow's state as `get_workflow` tells it: fresh
 *   when the endpoint answers within the session-start budget, else as last kept (./workflow-state.ts);
 * - post-tool-use: what the tool call did, recorded for each open task (./tool-call.ts, loaded only
 *   then); the installed hooks spool the payload without Node instead (./spool.ts), read here at
 *   stop and by complete_task;
 * - stop: a reminder to complete a task still open (once per stop), only when the task was edited
 *   since the last reminder.
 * A hook never fails the agent: any internal error, and anything slower than its deadline,
 * ends with exit code 0 and no instruction.
 */

import type { AgentConfig, HookEvent, HookPayload } from "@waymark/protocol/agent-config";
import { agentConfig } from "@waymark/protocol/agents";
import { cacheRoot } from "../store.js";
import { Journal, type OpenTask } from "./journal.js";
import { drainSpool, type SpoolRecorder } from "./spool.js";
import { stopReminder } from "./stop-state.js";
import { age, fetchWorkflowState } from "./workflow-state.js";

/**
 * What a session start may spend in all, counted from the hook process's start: Node's start-up,
 * the local records, and the one network call, which gets what is left of it (nothing left: the
 * state kept in the journal is shown instead).
 */
export const SESSION_START_BUDGET_MS = 200;
/**
 * A workflow state kept this recently is shown at once, without asking the endpoint: the helper
 * keeps it after every task it starts or completes (the endpoint answers those calls with it), so
 * it is older than this only when the workflow was last worked on elsewhere or long ago.
 */
export const KEPT_STATE_FRESH_MS = 10 * 60_000;
/** Hard deadline of a whole hook run. */
export const HOOK_DEADLINE_MS = 800;
/** Bound on the context a session-start hook injects. */
const CONTEXT_LIMIT = 1500;

export type HookOptions = {
  agent: AgentConfig;
  /** The MCP endpoint, for the session-start enrichment; none: local records only. */
  url?: string;
  token?: string;
  version: string;
  cacheDir?: string;
  now?: () => number;
  /** When the hook process started (ms since the epoch); the session-start budget counts from it. */
  startedAt?: number;
  /** The session-start budget (SESSION_START_BUDGET_MS unless a test gives another). */
  sessionStartBudgetMs?: number;
};

export type HookResult = { stdout: string };

/** The directory the agent works in (its payload's, else the hook's own). */
function workingDirectory(payload: HookPayload, agent: AgentConfig): string {
  return agent.payload.workingDirectory(payload) ?? process.cwd();
}

/** The spool's payloads (./spool.ts) are the agents' post-tool-use payloads: recorded as the hook would have. */
export const SPOOLED_TOOL_CALLS: SpoolRecorder = {
  journalDir: (payload, name) => {
    const agent = agentConfig(name);
    return agent ? workingDirectory(payload, agent) : null;
  },
  // Loaded here, not with the module: a session start (the agent waits for it) records no tool call.
  record: async (journal, payload, name, at) => (await toolCallModule()).recordToolCall(journal, payload, name, at),
};

let toolCall: Promise<typeof import("./tool-call.js")> | null = null;

/** ./tool-call.ts, loaded once (a drained spool records many tool calls: each import again costs its module lookups). */
function toolCallModule(): Promise<typeof import("./tool-call.js")> {
  toolCall ??= import("./tool-call.js");
  return toolCall;
}

function describe(task: OpenTask): string {
  const age = Math.max(0, Math.round((Date.now() - task.started_at) / 60_000));
  return `${task.task_id}${task.name ? ` "${task.name}"` : ""}${task.workflow_id ? ` in workflow ${task.workflow_id}` : ""}, started ${age} min ago`;
}

/**
 * The workflow's state for the context: as kept in the journal, with its age, when it was kept
 * within KEPT_STATE_FRESH_MS (the agent waits for this hook: no network then); else fresh from the
 * endpoint when it answers within what is left of the budget (and then kept), else as last kept.
 */
async function workflowState(journal: Journal, options: HookOptions, workflowId: string): Promise<string | null> {
  const now = options.now ?? Date.now;
  const kept = await journal.workflowState(workflowId);
  const keptText = kept && `Workflow state (get_workflow, ${age(kept.at, now())}):\n${kept.text}`;
  if (kept && now() - kept.at < KEPT_STATE_FRESH_MS) return keptText;
  const left = (options.sessionStartBudgetMs ?? SESSION_START_BUDGET_MS) - (now() - (options.startedAt ?? performance.timeOrigin));
  const fresh = options.url ? await fetchWorkflowState(options.url, options.token, workflowId, left) : null;
  if (fresh !== null) {
    await journal.keepWorkflowState(workflowId, fresh, now());
    return `Workflow state (get_workflow):\n${fresh}`;
  }
  return keptText;
}

async function sessionStart(journal: Journal, options: HookOptions): Promise<string | null> {
  const [tasks, workflow] = await Promise.all([journal.openTasks(), journal.lastWorkflow()]);
  if (tasks.length === 0 && !workflow) return null;
  const lines = ["Waymark: work recorded in this repository."];
  for (const task of tasks) lines.push(`Open task: ${describe(task)}. Continue it, and call complete_task when it is done.`);
  const workflowId = tasks.at(-1)?.workflow_id ?? workflow?.workflow_id ?? null;
  if (workflowId) {
    const state = await workflowState(journal, options, workflowId);
    if (state) lines.push(state);
    else lines.push(`Last workflow: ${workflowId}. Call get_workflow {"workflow_id": "${workflowId}"} to resume it if it is still open.`);
  }
  const context = lines.join("\n");
  return context.length > CONTEXT_LIMIT ? `${context.slice(0, CONTEXT_LIMIT - 1)}…` : context;
}

async function handle(event: HookEvent, payload: HookPayload, options: HookOptions): Promise<string | null> {
  const now = options.now ?? Date.now;
  const { agent } = options;
  const journal = await Journal.forDirectory(workingDirectory(payload, agent), options.cacheDir);
  await journal.hookSession(payload, agent, now());
  switch (event) {
    case "session-start": {
      const context = await sessionStart(journal, options);
      return context ? agent.answers.context(context) : null;
    }
    case "post-tool-use":
      await SPOOLED_TOOL_CALLS.record(journal, payload, agent.name, now());
      return null;
    case "stop": {
      // A continued or interrupted stop reminds of nothing, and leaves the spool and the stop state as they are.
      const mayRemind = agent.payload.stopMayRemind(payload);
      // The edits the spool holds decide whether a reminder is due (./spool.ts).
      if (mayRemind) await drainSpool(options.cacheDir ?? cacheRoot(), SPOOLED_TOOL_CALLS);
      // A reminder the installed stop line gave without the helper counts as given (./stop-state.ts).
      const due = mayRemind ? await journal.remindersDue() : [];
      // Nothing due: the next stops may know it without the helper (./stop-state.ts).
      if (due.length === 0 && mayRemind) await journal.keepStopState();
      if (due.length === 0) return null;
      for (const task of due) await journal.markReminded(task, now());
      return agent.answers.reminder(JSON.stringify(stopReminder(due)));
    }
  }
}

/** Runs one hook on a raw stdin payload. Never throws; on any failure or timeout it answers nothing. */
export async function runHook(event: HookEvent, input: string, options: HookOptions): Promise<HookResult> {
  let payload: HookPayload;
  try {
    const parsed: unknown = JSON.parse(input);
    payload = parsed && typeof parsed === "object" ? (parsed as HookPayload) : {};
  } catch {
    payload = {};
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), HOOK_DEADLINE_MS);
  });
  try {
    const out = await Promise.race([handle(event, payload, options).catch(() => null), deadline]);
    // Some agents read a JSON object from every hook; the others take silence as "nothing to add".
    const answer = out ?? options.agent.answers.silence;
    return { stdout: answer === null ? "" : `${answer}\n` };
  } finally {
    clearTimeout(timer);
  }
}
