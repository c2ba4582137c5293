/**
 * @module init/agents
 * What `waymark init` writes for each agent, in that agent's current formats:
 * - Claude Code: the `waymark` server in `.mcp.json` (project scope; `${WAYMARK_TOKEN}` is
 *   expanded by Claude Code), hooks in `.claude/settings.json` (SessionStart, PostToolUse on
 *   Edit|Write|MultiEdit|NotebookEdit|Bash, PostToolUseFailure on Bash, Stop), the instructions
 *   in CLAUDE.md;
 * - Cursor: `.cursor/mcp.json` (`${env:WAYMARK_TOKEN}`), the rule `.cursor/rules/waymark.mdc`,
 *   hooks in `.cursor/hooks.json` (sessionStart, afterFileEdit, afterShellExecution,
 *   subagentStop, stop);
 * - Codex: `[mcp_servers.waymark]` in `~/.codex/config.toml` (./codex.ts), the instructions in
 *   AGENTS.md, and the SessionStart, PostToolUse (apply_patch and shell commands) and Stop hooks
 *   in `.codex/hooks.json` (run once the project and each hook are trusted: ./codex.ts).
 * Each file edit can be applied, undone and checked (for `waymark doctor`).
 */
import { join, relative } from "node:path";
import {
  agentHooks,
  type HookSpec,
  isWaymarkHookCommand,
  matcherHookEntry,
  mcpServerCommand,
  TOKEN_VARIABLE,
} from "@waymark/protocol/agent-config";
import { INSTRUCTIONS } from "@waymark/protocol/instructions";
import type { Endpoint } from "../endpoint.js";
import { blockBody, hasBlock, MARKDOWN_MARKERS, removeBlock, upsertBlock } from "./blocks.js";
import { codexConfigEdit } from "./codex.js";
import type { FileEdit } from "./file-edit.js";
import {
  arrayAt,
  deleteIfEmpty,
  formatJson,
  isObject,
  type JsonObject,
  objectAt,
  parseJsonFile,
  removeEntries,
  upsertEntry,
} from "./json-file.js";

export const AGENTS = ["claude", "cursor", "codex"] as const;
export type AgentName = (typeof AGENTS)[number];
export const AGENT_LABELS: Record<AgentName, string> = { claude: "Claude Code", cursor: "Cursor", codex: "Codex" };

export type Context = {
  /** The project directory (repository top level). */
  project: string;
  home: string;
  /** `$CODEX_HOME`, else `~/.codex`. */
  codexHome: string;
  endpoint: Endpoint;
  version: string;
};

export const SERVER_NAME = "waymark";

function mcpArgs(ctx: Context): { command: string; args: string[] } {
  return mcpServerCommand(ctx.endpoint, ctx.version);
}

/** Markdown instructions block. */
function markdownBlock(): string {
  return `${MARKDOWN_MARKERS.begin} (written by \`waymark init\`; \`waymark init --remove\` takes it out) -->\n${INSTRUCTIONS}\n${MARKDOWN_MARKERS.end}`;
}

function markdownEdit(agent: AgentName, path: string): FileEdit {
  const block = markdownBlock();
  return {
    agent,
    path,
    scope: "project",
    apply: (content) => upsertBlock(content, block),
    remove: (content) => (content === null ? null : removeBlock(content, MARKDOWN_MARKERS)),
    check: (content) => {
      if (content === null || !hasBlock(content, MARKDOWN_MARKERS)) return "no Waymark instructions block";
      return blockBody(content, MARKDOWN_MARKERS) === INSTRUCTIONS ? null : "the Waymark instructions block is out of date";
    },
  };
}

/** A JSON file edit from a function that puts our entries in (`add`) and one that takes them out. */
function jsonEdit(
  agent: AgentName,
  path: string,
  scope: FileEdit["scope"],
  add: (root: JsonObject) => void,
  take: (root: JsonObject) => void,
  check: (root: JsonObject) => string | null,
): FileEdit {
  return {
    agent,
    path,
    scope,
    apply: (content) => {
      const root = parseJsonFile(path, content);
      add(root);
      return formatJson(root, content);
    },
    remove: (content) => {
      if (content === null) return null;
      const root = parseJsonFile(path, content);
      take(root);
      return Object.keys(root).length === 0 ? null : formatJson(root, content);
    },
    check: (content) => {
      if (content === null) return "missing";
      try {
        return check(parseJsonFile(path, content));
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    },
  };
}

function sameJson(left: unknown, right: unknown): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}

function mcpServerEdit(agent: AgentName, path: string, server: JsonObject): FileEdit {
  return jsonEdit(
    agent,
    path,
    "project",
    (root) => {
      objectAt(root, "mcpServers", path)[SERVER_NAME] = server;
    },
    (root) => {
      const servers = root.mcpServers;
      if (!isObject(servers)) return;
      delete servers[SERVER_NAME];
      deleteIfEmpty(root, "mcpServers");
    },
    (root) => {
      const found = isObject(root.mcpServers) ? root.mcpServers[SERVER_NAME] : undefined;
      if (found === undefined) return `no "${SERVER_NAME}" server`;
      return sameJson(found, server) ? null : `the "${SERVER_NAME}" server does not run this helper (${JSON.stringify(found)})`;
    },
  );
}

/** A hook entry that runs `waymark hook`, in either layout. */
function isOurs(entry: unknown): boolean {
  if (!isObject(entry)) return false;
  if (isWaymarkHookCommand(entry.command)) return true;
  return Array.isArray(entry.hooks) && entry.hooks.some((hook) => isObject(hook) && isWaymarkHookCommand(hook.command));
}

/**
 * Hooks in `hooks.<event>: [entry, ...]`, one entry of ours per event, built by `entry`:
 * Claude Code's and Codex's layout ({matcher?, hooks: [{type, command, timeout}]}) or
 * Cursor's ({command}, with the file's `version`).
 */
function eventHooksEdit(
  agent: AgentName,
  path: string,
  hooks: HookSpec[],
  entry: (hook: HookSpec) => JsonObject,
  versioned: boolean,
): FileEdit {
  return jsonEdit(
    agent,
    path,
    "project",
    (root) => {
      if (versioned && root.version === undefined) root.version = 1;
      const events = objectAt(root, "hooks", path);
      for (const hook of hooks) upsertEntry(arrayAt(events, hook.event, `${path} hooks`), entry(hook), isOurs);
    },
    (root) => {
      const events = root.hooks;
      if (isObject(events)) for (const hook of hooks) removeEntries(events, hook.event, isOurs);
      deleteIfEmpty(root, "hooks");
      if (versioned && root.hooks === undefined && root.version === 1 && Object.keys(root).length === 1) delete root.version;
    },
    (root) => {
      const events = isObject(root.hooks) ? root.hooks : {};
      const problems: string[] = [];
      for (const hook of hooks) {
        const list = Array.isArray(events[hook.event]) ? (events[hook.event] as unknown[]) : [];
        const found = list.find(isOurs);
        if (!found) problems.push(`no ${hook.event} hook`);
        else if (!sameJson(found, entry(hook))) problems.push(`the ${hook.event} hook does not run this helper`);
      }
      return problems.length === 0 ? null : problems.join("; ");
    },
  );
}

function matcherHooksEdit(agent: AgentName, path: string, hooks: HookSpec[]): FileEdit {
  return eventHooksEdit(agent, path, hooks, matcherHookEntry, false);
}

function cursorHooksEdit(path: string, hooks: HookSpec[]): FileEdit {
  return eventHooksEdit("cursor", path, hooks, (hook) => ({ command: hook.command }), true);
}

function cursorRuleEdit(path: string): FileEdit {
  const rule = `---\ndescription: Record agent work in Waymark (workflows, tasks, decisions, issues)\nalwaysApply: true\n---\n${markdownBlock()}\n`;
  return {
    agent: "cursor",
    path,
    scope: "project",
    apply: (content) => (content === null || hasBlock(content, MARKDOWN_MARKERS) ? rule : upsertBlock(content, markdownBlock())),
    remove: (content) => (content === rule ? null : content === null ? null : removeBlock(content, MARKDOWN_MARKERS)),
    check: (content) => (content === null ? "missing" : content === rule ? null : "the Waymark rule is out of date"),
  };
}

/** Every file edit of one agent. */
export function agentEdits(agent: AgentName, ctx: Context): FileEdit[] {
  const project = (...parts: string[]) => join(ctx.project, ...parts);
  switch (agent) {
    case "claude": {
      const { command, args } = mcpArgs(ctx);
      return [
        mcpServerEdit("claude", project(".mcp.json"), { type: "stdio", command, args, env: { [TOKEN_VARIABLE]: `\${${TOKEN_VARIABLE}}` } }),
        matcherHooksEdit("claude", project(".claude", "settings.json"), agentHooks("claude", ctx.endpoint, ctx.version)),
        markdownEdit("claude", project("CLAUDE.md")),
      ];
    }
    case "cursor": {
      const { command, args } = mcpArgs(ctx);
      return [
        mcpServerEdit("cursor", project(".cursor", "mcp.json"), { command, args, env: { [TOKEN_VARIABLE]: `\${env:${TOKEN_VARIABLE}}` } }),
        cursorRuleEdit(project(".cursor", "rules", "waymark.mdc")),
        cursorHooksEdit(project(".cursor", "hooks.json"), agentHooks("cursor", ctx.endpoint, ctx.version)),
      ];
    }
    case "codex":
      return [
        codexConfigEdit(join(ctx.codexHome, "config.toml"), mcpArgs(ctx)),
        markdownEdit("codex", project("AGENTS.md")),
        matcherHooksEdit("codex", project(".codex", "hooks.json"), agentHooks("codex", ctx.endpoint, ctx.version)),
      ];
  }
}

/** A path as the user reads it: relative to the project, or under ~. */
export function displayPath(path: string, ctx: Pick<Context, "project" | "home">): string {
  const inProject = relative(ctx.project, path);
  if (!inProject.startsWith("..")) return inProject;
  const inHome = relative(ctx.home, path);
  return inHome.startsWith("..") ? path : `~/${inHome}`;
}
