/**
 * @module hooks/record
 * The moments the MCP proxy tells the hooks' journal about: a task started through the
 * helper (so hooks know it is open and attribute edits to it), a task about to complete
 * (its real usage, read from the agent's transcript, for the request), and a task completed
 * (its edited paths and transcript usage are kept). `top`: the repository top level when the
 * caller knows it (see Journal.forDirectory). Never throws: the journal is a record
 * beside the tool call, never a reason for it to fail.
 */
import { awaitTranscriptLine, type EdgeMetrics, edgeMetrics, recordsCallingResponse } from "../usage/transcript.js";
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

export async function noteTaskCompleted(
  dir: string,
  taskId: string,
  cacheDir: string | undefined,
  log: (line: string) => void,
  top?: string,
): Promise<void> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    await journal.taskCompleted(taskId, Date.now());
  } catch (error) {
    log(`waymark: could not close task ${taskId} for the hooks: ${String(error)}`);
  }
}

/**
 * The task's usage from the agent's transcript, as `complete_task` metrics; undefined when unknown.
 * It includes the response that called `complete_task`: read once the agent has written it
 * (bounded), when the agent named the call (`toolUseId`).
 */
export async function transcriptMetrics(
  dir: string,
  taskId: string,
  cacheDir: string | undefined,
  top?: string,
  toolUseId?: string,
): Promise<EdgeMetrics | undefined> {
  try {
    const at = Date.now();
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    const session = await journal.session();
    // Claude Code names the call: its transcript is read once it holds the response that made it.
    if (toolUseId !== undefined && session?.agent === "claude" && session.transcript_path) {
      await awaitTranscriptLine(session.transcript_path, (line) => recordsCallingResponse(line, toolUseId));
    }
    const summary = await journal.summarize(taskId, at);
    return summary?.usage && summary.usage.responses > 0 ? edgeMetrics(summary.usage) : undefined;
  } catch {
    return undefined;
  }
}
