/**
 * @module agents
 * The agents Waymark sets up and hears from, listed once: Claude Code, Cursor and Codex, in the order
 * `waymark init` goes through them. Each one's Node-free definition is its module in ./agents/ (the
 * plugins, init's formats, what its hooks read and answer); the helper binds each to its own side
 * of the same agent (client-helper/src/agents/registry.ts), checked by type against this list.
 */
import {
  type AgentConfig,
  type EndpointUrls,
  HOOK_EVENTS,
  type HookEvent,
  type HookLines,
  type HookSpec,
  hookCommandLine,
  spoolCommand,
  stopCommand,
} from "./agent-config";
import { CLAUDE } from "./agents/claude";
import { CODEX } from "./agents/codex";
import { CURSOR } from "./agents/cursor";

export const AGENT_CONFIGS = [CLAUDE, CURSOR, CODEX] as const;

export type AgentName = (typeof AGENT_CONFIGS)[number]["name"];

export const AGENT_NAMES: readonly AgentName[] = AGENT_CONFIGS.map((agent) => agent.name);

/** The agent of that name (`--agent`, a spool file's), or undefined. */
export function agentConfig(name: string): (typeof AGENT_CONFIGS)[number] | undefined {
  return AGENT_CONFIGS.find((agent) => agent.name === name);
}

/**
 * The hooks `agent` runs, on its own events: the session's start (context: the open task), each edit
 * and shell command (the agent's own edits, recorded for provenance; the commands it ran, with their
 * exit codes, as evidence), and its stop (a reminder to complete a task it edited and left open).
 */
export function agentHooks(agent: AgentConfig, endpoint: EndpointUrls, version: string): HookSpec[] {
  const hook = (event: HookEvent) => hookCommandLine(endpoint, version, ["hook", event, "--agent", agent.name, "--url", endpoint.mcp]);
  const helper = Object.fromEntries(HOOK_EVENTS.map((event) => [event, hook(event)])) as HookLines;
  // What the agent's tools did (edits, shell commands) is spooled, for the helper to read later;
  // the stop line answers without the helper when the state it kept settles it.
  return agent.hooks({ ...helper, "post-tool-use": spoolCommand(agent), stop: stopCommand(agent, helper.stop) });
}

/** The events an agent's hooks are installed on, each once, in order. */
export function hookEvents(agent: AgentConfig): string[] {
  const lines = Object.fromEntries(HOOK_EVENTS.map((event) => [event, ""])) as HookLines;
  return [...new Set(agent.hooks(lines).map((hook) => hook.event))];
}
