/**
 * @module hooks/record
 * The moments the MCP proxy tells the hooks' journal about: a task started through the
 * helper (so hooks know it is open and attribute edits to it), a task about to complete
 * (its real usage, read from the agent's transcript, for the request), and a task completed
 * (its edited paths and transcript usage are kept). `top`: the repository top level when the
 * caller knows it (see Journal.forDirectory); and the workflow's state after either, for the next
 * session's context. Never throws: the journal is a record
 * beside the tool call, never a reason for it to fail.
 */
import { agentNamed } from "../agents/registry.js";
import { awaitTranscriptLine, type EdgeMetrics, edgeMetrics, type TranscriptUsage, transcriptUsage } from "../usage/transcript.js";
import { Journal } from "./journal.js";

export async function noteTaskStarted(
  dir: string,
  taskId: string,
  input: Record<string, unknown>,
  cacheDir: string | undefined,
  log: (line: string) => void,
  top?: string,
): Promise<void> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    await journal.taskStarted({
      task_id: taskId,
      workflow_id: typeof input.workflow_id === "string" ? input.workflow_id : null,
      name: typeof input.name === "string" ? input.name : null,
      started_at: Date.now(),
    });
  } catch (error) {
    log(`waymark: could not note task ${taskId} for the hooks: ${String(error)}`);
  }
}

/**
 * `read`: the task's usage as its completion already read it from the transcript (transcriptMetrics),
 * kept instead of reading the transcript again; read now when undefined.
 */
export async function noteTaskCompleted(
  dir: string,
  taskId: string,
  cacheDir: string | undefined,
  log: (line: string) => void,
  top?: string,
  read?: TranscriptUsage | null,
): Promise<void> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    await journal.taskCompleted(taskId, Date.now(), read === undefined ? transcriptUsage : async () => read);
  } catch (error) {
    log(`waymark: could not close task ${taskId} for the hooks: ${String(error)}`);
  }
}

/** The workflow's state as the endpoint told it (get_workflow's text), kept for the next session's context (./workflow-state.ts). */
export async function noteWorkflowState(
  dir: string,
  workflowId: string,
  text: string,
  cacheDir: string | undefined,
  top?: string,
): Promise<void> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    await journal.keepWorkflowState(workflowId, text, Date.now());
  } catch {
    // The next session start asks the endpoint itself.
  }
}

/** The task's usage as read from the agent's transcript (`read`), and as `complete_task` metrics when it has any. */
export type TaskUsage = { metrics: EdgeMetrics | undefined; read: TranscriptUsage | null };

/**
 * The task's usage from the agent's transcript; undefined when the task is not open in the journal.
 * It includes the response that called `complete_task`: read once the agent has written its usage
 * (bounded), when the agent named the call (`callId`).
 */
export async function transcriptMetrics(
  dir: string,
  taskId: string,
  cacheDir: string | undefined,
  top?: string,
  callId?: string,
): Promise<TaskUsage | undefined> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    const session = await journal.session();
    // The agent named the call: its transcript is read once it holds the usage of the response that made it,
    // which may be dated after the call came in (Codex dates it when the response ended).
    const transcript = session ? agentNamed(session.agent)?.transcript : undefined;
    if (callId !== undefined && session?.transcript_path && transcript) {
      await awaitTranscriptLine(session.transcript_path, transcript.callingResponseWritten(callId));
    }
    const summary = await journal.summarize(taskId, Date.now(), transcriptUsage);
    if (!summary) return undefined;
    return { metrics: summary.usage && summary.usage.responses > 0 ? edgeMetrics(summary.usage) : undefined, read: summary.usage };
  } catch {
    return undefined;
  }
}
