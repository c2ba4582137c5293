/**
 * @module agents/gemini
 * Gemini CLI (a throwaway agent: counts the files adding an agent touches).
 */
import { type AgentConfig, type HookPayload, jsonText, matcherHookEntry, TOKEN_VARIABLE } from "../agent-config";

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

export function geminiMcpServer(server: { command: string; args: string[] }): Record<string, unknown> {
  return { ...server, env: { [TOKEN_VARIABLE]: `$${TOKEN_VARIABLE}` } };
}

export const GEMINI = {
  name: "gemini",
  label: "Gemini CLI",
  hooks: (line) => [
    { event: "SessionStart", command: line.sessionStart },
    { event: "AfterTool", matcher: "write_file|replace|run_shell_command", command: line.toolCall },
    { event: "AfterAgent", command: line.stop },
  ],
  hooksFile: { entry: matcherHookEntry },
  answers: {
    silence: null,
    context: (context) => JSON.stringify({ hookSpecificOutput: { additionalContext: context } }),
    reminder: (reasonJson) => `{"decision":"deny","reason":${reasonJson}}`,
    stopInShell: false,
  },
  payload: {
    workingDirectory: (payload: HookPayload) => text(payload.cwd),
    session: (payload) => ({ id: text(payload.session_id), transcript: text(payload.transcript_path) }),
    stopMayRemind: (payload) => payload.stop_hook_active !== true,
  },
  plugin: (parts) => ({
    marketplace: { path: ".gemini-marketplace.json", content: jsonText({ name: parts.marketplace, plugins: [`./${parts.dir}`] }) },
    files: [
      {
        path: `${parts.dir}/gemini-extension.json`,
        content: jsonText({ name: parts.name, version: parts.version, mcpServers: { [parts.name]: geminiMcpServer(parts.server) } }),
      },
      { path: `${parts.dir}/hooks/gemini.json`, content: parts.hooks },
    ],
  }),
} as const satisfies AgentConfig;
