/**
 * @module agents/codex
 * Codex as both sides know it (checked against Codex 0.169): the Node-free half of its definition,
 * which the plugins (../plugin, served by the Worker), `waymark init` and the helper's hooks share.
 * Its hooks: SessionStart, PostToolUse on `apply_patch` (its edit tool) and shell commands, and Stop,
 * in Claude Code's entry layout, payloads and answers (./claude); its MCP server gets the token (and
 * the cache and config dirs the hooks use) forwarded by name (`env_vars`: Codex passes an MCP server
 * only a few variables of its own); its plugin is `.codex-plugin/plugin.json`, naming
 * `codex-mcp.json` and `hooks/codex.json`, listed by `.agents/plugins/marketplace.json`.
 * The helper's half (its config.toml and trust steps, what a tool call did, its session file) is
 * client-helper/src/agents/codex.ts.
 */
import { type AgentConfig, jsonText, TOKEN_VARIABLE } from "../agent-config";
import { CLAUDE_HOOK_FORMAT } from "./claude";

/**
 * The variables Codex forwards to the MCP server: the token, and the cache and config dirs, which,
 * when set, must be the ones the hooks (which get the whole environment) use, or the proxy and the
 * hooks keep two journals.
 */
export const CODEX_FORWARDED_VARIABLES = [TOKEN_VARIABLE, "XDG_CACHE_HOME", "XDG_CONFIG_HOME"] as const;

export const CODEX = {
  name: "codex",
  label: "Codex",
  hooks: (line) => [
    { event: "SessionStart", matcher: "startup|resume|clear", command: line["session-start"] },
    // apply_patch is Codex's edit tool; a shell command may run apply_patch too (or change files as any command does).
    { event: "PostToolUse", matcher: "apply_patch|Bash", command: line["post-tool-use"] },
    { event: "Stop", command: line.stop },
  ],
  ...CLAUDE_HOOK_FORMAT,
  plugin: (parts) => ({
    marketplace: {
      path: ".agents/plugins/marketplace.json",
      content: jsonText({
        name: parts.marketplace,
        interface: { displayName: "Waymark" },
        plugins: [
          {
            name: parts.name,
            source: { source: "local", path: `./${parts.dir}` },
            policy: { installation: "AVAILABLE", authentication: "ON_INSTALL" },
            category: "Productivity",
          },
        ],
      }),
    },
    files: [
      {
        path: `${parts.dir}/.codex-plugin/plugin.json`,
        content: jsonText({
          ...parts.entry,
          author: parts.author,
          homepage: parts.origin,
          skills: "./skills/",
          mcpServers: "./codex-mcp.json",
          hooks: "./hooks/codex.json",
          interface: { displayName: "Waymark", shortDescription: "Record agent work in Waymark", category: "Productivity" },
        }),
      },
      {
        path: `${parts.dir}/codex-mcp.json`,
        content: jsonText({ mcpServers: { [parts.name]: { ...parts.server, env_vars: CODEX_FORWARDED_VARIABLES } } }),
      },
      { path: `${parts.dir}/hooks/codex.json`, content: parts.hooks },
    ],
  }),
} as const satisfies AgentConfig;
