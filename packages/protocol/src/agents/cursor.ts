/**
 * @module agents/cursor
 * Cursor as both sides know it (from Cursor's hooks documentation: no Cursor runs on the machines
 * this is built on): the Node-free half of its definition, which the plugins (../plugin, served by
 * the Worker), `waymark init` and the helper's hooks share. Its hooks: sessionStart, afterFileEdit,
 * afterShellExecution, subagentStop (a subagent's edits) and stop, as `{command}` entries in a file
 * with `version: 1`; it reads a JSON object from every hook (`{}` says nothing), context as
 * `additional_context` and a reminder as `followup_message`; its payloads name the workspace roots and
 * the conversation, and a stop tells a continued or interrupted run by `loop_count` and `status`
 * (not by `stop_hook_active`, so its reminders are always the helper's); its MCP server entry
 * expands `${env:WAYMARK_TOKEN}`; its instructions are an always-applied rule; its plugin is
 * `.cursor-plugin/plugin.json` naming `cursor-mcp.json`, `hooks/cursor.json` and `rules/`.
 * The helper's half (init's files, what a tool call did) is client-helper/src/agents/cursor.ts.
 */
import { type AgentConfig, type HookPayload, jsonText, TOKEN_VARIABLE } from "../agent-config";

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** Cursor's MCP server entry: it expands `${env:WAYMARK_TOKEN}` from its environment. */
export function cursorMcpServer(server: { command: string; args: string[] }): Record<string, unknown> {
  return { ...server, env: { [TOKEN_VARIABLE]: `\${env:${TOKEN_VARIABLE}}` } };
}

/** The always-applied rule holding `instructions` (the plugin's: the instructions; init's: its marked block of them). */
export function cursorRule(instructions: string): string {
  return `---\ndescription: Record agent work in Waymark (workflows, tasks, decisions, issues)\nalwaysApply: true\n---\n${instructions}\n`;
}

export const CURSOR = {
  name: "cursor",
  label: "Cursor",
  hooks: (line) => [
    { event: "sessionStart", command: line["session-start"] },
    { event: "afterFileEdit", command: line["post-tool-use"] },
    { event: "afterShellExecution", command: line["post-tool-use"] },
    // A subagent's own edits: Cursor lists them in subagentStop's modified_files.
    { event: "subagentStop", command: line["post-tool-use"] },
    { event: "stop", command: line.stop },
  ],
  hooksFile: { entry: (hook) => ({ command: hook.command }), header: { version: 1 } },
  answers: {
    silence: "{}",
    context: (context) => JSON.stringify({ additional_context: context }),
    reminder: (reasonJson) => `{"followup_message":${reasonJson}}`,
    stopInShell: false,
  },
  payload: {
    workingDirectory: (payload: HookPayload) => {
      const roots = payload.workspace_roots;
      return Array.isArray(roots) && typeof roots[0] === "string" ? roots[0] : text(payload.cwd);
    },
    session: (payload) => ({ id: text(payload.session_id) ?? text(payload.conversation_id), transcript: text(payload.transcript_path) }),
    stopMayRemind: (payload) => {
      // The agent already continued once because of a stop hook: let it stop this time.
      const continued = typeof payload.loop_count === "number" && payload.loop_count > 0;
      // Cursor also stops on "aborted" and "error": the user stopped it, or it failed; no reminder then.
      const interrupted = typeof payload.status === "string" && payload.status !== "completed";
      return !continued && !interrupted;
    },
  },
  plugin: (parts) => ({
    marketplace: {
      path: ".cursor-plugin/marketplace.json",
      content: jsonText({
        name: parts.marketplace,
        owner: parts.author,
        metadata: { description: `Waymark at ${parts.origin}` },
        plugins: [{ ...parts.entry, source: `./${parts.dir}` }],
      }),
    },
    files: [
      {
        path: `${parts.dir}/.cursor-plugin/plugin.json`,
        content: jsonText({
          ...parts.entry,
          displayName: "Waymark",
          author: parts.author,
          homepage: parts.origin,
          skills: "./skills/",
          rules: "./rules/",
          mcpServers: "./cursor-mcp.json",
          hooks: "./hooks/cursor.json",
        }),
      },
      { path: `${parts.dir}/cursor-mcp.json`, content: jsonText({ mcpServers: { [parts.name]: cursorMcpServer(parts.server) } }) },
      { path: `${parts.dir}/hooks/cursor.json`, content: parts.hooks },
      { path: `${parts.dir}/rules/waymark.mdc`, content: cursorRule(parts.instructions) },
    ],
  }),
} as const satisfies AgentConfig;
