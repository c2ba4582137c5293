/**
 * @module plugin
 * Waymark as a plugin for Claude Code, Codex and Cursor, and the marketplace that lists it: the
 * files of the git repository every endpoint serves (src/routes/plugin-marketplace.ts), for that
 * endpoint and the helper version it serves. One plugin directory holds each agent's manifest
 * and its own files beside them, so that no agent loads another's:
 *
 * - `.claude-plugin/marketplace.json`, `.agents/plugins/marketplace.json` (Codex) and
 *   `.cursor-plugin/marketplace.json` list `plugins/waymark`;
 * - `plugins/waymark/.claude-plugin/plugin.json`: Claude Code finds `.mcp.json`,
 *   `hooks/hooks.json` and `skills/` where it looks by default;
 * - `plugins/waymark/.codex-plugin/plugin.json` names `codex-mcp.json` (the token forwarded with
 *   `env_vars`) and `hooks/codex.json`;
 * - `plugins/waymark/.cursor-plugin/plugin.json` names `cursor-mcp.json`, `hooks/cursor.json`
 *   and the always-applied rule in `rules/`;
 * - `skills/waymark/SKILL.md`: the instructions, for every agent.
 *
 * The same MCP server, hooks and instructions `waymark init` writes into a project (./agent-config).
 */
import { type AgentName, agentHooks, type EndpointUrls, matcherHookEntry, mcpServerCommand, TOKEN_VARIABLE } from "./agent-config";
import { INSTRUCTIONS } from "./instructions";

export const PLUGIN_NAME = "waymark";
export const MARKETPLACE_NAME = "waymark";
/** Where every endpoint serves the marketplace: a git repository (`claude|codex plugin marketplace add <origin>/plugins/waymark.git`). */
export const MARKETPLACE_PATH = "/plugins/waymark.git";

export type PluginFile = { path: string; content: string };

const DESCRIPTION = "Record what the agent does in Waymark: workflows, tasks, the exact files each task changed, decisions and usage";
const PLUGIN_DIR = `plugins/${PLUGIN_NAME}`;

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function hooksByEvent(
  agent: AgentName,
  endpoint: EndpointUrls,
  version: string,
  entry: (hook: ReturnType<typeof agentHooks>[number]) => unknown,
) {
  const events: Record<string, unknown[]> = {};
  for (const hook of agentHooks(agent, endpoint, version)) events[hook.event] = [...(events[hook.event] ?? []), entry(hook)];
  return events;
}

/** The skill every agent reads: when to use Waymark's tools, and how. */
function skill(): string {
  return `---\nname: ${PLUGIN_NAME}\ndescription: Use for any substantial piece of coding work (a feature, a fix, a refactor) in a project recorded in Waymark: open or resume a workflow, start and complete tasks with the waymark MCP tools.\n---\n${INSTRUCTIONS}\n`;
}

/** Every file of the marketplace repository for this endpoint and helper version. */
export function marketplaceFiles(endpoint: EndpointUrls, version: string): PluginFile[] {
  const server = mcpServerCommand(endpoint, version);
  const entry = { name: PLUGIN_NAME, description: DESCRIPTION, version };
  const author = { name: "Waymark" };
  return [
    {
      path: ".claude-plugin/marketplace.json",
      content: json({
        name: MARKETPLACE_NAME,
        owner: author,
        metadata: { description: `Waymark at ${endpoint.origin}`, version },
        plugins: [{ ...entry, source: `./${PLUGIN_DIR}` }],
      }),
    },
    {
      path: ".agents/plugins/marketplace.json",
      content: json({
        name: MARKETPLACE_NAME,
        interface: { displayName: "Waymark" },
        plugins: [
          {
            name: PLUGIN_NAME,
            source: { source: "local", path: `./${PLUGIN_DIR}` },
            policy: { installation: "AVAILABLE", authentication: "ON_INSTALL" },
            category: "Productivity",
          },
        ],
      }),
    },
    {
      path: ".cursor-plugin/marketplace.json",
      content: json({
        name: MARKETPLACE_NAME,
        owner: author,
        metadata: { description: `Waymark at ${endpoint.origin}` },
        plugins: [{ ...entry, source: `./${PLUGIN_DIR}` }],
      }),
    },
    { path: `${PLUGIN_DIR}/.claude-plugin/plugin.json`, content: json({ ...entry, author, homepage: endpoint.origin }) },
    {
      path: `${PLUGIN_DIR}/.mcp.json`,
      content: json({ mcpServers: { [PLUGIN_NAME]: { ...server, env: { [TOKEN_VARIABLE]: `\${${TOKEN_VARIABLE}}` } } } }),
    },
    { path: `${PLUGIN_DIR}/hooks/hooks.json`, content: json({ hooks: hooksByEvent("claude", endpoint, version, matcherHookEntry) }) },
    {
      path: `${PLUGIN_DIR}/.codex-plugin/plugin.json`,
      content: json({
        ...entry,
        author,
        homepage: endpoint.origin,
        skills: "./skills/",
        mcpServers: "./codex-mcp.json",
        hooks: "./hooks/codex.json",
        interface: { displayName: "Waymark", shortDescription: "Record agent work in Waymark", category: "Productivity" },
      }),
    },
    {
      path: `${PLUGIN_DIR}/codex-mcp.json`,
      // Codex passes an MCP server only a few variables of its own: the token, and the cache and
      // config dirs the hooks use, are forwarded by name.
      content: json({ mcpServers: { [PLUGIN_NAME]: { ...server, env_vars: [TOKEN_VARIABLE, "XDG_CACHE_HOME", "XDG_CONFIG_HOME"] } } }),
    },
    { path: `${PLUGIN_DIR}/hooks/codex.json`, content: json({ hooks: hooksByEvent("codex", endpoint, version, matcherHookEntry) }) },
    {
      path: `${PLUGIN_DIR}/.cursor-plugin/plugin.json`,
      content: json({
        ...entry,
        displayName: "Waymark",
        author,
        homepage: endpoint.origin,
        skills: "./skills/",
        rules: "./rules/",
        mcpServers: "./cursor-mcp.json",
        hooks: "./hooks/cursor.json",
      }),
    },
    {
      path: `${PLUGIN_DIR}/cursor-mcp.json`,
      content: json({ mcpServers: { [PLUGIN_NAME]: { ...server, env: { [TOKEN_VARIABLE]: `\${env:${TOKEN_VARIABLE}}` } } } }),
    },
    {
      path: `${PLUGIN_DIR}/hooks/cursor.json`,
      content: json({ version: 1, hooks: hooksByEvent("cursor", endpoint, version, (hook) => ({ command: hook.command })) }),
    },
    {
      path: `${PLUGIN_DIR}/rules/waymark.mdc`,
      content: `---\ndescription: Record agent work in Waymark (workflows, tasks, decisions, issues)\nalwaysApply: true\n---\n${INSTRUCTIONS}\n`,
    },
    { path: `${PLUGIN_DIR}/skills/${PLUGIN_NAME}/SKILL.md`, content: skill() },
  ];
}
