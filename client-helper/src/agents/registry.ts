/**
 * @module agents/registry
 * Each agent of the one list (@waymark/protocol/agents: its names and order) bound to its module
 * here; the type makes the binding complete. Everything that goes through every agent (init,
 * doctor, the proxy) or looks one up by name (a hook's `--agent`, a spool file's, a session's)
 * starts here.
 */
import { AGENT_NAMES, type AgentName } from "@waymark/protocol/agents";
import type { Agent } from "./agent.js";
import { claude } from "./claude.js";
import { codex } from "./codex.js";
import { cursor } from "./cursor.js";

const BY_NAME: { readonly [Name in AgentName]: Agent & { readonly name: Name } } = { claude, cursor, codex };

/** Every agent, in the list's order. */
export const AGENTS: readonly Agent[] = AGENT_NAMES.map((name) => BY_NAME[name]);

/** The agent of that name, or undefined. */
export function agentNamed(name: string): Agent | undefined {
  return AGENTS.find((agent) => agent.name === name);
}
