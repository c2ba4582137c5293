/**
 * @module hooks/hook-runner
 * `waymark hook <event>`: what the agent's hooks run. It reads the JSON payload the agent
 * writes on stdin and answers in that agent's documented output format:
 * - session-start: the open tasks and the last workflow of this repository, as context for
 *   the new or resumed session (Claude Code / Codex: `hookSpecificOutput.additionalContext`;
 *   Cursor: `additional_context`), enriched by `get_workflow` when the endpoint answers in time;
 * - post-tool-use: the paths the agent's own edit tools touched (or that it ran a command),
 *   appended to each open task (see `editedFiles` for what each agent reports);
 * - stop: a reminder to complete a task still open (Claude Code / Codex: `decision: "block"`
 *   with the reason, once per stop; Cursor: `followup_message`), only when the task was edited
 *   since the last reminder.
 * A hook never fails the agent: any internal error, and anything slower than its deadline,
 * ends with exit code 0 and no instruction.
 */
import { Journal, type OpenTask } from "./journal.js";
import { hasPatch, patchPaths } from "./patch.js";

export const HOOK_EVENTS = ["session-start", "post-tool-use", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
export const HOOK_AGENTS = ["claude", "cursor", "codex"] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** Claude Code's file-editing tools; their `tool_input` names the file. */
export const EDIT_TOOLS = ["Edit", "Write", "MultiEdit", "NotebookEdit"] as const;

/** Hard deadline of the one network call a hook may make. */
export const HOOK_NETWORK_MS = 300;
/** Hard deadline of a whole hook run. */
export const HOOK_DEADLINE_MS = 800;
/** What a session-start hook keeps of its deadline to answer with its local records when the endpoint is late. */
const LOCAL_ANSWER_MS = 100;
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
};

export type HookResult = { stdout: string };

type Payload = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The directory the agent works in: Claude Code's `cwd`, Cursor's first workspace root. */
function workingDirectory(payload: Payload): string {
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

async function remoteResume(options: HookOptions, workflowId: string): Promise<string | null> {
  if (!options.url) return null;
  // Loaded only here: the MCP SDK costs about what starting Node does, and post-tool-use runs on every edit.
  const { Remote } = await import("../remote.js");
  const remote = new Remote({ url: options.url, token: options.token, timeoutMs: HOOK_NETWORK_MS, version: options.version });
  try {
    const result = await remote.request("tools/call", { name: "get_workflow", arguments: { workflow_id: workflowId } });
    if (result.isError) return null;
    const block = result.content?.find((item) => item.type === "text");
    return block && block.type === "text" ? block.text : null;
  } catch {
    return null;
  } finally {
    void remote.close();
  }
}

/**
 * `get_workflow`'s text, or null when it is not there by `until` (a timestamp): loading the MCP
 * SDK alone costs about what starting Node does, more on a busy machine, and the local context
 * must still be answered within the hook's deadline.
 */
async function remoteResumeBy(options: HookOptions, workflowId: string, until: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), Math.max(0, until - Date.now()));
  });
  try {
    return await Promise.race([remoteResume(options, workflowId), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function sessionStart(journal: Journal, options: HookOptions, until: number): Promise<string | null> {
  const [tasks, workflow] = await Promise.all([journal.openTasks(), journal.lastWorkflow()]);
  if (tasks.length === 0 && !workflow) return null;
  const lines = ["Waymark: work recorded in this repository."];
  for (const task of tasks) lines.push(`Open task: ${describe(task)}. Continue it, and call complete_task when it is done.`);
  const workflowId = tasks.at(-1)?.workflow_id ?? workflow?.workflow_id ?? null;
  if (workflowId) {
    const resume = await remoteResumeBy(options, workflowId, until - LOCAL_ANSWER_MS);
    if (resume) lines.push(`Workflow state (get_workflow):\n${resume}`);
    else lines.push(`Last workflow: ${workflowId}. Call get_workflow {"workflow_id": "${workflowId}"} to resume it if it is still open.`);
  }
  const context = lines.join("\n");
  return context.length > CONTEXT_LIMIT ? `${context.slice(0, CONTEXT_LIMIT - 1)}…` : context;
}

/** The tasks the agent should be reminded of: open, and edited since the last reminder (or never reminded). */
async function needReminder(journal: Journal): Promise<OpenTask[]> {
  const due: OpenTask[] = [];
  for (const task of await journal.openTasks()) {
    const edits = await journal.editedPaths(task.task_id);
    if (task.reminded_at === undefined || (edits.last_at !== null && edits.last_at > task.reminded_at)) due.push(task);
  }
  return due;
}

function reminder(tasks: OpenTask[]): string {
  const names = tasks.map(describe).join("; ");
  return `Waymark: task ${names} is still open. If its work is done, call complete_task with its outcome; if it continues later, say so and stop.`;
}

/** `until`: the hook's deadline (a timestamp). */
async function handle(event: HookEvent, payload: Payload, options: HookOptions, until: number): Promise<string | null> {
  const now = options.now ?? Date.now;
  const journal = await Journal.forDirectory(workingDirectory(payload), options.cacheDir);
  const transcript = text(payload.transcript_path);
  const session = text(payload.session_id) ?? text(payload.conversation_id);
  if (transcript || session) {
    await journal.sessionSeen({ agent: options.agent, session_id: session, transcript_path: transcript, seen_at: now() });
  }
  switch (event) {
    case "session-start": {
      const context = await sessionStart(journal, options, until);
      if (!context) return options.agent === "cursor" ? "{}" : null;
      if (options.agent === "cursor") return JSON.stringify({ additional_context: context });
      return JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: context } });
    }
    case "post-tool-use": {
      const edited = editedFiles(payload, options.agent);
      if (edited) {
        const cwd = workingDirectory(payload);
        const relative = await Promise.all(edited.paths.map((path) => journal.relativePath(path, cwd)));
        const paths = relative.filter((path): path is string => path !== null);
        // Only paths inside the repository count; a call that named none inside it is no edit of it.
        if (paths.length > 0 || edited.paths.length === 0) await journal.recordEdits(paths, edited.tool, now());
      }
      return options.agent === "cursor" ? "{}" : null;
    }
    case "stop": {
      // The agent already continued once because of a stop hook: let it stop this time.
      const continued = payload.stop_hook_active === true || (typeof payload.loop_count === "number" && payload.loop_count > 0);
      // Cursor also stops on "aborted" and "error": the user stopped it, or it failed; no reminder then.
      const interrupted = typeof payload.status === "string" && payload.status !== "completed";
      const due = continued || interrupted ? [] : await needReminder(journal);
      if (due.length === 0) return options.agent === "cursor" ? "{}" : null;
      for (const task of due) await journal.markReminded(task, now());
      if (options.agent === "cursor") return JSON.stringify({ followup_message: reminder(due) });
      return JSON.stringify({ decision: "block", reason: reminder(due) });
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
  const until = Date.now() + HOOK_DEADLINE_MS;
  const deadline = new Promise<null>((done) => {
    timer = setTimeout(() => done(null), HOOK_DEADLINE_MS);
  });
  try {
    const out = await Promise.race([handle(event, payload, options, until).catch(() => null), deadline]);
    // Cursor reads a JSON object from every hook; the others take silence as "nothing to add".
    const answer = out ?? (options.agent === "cursor" ? "{}" : null);
    return { stdout: answer === null ? "" : `${answer}\n` };
  } finally {
    clearTimeout(timer);
  }
}
