/**
 * @module plugin
 * Waymark as a plugin for Claude Code, Codex and Cursor, and the marketplace that lists it: the
 * files of the git repository every endpoint serves (src/routes/plugin-marketplace.ts), for that
 * endpoint and the helper version it serves. Each agent lists `plugins/waymark` in its own
 * marketplace manifest and keeps its manifest and files in that one plugin directory, beside the
 * other agents', so that no agent loads another's (each agent's module in ./agents/ says which:
 * `.claude-plugin/`, `.codex-plugin/`, `.cursor-plugin/`); `skills/waymark/SKILL.md`, the
 * instructions, is every agent's.
 *
 * The same MCP server, hooks and instructions `waymark init` writes into a project (./agent-config).
 */
import { type AgentConfig, type EndpointUrls, jsonText, mcpServerCommand, type PluginFile } from "./agent-config";
import { AGENT_CONFIGS, agentHooks } from "./agents";
import { INSTRUCTIONS } from "./instructions";

export const PLUGIN_NAME = "waymark";
export const MARKETPLACE_NAME = "waymark";
/** Where every endpoint serves the marketplace: a git repository (`claude|codex plugin marketplace add <origin>/plugins/waymark.git`). */
export const MARKETPLACE_PATH = "/plugins/waymark.git";

const DESCRIPTION = "Record what the agent does in Waymark: workflows, tasks, the exact files each task changed, decisions and usage";
const PLUGIN_DIR = `plugins/${PLUGIN_NAME}`;

/** The agent's hooks file, in its layout: its entries by event. */
function hooksFile(agent: AgentConfig, endpoint: EndpointUrls, version: string): string {
  const events: Record<string, unknown[]> = {};
  for (const hook of agentHooks(agent, endpoint, version))
    events[hook.event] = [...(events[hook.event] ?? []), agent.hooksFile.entry(hook)];
  return jsonText({ ...agent.hooksFile.header, hooks: events });
}

/** The skill every agent reads: when to use Waymark's tools, and how. */
function skill(): string {
  return `---\nname: ${PLUGIN_NAME}\ndescription: Use for any substantial piece of coding work (a feature, a fix, a refactor) in a project recorded in Waymark: open or resume a workflow, start and complete tasks with the waymark MCP tools.\n---\n${INSTRUCTIONS}\n`;
}

/** Every file of the marketplace repository for this endpoint and helper version: each agent's marketplace, then its plugin files, then the skill. */
export function marketplaceFiles(endpoint: EndpointUrls, version: string): PluginFile[] {
  const server = mcpServerCommand(endpoint, version);
  const entry = { name: PLUGIN_NAME, description: DESCRIPTION, version };
  const plugins = AGENT_CONFIGS.map((agent) =>
    agent.plugin({
      name: PLUGIN_NAME,
      marketplace: MARKETPLACE_NAME,
      dir: PLUGIN_DIR,
      origin: endpoint.origin,
      version,
      entry,
      author: { name: "Waymark" },
      server,
      hooks: hooksFile(agent, endpoint, version),
      instructions: INSTRUCTIONS,
    }),
  );
  return [
    ...plugins.map((plugin) => plugin.marketplace),
    ...plugins.flatMap((plugin) => plugin.files),
    { path: `${PLUGIN_DIR}/skills/${PLUGIN_NAME}/SKILL.md`, content: skill() },
  ];
}
