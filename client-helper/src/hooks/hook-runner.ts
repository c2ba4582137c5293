/**
 * @module hooks/hook-runner
 * `waymark hook <event>`: what the agent's hooks run. It reads the JSON payload the agent
 * writes on stdin and answers in that agent's documented output format:
 * - session-start: the open tasks and the last workflow of this repository, as context for
 *   the new or resumed session (Claude Code / Codex: `hookSpecificOutput.additionalContext`;
 *   Cursor: `additional_context`), with the workflow's state as `get_workflow` tells it: fresh
 *   when the endpoint answers within the session-start budget, else as last kept (./workflow-state.ts);
 * - post-tool-use: the paths the agent's own edit tools touched (or that it ran a command),
 *   appended to each open task (see `editedFiles` for what each agent reports), what the edit
 *   did to their lines (../lines/edit-log.ts), and each shell command it ran, with its exit code
 *   and duration (./commands.ts); the installed hooks spool the payload without Node instead
 *   (./spool.ts), read here at stop and by complete_task;
 * - stop: a reminder to complete a task still open (Claude Code / Codex: `decision: "block"`
 *   with the reason, once per stop; Cursor: `followup_message`), only when the task was edited
 *   since the last reminder.
 * A hook never fails the agent: any internal error, and anything slower than its deadline,
 * ends with exit code 0 and no instruction.
 */

import { cacheRoot } from "../store.js";
import { Journal, type OpenTask } from "./journal.js";
import { hasPatch, patchPaths } from "./patch.js";
import { drainSpool, type SpoolRecorder } from "./spool.js";
import { stopReminder } from "./stop-state.js";
import { age, fetchWorkflowState } from "./workflow-state.js";

export const HOOK_EVENTS = ["session-start", "post-tool-use", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
export const HOOK_AGENTS = ["claude", "cursor", "codex"] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** Claude Code's file-editing tools; their `tool_input` names the file. */
export const EDIT_TOOLS = ["Edit", "Write", "MultiEdit", "NotebookEdit"] as const;

/**
 * What a session start may spend in all, counted from the hook process's start: Node's start-up,
 * the local records, and the one network call, which gets what is left of it (nothing left: the
 * state kept in the journal is shown instead).
 */
export const SESSION_START_BUDGET_MS = 200;
/** Hard deadline of a whole hook run. */
export const HOOK_DEADLINE_MS = 800;
/** Bound on the context a session-start hook injects. */
const CONTEXT_LIMIT = 1500;

export type HookOptions = {
  agent: HookAgent;
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

type Payload = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The directory the agent works in: Claude Code's `cwd`, Cursor's first workspace root. */
export function workingDirectory(payload: Payload): string {
  const roots = payload.workspace_roots;
  if (Array.isArray(roots) && typeof roots[0] === "string") return roots[0];
  return text(payload.cwd) ?? process.cwd();
}

/**
 * What one tool call of the agent did, as its hook payload reports it: the files its own edit
 * tools touched, or (`paths` empty) work that edits files only as a command does (a shell
 * command), recorded so the stop hook knows the task was worked on. Null: nothing to record.
 * - Claude Code: Edit, Write, MultiEdit, NotebookEdit name their file;
 * - Codex: `apply_patch` carries the patch (its headers name the files), and so does a shell
 *   command that runs apply_patch; any other shell command (`Bash`) is activity;
 * - Cursor: afterFileEdit names its file, subagentStop lists the subagent's `modified_files`,
 *   afterShellExecution is activity.
 */
export function editedFiles(payload: Payload, agent: HookAgent): { tool: string; paths: string[] } | null {
  if (agent === "cursor") return cursorEdits(payload);
  const tool = text(payload.tool_name);
  if (!tool) return null;
  const input = payload.tool_input && typeof payload.tool_input === "object" ? (payload.tool_input as Payload) : {};
  if (agent === "codex" && (tool === "apply_patch" || tool === "Bash")) {
    const command = text(input.command) ?? "";
    if (tool === "apply_patch" || hasPatch(command)) return { tool, paths: patchPaths(command) };
    return { tool, paths: [] };
  }
  if (!(EDIT_TOOLS as readonly string[]).includes(tool)) return null;
  const path = text(input.file_path) ?? text(input.notebook_path);
  return path ? { tool, paths: [path] } : null;
}

/**
 * Records what one tool call of the agent did (its hook payload) for the journal's tasks open `at`
 * it; returns how many tasks got it.
 */
export async function recordToolCall(journal: Journal, payload: Payload, agent: HookAgent, at: number): Promise<number> {
  // The payload names the agent's session as every hook's does: a session whose other hooks ran
  // without the helper (a stop answered by its shell line) is still known, for its usage.
  await noteSession(journal, payload, agent, at);
  // A shell command: the evidence of what the agent ran (./commands.ts).
  const [{ recordShellRun, shellRun }, { userCommandRules }, { LineEditLog }] = await recordingModules();
  const run = shellRun(payload, agent);
  const ran = run ? await recordShellRun(journal, run, agent, at, userCommandRules()) : 0;
  const edited = editedFiles(payload, agent);
  if (!edited) return ran;
  const cwd = workingDirectory(payload);
  const relative = await Promise.all(edited.paths.map((path) => journal.relativePath(path, cwd)));
  const paths = relative.filter((path): path is string => path !== null);
  // Only paths inside the repository count; a call that named none inside it is no edit of it.
  if (paths.length === 0 && edited.paths.length > 0) return 0;
  const recorded = await journal.recordEdits(paths, edited.tool, at);
  // What the edit did to the files' lines, for the task's line attribution (../lines/edit-log.ts):
  // read from the payload alone, so a payload spooled and recorded later says the same.
  if (paths.length > 0) await new LineEditLog(journal).record(payload, agent, at, cwd);
  return recorded;
}

let recording: Promise<
  [typeof import("./commands.js"), typeof import("../command-rules.js"), typeof import("../lines/edit-log.js")]
> | null = null;

/**
 * What recording a tool call needs beyond this module, loaded on the first one (a session start,
 * which the agent waits for, records none) and kept: a drained spool records many.
 */
function recordingModules() {
  recording ??= Promise.all([import("./commands.js"), import("../command-rules.js"), import("../lines/edit-log.js")]);
  return recording;
}

/** Notes the session a hook's payload names (its transcript tells the usage of the tasks worked in it). */
async function noteSession(journal: Journal, payload: Payload, agent: HookAgent, at: number): Promise<void> {
  const transcript = text(payload.transcript_path);
  const session = text(payload.session_id) ?? text(payload.conversation_id);
  // This helper's hooks include the shell-command hook (./commands.ts): commands are observed.
  if (transcript || session)
    await journal.sessionSeen({ agent, session_id: session, transcript_path: transcript, seen_at: at, commands: true });
}

/** The spool's payloads (./spool.ts) are the agents' post-tool-use payloads: recorded as the hook would have. */
export const SPOOLED_TOOL_CALLS: SpoolRecorder = {
  journalDir: workingDirectory,
  record: (journal, payload, agent, at) =>
    (HOOK_AGENTS as readonly string[]).includes(agent) ? recordToolCall(journal, payload, agent as HookAgent, at) : Promise.resolve(null),
};

function cursorEdits(payload: Payload): { tool: string; paths: string[] } | null {
  const event = text(payload.hook_event_name) ?? "afterFileEdit";
  if (event === "afterShellExecution") return { tool: event, paths: [] };
  if (event === "subagentStop") {
    const files = Array.isArray(payload.modified_files)
      ? payload.modified_files.filter((f): f is string => typeof f === "string" && f !== "")
      : [];
    return files.length > 0 ? { tool: event, paths: files } : null;
  }
  const path = text(payload.file_path);
  return path ? { tool: event, paths: [path] } : null;
}

function describe(task: OpenTask): string {
  const age = Math.max(0, Math.round((Date.now() - task.started_at) / 60_000));
  return `${task.task_id}${task.name ? ` "${task.name}"` : ""}${task.workflow_id ? ` in workflow ${task.workflow_id}` : ""}, started ${age} min ago`;
}

/**
 * The workflow's state for the context: fresh from the endpoint when it answers within what is left
 * of the budget (and then kept), else as last kept in the journal, with its age.
 */
async function workflowState(journal: Journal, options: HookOptions, workflowId: string): Promise<string | null> {
  const now = options.now ?? Date.now;
  const left = (options.sessionStartBudgetMs ?? SESSION_START_BUDGET_MS) - (now() - (options.startedAt ?? performance.timeOrigin));
  const fresh = options.url ? await fetchWorkflowState(options.url, options.token, workflowId, left) : null;
  if (fresh !== null) {
    await journal.keepWorkflowState(workflowId, fresh, now());
    return `Workflow state (get_workflow):\n${fresh}`;
  }
  const kept = await journal.workflowState(workflowId);
  return kept ? `Workflow state (get_workflow, ${age(kept.at, now())}):\n${kept.text}` : null;
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

async function handle(event: HookEvent, payload: Payload, options: HookOptions): Promise<string | null> {
  const now = options.now ?? Date.now;
  const journal = await Journal.forDirectory(workingDirectory(payload), options.cacheDir);
  await noteSession(journal, payload, options.agent, now());
  switch (event) {
    case "session-start": {
      const context = await sessionStart(journal, options);
      if (!context) return options.agent === "cursor" ? "{}" : null;
      if (options.agent === "cursor") return JSON.stringify({ additional_context: context });
      return JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: context } });
    }
    case "post-tool-use": {
      await recordToolCall(journal, payload, options.agent, now());
      return options.agent === "cursor" ? "{}" : null;
    }
    case "stop": {
      // The agent already continued once because of a stop hook: let it stop this time.
      const continued = payload.stop_hook_active === true || (typeof payload.loop_count === "number" && payload.loop_count > 0);
      // Cursor also stops on "aborted" and "error": the user stopped it, or it failed; no reminder then.
      const interrupted = typeof payload.status === "string" && payload.status !== "completed";
      // The edits the spool holds decide whether a reminder is due (./spool.ts).
      if (!continued && !interrupted) await drainSpool(options.cacheDir ?? cacheRoot(), SPOOLED_TOOL_CALLS);
      // A reminder the installed stop line gave without the helper counts as given (./stop-state.ts).
      const due = continued || interrupted ? [] : await journal.remindersDue();
      // Nothing due: the next stops may know it without the helper (./stop-state.ts).
      if (due.length === 0 && !continued && !interrupted) await journal.keepStopState();
      if (due.length === 0) return options.agent === "cursor" ? "{}" : null;
      for (const task of due) await journal.markReminded(task, now());
      if (options.agent === "cursor") return JSON.stringify({ followup_message: stopReminder(due) });
      return JSON.stringify({ decision: "block", reason: stopReminder(due) });
    }
  }
}

/** Runs one hook on a raw stdin payload. Never throws; on any failure or timeout it answers nothing. */
export async function runHook(event: HookEvent, input: string, options: HookOptions): Promise<HookResult> {
  let payload: Payload;
  try {
    const parsed: unknown = JSON.parse(input);
    payload = parsed && typeof parsed === "object" ? (parsed as Payload) : {};
  } catch {
    payload = {};
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), HOOK_DEADLINE_MS);
  });
  try {
    const out = await Promise.race([handle(event, payload, options).catch(() => null), deadline]);
    // Cursor reads a JSON object from every hook; the others take silence as "nothing to add".
    const answer = out ?? (options.agent === "cursor" ? "{}" : null);
    return { stdout: answer === null ? "" : `${answer}\n` };
  } finally {
    clearTimeout(timer);
  }
}
