/**
 * @module init/codex
 * What Codex (0.169, checked against the real CLI) needs beyond the files every agent gets:
 * - the MCP server in the user's `~/.codex/config.toml` (or `$CODEX_HOME`), as a marked TOML
 *   block, the token (and the cache and config dirs) forwarded from the environment with
 *   `env_vars` (Codex passes an MCP server only a few variables of its own); `[features] hooks = true`
 *   (the canonical key: `codex_hooks` is its deprecated alias) when the file has no `[features]`
 *   table of its own, which a second table of that name would break;
 * - the trust steps Codex asks of the user before it runs anything a project defines: the
 *   project's `.codex/` layer is loaded only for a trusted project, and each hook only once its
 *   exact definition was reviewed and trusted (Codex records its hash), so `waymark init` says
 *   both, with the commands that do them.
 */

import { TOKEN_VARIABLE } from "@waymark/protocol/agent-config";
import { blockBody, hasBlock, removeBlock, TOML_MARKERS, upsertBlock } from "./blocks.js";
import type { FileEdit } from "./file-edit.js";

/** A TOML basic string (JSON's escapes are TOML's). */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** The `[features]` table's simple `key = value` lines (values as written), outside Waymark's block. */
export function codexFeatures(config: string | null): Map<string, string> | null {
  const outside = config === null ? "" : (removeBlock(config, TOML_MARKERS) ?? "");
  let inFeatures = false;
  let found = false;
  const keys = new Map<string, string>();
  for (const line of outside.split("\n")) {
    const table = /^\s*\[\s*([^\]]+?)\s*\]\s*(?:#.*)?$/.exec(line);
    if (table) {
      inFeatures = table[1] === "features";
      found ||= inFeatures;
      continue;
    }
    const dotted = /^\s*features\.([A-Za-z0-9_-]+)\s*=\s*([^#]*?)\s*(?:#.*)?$/.exec(line);
    if (dotted?.[1] && dotted[2] !== undefined && !inFeatures) {
      found = true;
      keys.set(dotted[1], dotted[2]);
      continue;
    }
    if (/^\s*features\s*=/.test(line)) found = true;
    const key = inFeatures ? /^\s*([A-Za-z0-9_-]+)\s*=\s*([^#]*?)\s*(?:#.*)?$/.exec(line) : null;
    if (key?.[1] && key[2] !== undefined) keys.set(key[1], key[2]);
  }
  return found ? keys : null;
}

/** What the user's own `[features]` says about hooks: null when it says nothing. */
export function hooksSetting(config: string | null): { key: "hooks" | "codex_hooks"; enabled: boolean } | null {
  const features = codexFeatures(config);
  for (const key of ["hooks", "codex_hooks"] as const) {
    const value = features?.get(key);
    if (value === "true" || value === "false") return { key, enabled: value === "true" };
  }
  return null;
}

/** Waymark's block for this config.toml: the server, and `[features] hooks = true` unless the file has its own table. */
function codexBlock(config: string | null, command: string, args: readonly string[]): string {
  const features = codexFeatures(config) === null ? ["[features]", "hooks = true"] : [];
  return [
    `${TOML_MARKERS.begin} (written by \`waymark init\`; \`waymark init --remove\` takes it out)`,
    "[mcp_servers.waymark]",
    `command = ${tomlString(command)}`,
    `args = [${args.map(tomlString).join(", ")}]`,
    // Codex starts MCP servers with a few variables of its own (HOME, PATH, SHELL…) and these:
    // the cache and config dirs, when set, must be the ones the hooks (which get the whole
    // environment) use, or the proxy and the hooks keep two journals.
    `env_vars = [${[TOKEN_VARIABLE, "XDG_CACHE_HOME", "XDG_CONFIG_HOME"].map(tomlString).join(", ")}]`,
    ...features,
    TOML_MARKERS.end,
  ].join("\n");
}

export function codexConfigEdit(path: string, server: { command: string; args: string[] }): FileEdit {
  const table = /^\s*\[mcp_servers\.waymark\]/m;
  return {
    agent: "codex",
    path,
    scope: "home",
    apply: (content) => {
      const outside = content === null ? "" : (removeBlock(content, TOML_MARKERS) ?? "");
      if (table.test(outside)) {
        throw new Error(
          `${path} already defines [mcp_servers.waymark] outside Waymark's block; remove that table, then run waymark init again`,
        );
      }
      return upsertBlock(content, codexBlock(content, server.command, server.args));
    },
    remove: (content) => (content === null ? null : removeBlock(content, TOML_MARKERS)),
    check: (content) => {
      if (content === null || !hasBlock(content, TOML_MARKERS)) return "no [mcp_servers.waymark] block";
      const expected = blockBody(codexBlock(content, server.command, server.args), TOML_MARKERS);
      return blockBody(content, TOML_MARKERS) === expected ? null : "the [mcp_servers.waymark] block does not run this helper";
    },
  };
}

/** A TOML table header for a project path (a basic string key). */
function projectTable(project: string): string {
  return `[projects.${tomlString(project)}]`;
}

/**
 * The steps Codex asks of the user before Waymark's hooks run in this project, with the
 * commands that do them (printed by `waymark init`; `waymark doctor` checks each).
 */
export function codexTrustSteps(project: string, codexHome: string, config: string | null): string {
  const setting = hooksSetting(config);
  const lines = [
    "",
    "Codex runs what a project defines only once you trust it (checked with Codex 0.169):",
    `  1. Trust the project, so Codex loads ${project}/.codex/ (the hooks): run \`codex\` in it and answer yes`,
    `     when asked to trust the folder, or add to ${codexHome}/config.toml:`,
    `       ${projectTable(project)}`,
    '       trust_level = "trusted"',
    "     (headless: codex exec --trust …)",
    "  2. Trust Waymark's three hooks (SessionStart, PostToolUse, Stop): in `codex`, type /hooks, review them and",
    "     trust each. Codex skips a hook it has not trusted without a word, and asks again whenever init changes",
    "     one (a new helper version). Headless runs that vetted the hooks: codex exec --dangerously-bypass-hook-trust",
    `  The MCP server needs neither: it is in your own ${codexHome}/config.toml. waymark doctor checks both steps.`,
  ];
  if (setting && !setting.enabled) {
    lines.push(`  Hooks are turned off in ${codexHome}/config.toml ([features] ${setting.key} = false): set hooks = true.`);
  } else if (setting?.key === "codex_hooks") {
    lines.push(`  ${codexHome}/config.toml uses [features] codex_hooks, the deprecated name of hooks: rename it to hooks.`);
  }
  return `${lines.join("\n")}\n`;
}
