/**
 * @module agents/gemini
 * Gemini CLI on the developer's machine (a throwaway agent: counts the files adding an agent touches).
 */
import { join } from "node:path";
import { mcpServerCommand } from "@waymark/protocol/agent-config";
import { GEMINI, geminiMcpServer } from "@waymark/protocol/agents/gemini";
import { type Agent, explicitExitCode, nonEmpty, objectIn, tokenCount } from "./agent.js";

export const gemini = {
  ...GEMINI,
  instructionsFile: "GEMINI.md",
  setup: async () => ({
    evidence: (ctx) => [
      { label: ".gemini/", path: join(ctx.project, ".gemini") },
      { label: "GEMINI.md", path: join(ctx.project, "GEMINI.md") },
      { label: "gemini on PATH", command: "gemini" },
    ],
    files: (ctx) => [
      {
        kind: "mcp-server",
        path: join(ctx.project, ".gemini", "settings.json"),
        server: geminiMcpServer(mcpServerCommand(ctx.endpoint, ctx.version)),
      },
      { kind: "hooks", path: join(ctx.project, ".gemini", "hooks.json") },
      { kind: "instructions", path: join(ctx.project, "GEMINI.md") },
    ],
  }),
  toolCall: (payload) => {
    const tool = nonEmpty(payload.tool_name);
    if (tool === "run_shell_command") return { tool, paths: [] };
    const path = nonEmpty(objectIn(payload.tool_input).file_path);
    return (tool === "write_file" || tool === "replace") && path ? { tool, paths: [path] } : null;
  },
  shellRun: (payload) => {
    const command = payload.tool_name === "run_shell_command" ? nonEmpty(objectIn(payload.tool_input).command) : null;
    return command ? { command, exit_code: explicitExitCode(objectIn(payload.tool_response)), duration_ms: null } : null;
  },
  capturedEdits: (payload) => {
    const input = objectIn(payload.tool_input);
    const path = nonEmpty(input.file_path);
    const content = typeof input.content === "string" ? input.content : null;
    return path && payload.tool_name === "write_file" && content !== null ? [{ path, after: content }] : [];
  },
  trace: { name: "gemini-cli", versionAt: "end" },
  transcript: {
    responses: () => (line, fromMs, toMs) => {
      const entry = objectIn(
        (() => {
          try {
            return JSON.parse(line);
          } catch {
            return null;
          }
        })(),
      );
      const tokens = objectIn(entry.tokens);
      const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
      if (typeof entry.model !== "string" || !Number.isFinite(at) || at < fromMs || at > toMs) return null;
      return {
        key: `gemini:${String(entry.id)}`,
        response: {
          model: entry.model,
          input_tokens: tokenCount(tokens.input),
          output_tokens: tokenCount(tokens.output),
          cache_creation_input_tokens: 0,
          cache_creation_1h_input_tokens: 0,
          cache_read_input_tokens: tokenCount(tokens.cached),
        },
      };
    },
    callingResponseWritten: (callId) => (line) => line.includes(JSON.stringify(callId)) && line.includes('"tokens"'),
  },
  callId: (meta) => nonEmpty(meta["gemini/callId"]) ?? undefined,
} satisfies Agent;
