/**
 * @module init/config-files
 * What `waymark init` writes for an agent, made from the files its setup declares
 * (../agents/<agent>.ts, `setup.files`) in that agent's formats: the `waymark` MCP server entry of a
 * JSON file, its hooks in its hooks file (its layout: @waymark/protocol/agents/<agent>), the
 * instructions as a marked block in a Markdown file or as a file of their own, and a marked block
 * of the agent's own (Codex's config.toml). Only Waymark's part of each file is touched; each edit
 * can be applied, undone and checked (for `waymark doctor`).
 */
import { relative } from "node:path";
import { isWaymarkHookCommand } from "@waymark/protocol/agent-config";
import { agentHooks } from "@waymark/protocol/agents";
import { INSTRUCTIONS } from "@waymark/protocol/instructions";
import type { Agent, SetupContext, SetupFile } from "../agents/agent.js";
import { blockBody, hasBlock, MARKDOWN_MARKERS, removeBlock, replaceBlock, upsertBlock } from "./blocks.js";
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
import { splitTomlBlock } from "./toml-block.js";

const SERVER_NAME = "waymark";

/** Markdown instructions block. */
function markdownBlock(): string {
  return `${MARKDOWN_MARKERS.begin} (written by \`waymark init\`; \`waymark init --remove\` takes it out) -->\n${INSTRUCTIONS}\n${MARKDOWN_MARKERS.end}`;
}

/**
 * A marked block in a file the user owns: written in place, taken out byte for byte, checked against
 * what init writes. A TOML block keeps what the agent's own CLI wrote into it (./toml-block.ts).
 */
function blockEdit(file: Extract<SetupFile, { kind: "block" }>): FileEdit {
  const { path, markers } = file;
  /** The block's current parts, when it is TOML and there (null: nothing of anyone else's to keep). */
  const parts = (content: string | null) => {
    const body = content === null ? null : blockBody(content, markers);
    return file.toml && body !== null ? splitTomlBlock(body, file.block(content), file.toml.keepOnRemove) : null;
  };
  return {
    path,
    scope: file.scope,
    apply: (content) => {
      const outside = content === null ? "" : (removeBlock(content, markers) ?? "");
      const conflict = file.conflict?.(outside);
      if (conflict) throw new Error(conflict);
      const split = parts(content);
      if (content === null || split === null) return upsertBlock(content, file.block(content));
      return replaceBlock(content, markers, `${split.before}${split.block}\n${split.after}`);
    },
    remove: (content) => {
      if (content === null) return null;
      const split = parts(content);
      return split === null ? removeBlock(content, markers) : replaceBlock(content, markers, split.removed);
    },
    check: (content) => {
      if (content === null || !hasBlock(content, markers)) return file.missing;
      const split = parts(content);
      if (split !== null) return split.owned === split.expected ? null : file.stale;
      return blockBody(content, markers) === blockBody(file.block(content), markers) ? null : file.stale;
    },
  };
}

/** A JSON file edit from a function that puts our entries in (`add`) and one that takes them out. */
function jsonEdit(
  path: string,
  add: (root: JsonObject) => void,
  take: (root: JsonObject) => void,
  check: (root: JsonObject) => string | null,
): FileEdit {
  return {
    path,
    scope: "project",
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

function mcpServerEdit(path: string, server: JsonObject): FileEdit {
  return jsonEdit(
    path,
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
 * The agent's hooks in `hooks.<event>: [entry, ...]`, one entry of ours per event, in its layout
 * (its `hooksFile`: the entry, and the keys the file has beside `hooks`, such as Cursor's `version`).
 */
function hooksEdit(agent: Agent, path: string, ctx: SetupContext): FileEdit {
  const hooks = agentHooks(agent, ctx.endpoint, ctx.version);
  const { entry, header = {} } = agent.hooksFile;
  return jsonEdit(
    path,
    (root) => {
      for (const [key, value] of Object.entries(header)) if (root[key] === undefined) root[key] = value;
      const events = objectAt(root, "hooks", path);
      for (const hook of hooks) upsertEntry(arrayAt(events, hook.event, `${path} hooks`), entry(hook), isOurs);
    },
    (root) => {
      const events = root.hooks;
      if (isObject(events)) for (const hook of hooks) removeEntries(events, hook.event, isOurs);
      deleteIfEmpty(root, "hooks");
      // The keys init put beside the hooks go with them when nothing else is left.
      const keys = Object.keys(root);
      if (keys.length > 0 && keys.every((key) => key in header && sameJson(root[key], header[key])))
        for (const key of keys) delete root[key];
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

/** The instructions as a file of Waymark's own, or as its block where the user wrote around it. */
function instructionsFileEdit(path: string, wrap: (block: string) => string): FileEdit {
  const file = wrap(markdownBlock());
  return {
    path,
    scope: "project",
    apply: (content) => (content === null || hasBlock(content, MARKDOWN_MARKERS) ? file : upsertBlock(content, markdownBlock())),
    remove: (content) => (content === file ? null : content === null ? null : removeBlock(content, MARKDOWN_MARKERS)),
    check: (content) => (content === null ? "missing" : content === file ? null : "the Waymark rule is out of date"),
  };
}

function fileEdit(agent: Agent, file: SetupFile, ctx: SetupContext): FileEdit {
  switch (file.kind) {
    case "mcp-server":
      return mcpServerEdit(file.path, file.server);
    case "hooks":
      return hooksEdit(agent, file.path, ctx);
    case "instructions":
      return blockEdit({
        kind: "block",
        path: file.path,
        scope: "project",
        markers: MARKDOWN_MARKERS,
        block: markdownBlock,
        missing: "no Waymark instructions block",
        stale: "the Waymark instructions block is out of date",
      });
    case "instructions-file":
      return instructionsFileEdit(file.path, file.wrap);
    case "block":
      return blockEdit(file);
  }
}

/** Every file edit of one agent. */
export function agentEdits(agent: Agent, ctx: SetupContext): FileEdit[] {
  return agent.setup.files(ctx).map((file) => fileEdit(agent, file, ctx));
}

/** A path as the user reads it: relative to the project, or under ~. */
export function displayPath(path: string, ctx: Pick<SetupContext, "project" | "home">): string {
  const inProject = relative(ctx.project, path);
  if (!inProject.startsWith("..")) return inProject;
  const inHome = relative(ctx.home, path);
  return inHome.startsWith("..") ? path : `~/${inHome}`;
}
