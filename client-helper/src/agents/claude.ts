/**
 * @module agents/claude
 * Claude Code on the developer's machine (checked against Claude Code 2.1; the Node-free half, its
 * hooks, answers and plugin, is @waymark/protocol/agents/claude):
 * - init: the `waymark` server in `.mcp.json` (project scope; `${WAYMARK_TOKEN}` is expanded by
 *   Claude Code), the hooks in `.claude/settings.json`, the instructions in CLAUDE.md; found by
 *   `.claude/`, CLAUDE.md, `.mcp.json`, `~/.claude/` or `claude` on PATH; its plugin is enabled in
 *   `~/.claude/settings.json`;
 * - its tool calls (PostToolUse, PostToolUseFailure): Edit, Write, MultiEdit and NotebookEdit name
 *   their file; Write gives the new content, Edit and MultiEdit the strings replaced, and the tool's
 *   response the whole content before the edit (`originalFile`), so the content after is exact even
 *   when someone else changed the file between two edits (NotebookEdit edits cells, not lines: not
 *   followed); Bash reports its command and duration after it exited 0 (PostToolUse;
 *   `tool_response.interrupted`), its exit code after it did not (PostToolUseFailure: `error` starts
 *   with "Exit code N"); a command sent to the background has no exit code yet;
 * - its transcript: one JSON object per line (`transcript_path`); each model response is an
 *   `assistant` line whose `message` carries `model`, `id` and `usage` (`input_tokens`,
 *   `output_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`, and `cache_creation`
 *   split by cache lifetime); one response may be written on several lines (one per content block,
 *   while it streams) with the same `message.id`; subagents write their own files under
 *   `<session>/subagents/`; its version is on every line; it names a tool call
 *   `_meta["claudecode/toolUseId"]`, and the response that made the call is the line with that
 *   tool_use id and the response's usage.
 */
import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { mcpServerCommand } from "@waymark/protocol/agent-config";
import { CLAUDE, claudeMcpServer } from "@waymark/protocol/agents/claude";
import { applyReplacements, CAPTURE_LIMITS, type CapturedEdit, NOT_FOLLOWED, type Replacement, tooLarge } from "../lines/capture.js";
import { type Agent, durationMs, explicitExitCode, nonEmpty, objectIn, type TranscriptResponse, tokenCount } from "./agent.js";

type Payload = Record<string, unknown>;

/** Claude Code's file-editing tools; their `tool_input` names the file. */
const EDIT_TOOLS = ["Edit", "Write", "MultiEdit", "NotebookEdit"] as const;

/** Its instructions, relative to the project. */
const INSTRUCTIONS_FILE = "CLAUDE.md";

/** A string, empty included (an empty old string creates a file, an empty content is a content). */
const string = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** The model response a transcript line records, with the key that identifies it (its message id), or null. */
function responseOf(line: string, fromMs: number, toMs: number): TranscriptResponse | null {
  if (!line.includes('"usage"')) return null;
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return null;
  }
  if (!entry || typeof entry !== "object") return null;
  const { message, timestamp, requestId, uuid } = entry as Record<string, unknown>;
  if (!message || typeof message !== "object") return null;
  const { usage, model, id } = message as Record<string, unknown>;
  if (!usage || typeof usage !== "object" || typeof model !== "string" || model === "<synthetic>") return null;
  const at = typeof timestamp === "string" ? Date.parse(timestamp) : Number.NaN;
  if (!Number.isFinite(at) || at < fromMs || at > toMs) return null;
  const u = usage as Record<string, unknown>;
  const split = u.cache_creation && typeof u.cache_creation === "object" ? (u.cache_creation as Record<string, unknown>) : {};
  const key = typeof id === "string" ? `m:${id}` : typeof requestId === "string" ? `r:${requestId}` : `u:${String(uuid)}`;
  return {
    key,
    response: {
      model,
      input_tokens: tokenCount(u.input_tokens),
      output_tokens: tokenCount(u.output_tokens),
      cache_creation_input_tokens: tokenCount(u.cache_creation_input_tokens),
      cache_creation_1h_input_tokens: tokenCount(split.ephemeral_1h_input_tokens),
      cache_read_input_tokens: tokenCount(u.cache_read_input_tokens),
    },
  };
}

function edits(tool: string | null, input: Payload, response: Payload): CapturedEdit[] {
  const path = string(input.file_path) ?? string(input.notebook_path);
  if (!path) return [];
  if (tool === "NotebookEdit") return [{ path, skipped: "a notebook's cells were edited, not its lines" }];
  // The content before the edit, as the tool read it (null: Write created the file).
  const original = string(response.originalFile) ?? string(response.originalFileContents);
  const created = response.type === "create" || (tool === "Write" && "originalFile" in response && response.originalFile === null);
  const before = original ?? (created ? null : undefined);
  if (tooLarge(before)) return [{ path, skipped: NOT_FOLLOWED.TOO_LARGE }];
  if (tool === "Write") {
    const content = string(input.content);
    if (content === null) return [];
    if (tooLarge(content)) return [{ path, skipped: NOT_FOLLOWED.TOO_LARGE }];
    return [before === undefined ? { path, after: content } : { path, before, after: content }];
  }
  const replacements = replacementsOf(tool, input, response);
  if (replacements === null) return [];
  if (replacements.length > CAPTURE_LIMITS.REPLACEMENTS) return [{ path, skipped: NOT_FOLLOWED.TOO_MANY }];
  if (before === undefined) return [{ path, replacements }];
  const after = applyReplacements(before ?? "", replacements);
  if (after === null) return [{ path, before, skipped: NOT_FOLLOWED.NOT_REPLAYED }];
  if (tooLarge(after)) return [{ path, skipped: NOT_FOLLOWED.TOO_LARGE }];
  return [{ path, before, after }];
}

/** Edit's one replacement (as the tool response says it applied it, when it says), MultiEdit's list. */
function replacementsOf(tool: string | null, input: Payload, response: Payload): Replacement[] | null {
  if (tool === "Edit") {
    const old = string(response.oldString) ?? string(input.old_string);
    const replaced = string(response.newString) ?? string(input.new_string);
    if (old === null || replaced === null) return null;
    const all = response.replaceAll === true || input.replace_all === true;
    return [all ? { old, new: replaced, all } : { old, new: replaced }];
  }
  if (tool === "MultiEdit") {
    const list = Array.isArray(input.edits) ? input.edits : [];
    const replacements: Replacement[] = [];
    for (const edit of list) {
      const e = objectIn(edit);
      const old = string(e.old_string);
      const replaced = string(e.new_string);
      if (old === null || replaced === null) return null;
      replacements.push(e.replace_all === true ? { old, new: replaced, all: true } : { old, new: replaced });
    }
    return replacements;
  }
  return null;
}

export const claude = {
  ...CLAUDE,
  instructionsFile: INSTRUCTIONS_FILE,
  setup: {
    evidence: (ctx) => [
      { label: ".claude/", path: join(ctx.project, ".claude") },
      { label: INSTRUCTIONS_FILE, path: join(ctx.project, INSTRUCTIONS_FILE) },
      { label: ".mcp.json", path: join(ctx.project, ".mcp.json") },
      { label: "~/.claude/", path: join(ctx.home, ".claude") },
      { label: "claude on PATH", command: "claude" },
    ],
    files: (ctx) => [
      {
        kind: "mcp-server",
        path: join(ctx.project, ".mcp.json"),
        server: { type: "stdio", ...claudeMcpServer(mcpServerCommand(ctx.endpoint, ctx.version)) },
      },
      { kind: "hooks", path: join(ctx.project, ".claude", "settings.json") },
      { kind: "instructions", path: join(ctx.project, INSTRUCTIONS_FILE) },
    ],
    pluginEnabled: async (ctx) => {
      const settings = await readFile(join(ctx.home, ".claude", "settings.json"), "utf8").catch(() => "");
      return /"waymark@waymark"\s*:\s*true/.test(settings);
    },
  },

  toolCall: (payload) => {
    const tool = nonEmpty(payload.tool_name);
    if (!tool || !(EDIT_TOOLS as readonly string[]).includes(tool)) return null;
    const input = objectIn(payload.tool_input);
    const path = nonEmpty(input.file_path) ?? nonEmpty(input.notebook_path);
    return path ? { tool, paths: [path] } : null;
  },
  shellRun: (payload) => {
    if (payload.tool_name !== "Bash") return null;
    const input = objectIn(payload.tool_input);
    const command = nonEmpty(input.command);
    if (!command) return null;
    const ms = durationMs(payload.duration_ms);
    if (payload.hook_event_name === "PostToolUseFailure") {
      const code = /^Exit code (-?\d{1,10})\b/.exec(nonEmpty(payload.error) ?? "");
      return { command, exit_code: code && payload.is_interrupt !== true ? Number(code[1]) : null, duration_ms: ms };
    }
    const response = objectIn(payload.tool_response);
    // PostToolUse runs only after a command that succeeded; one sent to the background has not ended yet.
    const ended = response.interrupted !== true && input.run_in_background !== true && response.backgroundTaskId === undefined;
    return { command, exit_code: explicitExitCode(response) ?? (ended ? 0 : null), duration_ms: ended ? ms : null };
  },
  capturedEdits: (payload) => edits(string(payload.tool_name), objectIn(payload.tool_input), objectIn(payload.tool_response)),

  trace: { name: "claude-code", versionAt: "end" },
  transcript: {
    responses: () => responseOf,
    // The transcripts of the subagents a session started: `<dir>/<session id>/subagents/*.jsonl`.
    moreFiles: async (path) => {
      const folder = join(dirname(path), basename(path).replace(/\.jsonl$/, ""), "subagents");
      const names = await readdir(folder).catch(() => [] as string[]);
      return names.filter((name) => name.endsWith(".jsonl")).map((name) => join(folder, name));
    },
    // The response's own line: it carries the tool_use block with that id and the response's usage
    // (a tool result names it as tool_use_id).
    callingResponseWritten: (callId) => {
      const id = JSON.stringify(callId);
      return (line) => line.includes('"usage"') && line.includes(`"id":${id}`);
    },
  },
  callId: (meta) => nonEmpty(meta["claudecode/toolUseId"]) ?? undefined,
} satisfies Agent;
