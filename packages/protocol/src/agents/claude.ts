/**
 * @module agents/claude
 * Claude Code as both sides know it (checked against Claude Code 2.1): the Node-free half of its
 * definition, which the plugins (../plugin, served by the Worker), `waymark init` and the helper's
 * hooks share. Its hooks: SessionStart, PostToolUse on its edit tools and Bash (in the background),
 * PostToolUseFailure on Bash (a command that exited non-zero) and Stop, in `{matcher?, hooks: [...]}`
 * entries; its hooks read `cwd`, `session_id`, `transcript_path` and a stop's `stop_hook_active`, and
 * answer context as `hookSpecificOutput.additionalContext` and a reminder as `decision: "block"`;
 * its MCP server entry expands `${WAYMARK_TOKEN}` itself; its plugin is `.claude-plugin/plugin.json`
 * with `.mcp.json` and `hooks/hooks.json` where Claude Code looks for them.
 * The helper's half (init's files, what a tool call did, the transcript) is
 * client-helper/src/agents/claude.ts.
 */
import {
  type AgentConfig,
  type HookAnswers,
  type HookPayload,
  type HookPayloadFields,
  type HookSpec,
  jsonText,
  TOKEN_VARIABLE,
} from "../agent-config";

const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** What Claude Code's hooks answer. */
const ANSWERS: HookAnswers = {
  silence: null,
  context: (context) => JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: context } }),
  reminder: (reasonJson) => `{"decision":"block","reason":${reasonJson}}`,
  stopInShell: true,
};

/** The fields of Claude Code's hook payloads every hook reads. */
const PAYLOAD: HookPayloadFields = {
  workingDirectory: (payload: HookPayload) => text(payload.cwd),
  session: (payload) => ({ id: text(payload.session_id), transcript: text(payload.transcript_path) }),
  // The agent already continued once because of a stop hook: let it stop this time.
  stopMayRemind: (payload) => payload.stop_hook_active !== true,
};

/** A hook's entry in Claude Code's hooks file (Codex's too): `{matcher?, hooks: [{type, command, timeout, async?}]}`. */
function matcherHookEntry(hook: HookSpec): Record<string, unknown> {
  return {
    ...(hook.matcher ? { matcher: hook.matcher } : {}),
    hooks: [{ type: "command", command: hook.command, timeout: 10, ...(hook.async ? { async: true } : {}) }],
  };
}

/** Claude Code's hooks: their entries, the payload fields every hook reads and their answers; Codex's hooks take the same (./codex). */
export const CLAUDE_HOOK_FORMAT = {
  hooksFile: { entry: matcherHookEntry },
  answers: ANSWERS,
  payload: PAYLOAD,
} as const satisfies Pick<AgentConfig, "hooksFile" | "answers" | "payload">;

/** Claude Code's MCP server entry: it expands `${WAYMARK_TOKEN}` from its own environment. */
export function claudeMcpServer(server: { command: string; args: string[] }): Record<string, unknown> {
  return { ...server, env: { [TOKEN_VARIABLE]: `\${${TOKEN_VARIABLE}}` } };
}

export const CLAUDE = {
  name: "claude",
  label: "Claude Code",
  hooks: (line) => [
    { event: "SessionStart", matcher: "startup|resume|clear|compact", command: line["session-start"] },
    // Recording an edit or a command answers nothing: it runs in the background and never delays the agent.
    { event: "PostToolUse", matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash", command: line["post-tool-use"], async: true },
    // A shell command that exited non-zero reaches this event instead, with its exit code.
    { event: "PostToolUseFailure", matcher: "Bash", command: line["post-tool-use"], async: true },
    { event: "Stop", command: line.stop },
  ],
  ...CLAUDE_HOOK_FORMAT,
  plugin: (parts) => ({
    marketplace: {
      path: ".claude-plugin/marketplace.json",
      content: jsonText({
        name: parts.marketplace,
        owner: parts.author,
        metadata: { description: `Waymark at ${parts.origin}`, version: parts.version },
        plugins: [{ ...parts.entry, source: `./${parts.dir}` }],
      }),
    },
    files: [
      {
        path: `${parts.dir}/.claude-plugin/plugin.json`,
        content: jsonText({ ...parts.entry, author: parts.author, homepage: parts.origin }),
      },
      { path: `${parts.dir}/.mcp.json`, content: jsonText({ mcpServers: { [parts.name]: claudeMcpServer(parts.server) } }) },
      { path: `${parts.dir}/hooks/hooks.json`, content: parts.hooks },
    ],
  }),
} as const satisfies AgentConfig;
