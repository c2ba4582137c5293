/**
 * @module hooks/tool-call
 * What one tool call of the agent did, recorded for the tasks open when it ran: the paths its own
 * edit tools touched (or that it worked on the task at all: a shell command), what the edit did to
 * their lines (../lines/edit-log.ts), and the shell command it ran, with its exit code and duration
 * (./commands.ts), each read from the payload by the agent's own module (../agents/). Loaded as one
 * piece, only when a hook records a tool call (a post-tool-use run by Node, the spool drained at a
 * stop or by complete_task): a session start, or a stop with nothing spooled, never loads it.
 */
import type { HookPayload } from "@waymark/protocol/agent-config";
import { agentNamed } from "../agents/registry.js";
import { userCommandRules } from "../command-rules.js";
import { LineEditLog } from "../lines/edit-log.js";
import { recordShellRun } from "./commands.js";
import type { Journal } from "./journal.js";

/**
 * Records what one tool call of `name`'s did (its hook payload) for the journal's tasks open `at`;
 * returns how many tasks got it, or null when no agent has that name.
 */
export async function recordToolCall(journal: Journal, payload: HookPayload, name: string, at: number): Promise<number | null> {
  const agent = agentNamed(name);
  if (!agent) return null;
  // The payload names the agent's session as every hook's does: a session whose other hooks ran
  // without the helper (a stop answered by its shell line) is still known, for its usage.
  await journal.hookSession(payload, agent, at);
  const run = agent.shellRun(payload);
  const ran = run ? await recordShellRun(journal, run, agent.name, at, userCommandRules()) : 0;
  const edited = agent.toolCall(payload);
  if (!edited) return ran;
  // The directory the agent works in: its payload's, else the hook's own.
  const cwd = agent.payload.workingDirectory(payload) ?? process.cwd();
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
