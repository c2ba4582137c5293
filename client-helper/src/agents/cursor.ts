/**
 * @module agents/cursor
 * Cursor on the developer's machine (from Cursor's hooks documentation: no Cursor runs on the machines
 * this is built on, so its payloads are tested in the documented format; the Node-free half, its
 * hooks, answers and plugin, is @waymark/protocol/agents/cursor):
 * - init: `.cursor/mcp.json` (`${env:WAYMARK_TOKEN}`), the always-applied rule
 *   `.cursor/rules/waymark.mdc`, the hooks in `.cursor/hooks.json`; found by `.cursor/`,
 *   `.cursorrules`, `~/.cursor/` or `cursor-agent` on PATH;
 * - its tool calls: afterFileEdit names its file and the strings it replaced, subagentStop lists the
 *   subagent's `modified_files`, afterShellExecution its command and `duration` (no exit code); its
 *   payloads name its version (`cursor_version`);
 * - no transcript that tells usage.
 */
import { join } from "node:path";
import { mcpServerCommand } from "@waymark/protocol/agent-config";
import { CURSOR, cursorMcpServer, cursorRule } from "@waymark/protocol/agents/cursor";
import { CAPTURE_LIMITS, NOT_FOLLOWED, type Replacement } from "../lines/capture.js";
import { type Agent, durationMs, nonEmpty, objectIn, wholeNumber } from "./agent.js";

/** Its instructions, relative to the project. */
const INSTRUCTIONS_FILE = ".cursor/rules/waymark.mdc";

/** A string, empty included. */
const string = (value: unknown): string | null => (typeof value === "string" ? value : null);

export const cursor = {
  ...CURSOR,
  instructionsFile: INSTRUCTIONS_FILE,
  setup: {
    evidence: (ctx) => [
      { label: ".cursor/", path: join(ctx.project, ".cursor") },
      { label: ".cursorrules", path: join(ctx.project, ".cursorrules") },
      { label: "~/.cursor/", path: join(ctx.home, ".cursor") },
      { label: "cursor-agent on PATH", command: "cursor-agent" },
    ],
    files: (ctx) => [
      {
        kind: "mcp-server",
        path: join(ctx.project, ".cursor", "mcp.json"),
        server: cursorMcpServer(mcpServerCommand(ctx.endpoint, ctx.version)),
      },
      { kind: "instructions-file", path: join(ctx.project, INSTRUCTIONS_FILE), wrap: cursorRule },
      { kind: "hooks", path: join(ctx.project, ".cursor", "hooks.json") },
    ],
  },

  toolCall: (payload) => {
    const event = nonEmpty(payload.hook_event_name) ?? "afterFileEdit";
    if (event === "afterShellExecution") return { tool: event, paths: [] };
    if (event === "subagentStop") {
      const files = Array.isArray(payload.modified_files)
        ? payload.modified_files.filter((f): f is string => typeof f === "string" && f !== "")
        : [];
      return files.length > 0 ? { tool: event, paths: files } : null;
    }
    const path = nonEmpty(payload.file_path);
    return path ? { tool: event, paths: [path] } : null;
  },
  shellRun: (payload) => {
    if (payload.hook_event_name !== "afterShellExecution") return null;
    const command = nonEmpty(payload.command);
    return command
      ? { command, exit_code: wholeNumber(payload.exit_code) ?? wholeNumber(payload.exitCode), duration_ms: durationMs(payload.duration) }
      : null;
  },
  capturedEdits: (payload) => {
    const event = string(payload.hook_event_name) ?? "afterFileEdit";
    const path = string(payload.file_path);
    if (event !== "afterFileEdit" || !path || !Array.isArray(payload.edits)) return [];
    const replacements: Replacement[] = [];
    for (const edit of payload.edits) {
      const e = objectIn(edit);
      const old = string(e.old_string);
      const replaced = string(e.new_string);
      if (old === null || replaced === null) return [{ path, skipped: NOT_FOLLOWED.NOT_REPLAYED }];
      replacements.push({ old, new: replaced });
    }
    if (replacements.length > CAPTURE_LIMITS.REPLACEMENTS) return [{ path, skipped: NOT_FOLLOWED.TOO_MANY }];
    return replacements.length === 0 ? [] : [{ path, replacements }];
  },
  payloadVersion: (payload) => (typeof payload.cursor_version === "string" ? payload.cursor_version.slice(0, 64) : undefined),

  trace: { name: "cursor", versionAt: "end" },
  transcript: null,
} satisfies Agent;
