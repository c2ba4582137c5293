/**
 * @module lines/inputs
 * What complete_task's line attribution reads from the hooks' records of one task: the agent's
 * edits (./edit-log.ts), whether any hook observed the task at all (an edit, or any tool call the
 * journal recorded: without one, every added line is "not observed"), and the agent and its
 * version as its hooks or transcript report them (Agent Trace's `tool`: each agent's module says
 * its name there and where its transcript writes its version). Never throws: without records the
 * task is simply not observed.
 */
import { open } from "node:fs/promises";
import type { AgentTool } from "@waymark/protocol/wire";
import type { Agent } from "../agents/agent.js";
import { agentNamed } from "../agents/registry.js";
import { Journal } from "../hooks/journal.js";
import type { LineInputs } from "./attribute.js";
import { LineEditLog, type LoggedEdit } from "./edit-log.js";

/** Bytes of a transcript read for the agent's version, at its start or its end (Agent's `trace.versionAt`). */
const VERSION_BYTES = 64 * 1024;
const VERSION = /"(?:version|cli_version)":"([0-9A-Za-z.+-]{1,64})"/g;

async function transcriptVersion(path: string, at: Agent["trace"]["versionAt"]): Promise<string | undefined> {
  const file = await open(path, "r").catch(() => null);
  if (!file) return undefined;
  try {
    const { size } = await file.stat();
    const from = at === "start" ? 0 : Math.max(0, size - VERSION_BYTES);
    const buffer = Buffer.alloc(Math.min(VERSION_BYTES, size));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, from);
    const found = [...buffer.toString("utf8", 0, bytesRead).matchAll(VERSION)].map((match) => match[1]);
    return at === "start" ? found[0] : found.at(-1);
  } catch {
    return undefined;
  } finally {
    await file.close();
  }
}

async function agentTool(journal: Journal, edits: readonly LoggedEdit[]): Promise<AgentTool | undefined> {
  const session = await journal.session();
  if (!session) return undefined;
  const trace = agentNamed(session.agent)?.trace;
  const tool: AgentTool = { name: trace?.name ?? session.agent.slice(0, 64) };
  const version =
    edits.findLast((edit) => edit.version !== undefined)?.version ??
    (session.transcript_path ? await transcriptVersion(session.transcript_path, trace?.versionAt ?? "end") : undefined);
  if (version) tool.version = version;
  return tool;
}

/** The task's line inputs from this repository's journal (`top`: its top level when known). */
export async function lineInputs(
  dir: string,
  taskId: string,
  cacheDir: string | undefined,
  scratchRoot: string,
  top?: string,
): Promise<LineInputs> {
  try {
    const journal = await Journal.forDirectory(dir, cacheDir, top);
    const [edits, recorded] = await Promise.all([new LineEditLog(journal).edits(taskId), journal.editedPaths(taskId)]);
    // Observed: a hook recorded an edit of the task's, or at least a tool call during it.
    if (edits === null && recorded.last_at === null) return { edits: null, scratchRoot };
    const known = edits ?? [];
    const tool = await agentTool(journal, known);
    return tool ? { edits: known, tool, scratchRoot } : { edits: known, scratchRoot };
  } catch {
    return { edits: null, scratchRoot };
  }
}

/** Forgets the task's line edits once it completed (its contents are no longer needed). Never throws. */
export async function forgetLineEdits(dir: string, taskId: string, cacheDir: string | undefined, top?: string): Promise<void> {
  try {
    await new LineEditLog(await Journal.forDirectory(dir, cacheDir, top)).forget(taskId);
  } catch {
    // Left for the age-based removal.
  }
}
