/**
 * @module agents/codex-setup
 * Codex's setup, for `waymark init` and `waymark doctor` (./codex.ts loads it when they run; checked
 * against Codex 0.169):
 * - the MCP server in the user's `~/.codex/config.toml` (or `$CODEX_HOME`), as a marked TOML block,
 *   the token (and the cache and config dirs) forwarded from the environment with `env_vars` (Codex
 *   passes an MCP server only a few variables of its own); `[features] hooks = true` (the canonical
 *   key: `codex_hooks` is its deprecated alias) when the file has no `[features]` table of its own,
 *   which a second table of that name would break; the instructions in AGENTS.md; the hooks in
 *   `.codex/hooks.json`; found by `.codex/`, AGENTS.md, its home or `codex` on PATH;
 * - the trust steps Codex asks of the user before it runs anything a project defines: the project's
 *   `.codex/` layer is loaded only for a trusted project, and each hook only once its exact definition
 *   was reviewed and trusted (Codex records its hash): init says both, with the commands that do them,
 *   and doctor asks Codex itself (./codex-app-server.ts);
 * - its plugin enabled for the user: `[plugins."waymark@waymark"] enabled = true` in its config.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isWaymarkHookCommand, mcpServerCommand } from "@waymark/protocol/agent-config";
import { hookEvents } from "@waymark/protocol/agents";
import { CODEX, CODEX_FORWARDED_VARIABLES } from "@waymark/protocol/agents/codex";
import { removeBlock, TOML_MARKERS } from "../init/blocks.js";
import type { AgentSetup, DoctorCheck, SetupContext } from "./agent.js";
import { codexView } from "./codex-app-server.js";

/** Codex's own directory: `$CODEX_HOME`, else `~/.codex`. */
function codexHome(ctx: Pick<SetupContext, "env" | "home">): string {
  return ctx.env.CODEX_HOME && ctx.env.CODEX_HOME !== "" ? ctx.env.CODEX_HOME : join(ctx.home, ".codex");
}

const configPath = (ctx: Pick<SetupContext, "env" | "home">) => join(codexHome(ctx), "config.toml");

/** A file's content; null when it cannot be read (missing). */
const readOrNull = (path: string) => readFile(path, "utf8").catch(() => null);

/** A TOML basic string (JSON's escapes are TOML's). */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** The `[features]` table's simple `key = value` lines (values as written), outside Waymark's block. */
function codexFeatures(config: string | null): Map<string, string> | null {
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
function hooksSetting(config: string | null): { key: "hooks" | "codex_hooks"; enabled: boolean } | null {
  const features = codexFeatures(config);
  for (const key of ["hooks", "codex_hooks"] as const) {
    const value = features?.get(key);
    if (value === "true" || value === "false") return { key, enabled: value === "true" };
  }
  return null;
}

/** Waymark's block for this config.toml: the server, and `[features] hooks = true` unless the file has its own table. */
function codexBlock(config: string | null, server: { command: string; args: readonly string[] }): string {
  const features = codexFeatures(config) === null ? ["[features]", "hooks = true"] : [];
  return [
    `${TOML_MARKERS.begin} (written by \`waymark init\`; \`waymark init --remove\` takes it out)`,
    "[mcp_servers.waymark]",
    `command = ${tomlString(server.command)}`,
    `args = [${server.args.map(tomlString).join(", ")}]`,
    // Codex starts MCP servers with a few variables of its own (HOME, PATH, SHELL…) and these.
    `env_vars = [${CODEX_FORWARDED_VARIABLES.map(tomlString).join(", ")}]`,
    ...features,
    TOML_MARKERS.end,
  ].join("\n");
}

/** The events Codex's hooks are installed on, as its config names them (SessionStart…). */
const CODEX_EVENTS = hookEvents(CODEX);
/** The same as its app-server lists them (sessionStart…). */
const appServerEvent = (event: string) => `${event.charAt(0).toLowerCase()}${event.slice(1)}`;
const COUNT_WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];

/** `SessionStart, PostToolUse and Stop`. */
function inSentence(events: readonly string[]): string {
  return events.length < 2 ? (events[0] ?? "") : `${events.slice(0, -1).join(", ")} and ${events.at(-1)}`;
}

/** A TOML table header for a project path (a basic string key). */
function projectTable(project: string): string {
  return `[projects.${tomlString(project)}]`;
}

/**
 * The steps Codex asks of the user before Waymark's hooks run in this project, with the
 * commands that do them (printed by `waymark init`; `waymark doctor` checks each).
 */
async function trustSteps(ctx: SetupContext): Promise<string> {
  const home = codexHome(ctx);
  const setting = hooksSetting(await readOrNull(configPath(ctx)));
  const lines = [
    "",
    "Codex runs what a project defines only once you trust it (checked with Codex 0.169):",
    `  1. Trust the project, so Codex loads ${ctx.project}/.codex/ (the hooks): run \`codex\` in it and answer yes`,
    `     when asked to trust the folder, or add to ${home}/config.toml:`,
    `       ${projectTable(ctx.project)}`,
    '       trust_level = "trusted"',
    "     (headless: codex exec --trust …)",
    `  2. Trust Waymark's ${COUNT_WORDS[CODEX_EVENTS.length] ?? CODEX_EVENTS.length} hooks (${CODEX_EVENTS.join(", ")}): in \`codex\`, type /hooks, review them and`,
    "     trust each. Codex skips a hook it has not trusted without a word, and asks again whenever init changes",
    "     one (a new helper version). Headless runs that vetted the hooks: codex exec --dangerously-bypass-hook-trust",
    `  The MCP server needs neither: it is in your own ${home}/config.toml. waymark doctor checks both steps.`,
  ];
  if (setting && !setting.enabled) {
    lines.push(`  Hooks are turned off in ${home}/config.toml ([features] ${setting.key} = false): set hooks = true.`);
  } else if (setting?.key === "codex_hooks") {
    lines.push(`  ${home}/config.toml uses [features] codex_hooks, the deprecated name of hooks: rename it to hooks.`);
  }
  return `${lines.join("\n")}\n`;
}

/** Codex runs a project's hooks only in a trusted project and once each hook is trusted: asked of Codex itself. */
async function trustChecks(ctx: SetupContext): Promise<DoctorCheck[]> {
  const name = "Codex trust";
  const view = await codexView(ctx.project, ctx.env);
  if ("unavailable" in view) {
    return [
      {
        name,
        ok: true,
        skipped: true,
        detail: `not checked (${view.unavailable}): Codex runs the project's hooks only once the project and each hook are trusted`,
      },
    ];
  }
  const config = `${codexHome(ctx)}/config.toml`;
  const checks: DoctorCheck[] = [];
  if (view.projectDisabled) {
    checks.push({
      name,
      ok: false,
      detail: `Codex does not load ${ctx.project}/.codex/ (Waymark's hooks): ${view.projectDisabled}`,
      fix: `run \`codex\` in ${ctx.project} and answer yes when asked to trust it, or add [projects.${JSON.stringify(ctx.project)}] trust_level = "trusted" to ${config} (headless: codex exec --trust)`,
    });
  } else checks.push({ name, ok: true, detail: `Codex loads ${ctx.project}/.codex/ (a trusted project)` });
  const setting = hooksSetting(await readOrNull(config));
  if (!view.hooksEnabled) {
    checks.push({
      name: "Codex hooks",
      ok: false,
      detail: `hooks are turned off in Codex's config`,
      fix: `set [features] hooks = true in ${config}`,
    });
    return checks;
  }
  if (view.projectDisabled) return checks;
  const ours = view.hooks.filter((hook) => isWaymarkHookCommand(hook.command));
  const missing = CODEX_EVENTS.filter((event) => !ours.some((hook) => hook.event === appServerEvent(event)));
  const untrusted = ours.filter((hook) => hook.trust !== "trusted" && hook.trust !== "managed");
  const deprecated = setting?.key === "codex_hooks" ? ` (${config} uses [features] codex_hooks, the deprecated name of hooks)` : "";
  if (missing.length > 0) {
    checks.push({
      name: "Codex hooks",
      ok: false,
      detail: `Codex lists no Waymark ${missing.join(", ")} hook for ${ctx.project}`,
      fix: `run: waymark init --url ${ctx.endpoint.origin} --agent codex`,
    });
  }
  if (untrusted.length > 0) {
    const labels = untrusted.map(
      (hook) => `${CODEX_EVENTS.find((event) => appServerEvent(event) === hook.event) ?? hook.event} (${hook.trust})`,
    );
    checks.push({
      name: "Codex hooks",
      ok: false,
      detail: `Codex has not trusted Waymark's ${labels.join(", ")} hook(s), and skips them without a word${deprecated}`,
      fix: `run \`codex\` in ${ctx.project}, type /hooks, review Waymark's hooks and trust them (headless runs: codex exec --dangerously-bypass-hook-trust)`,
    });
  }
  if (missing.length === 0 && untrusted.length === 0) {
    checks.push({ name: "Codex hooks", ok: true, detail: `Codex trusts Waymark's ${inSentence(CODEX_EVENTS)} hooks${deprecated}` });
  }
  return checks;
}

export const CODEX_SETUP: AgentSetup = {
  evidence: (ctx) => [
    { label: ".codex/", path: join(ctx.project, ".codex") },
    { label: "AGENTS.md", path: join(ctx.project, "AGENTS.md") },
    { label: codexHome(ctx), path: codexHome(ctx) },
    { label: "codex on PATH", command: "codex" },
  ],
  files: (ctx) => {
    const server = mcpServerCommand(ctx.endpoint, ctx.version);
    const path = configPath(ctx);
    return [
      {
        kind: "block",
        path,
        scope: "home",
        markers: TOML_MARKERS,
        block: (content) => codexBlock(content, server),
        conflict: (outside) =>
          /^\s*\[mcp_servers\.waymark\]/m.test(outside)
            ? `${path} already defines [mcp_servers.waymark] outside Waymark's block; remove that table, then run waymark init again`
            : null,
        missing: "no [mcp_servers.waymark] block",
        stale: "the [mcp_servers.waymark] block does not run this helper",
      },
      { kind: "instructions", path: join(ctx.project, "AGENTS.md") },
      { kind: "hooks", path: join(ctx.project, ".codex", "hooks.json") },
    ];
  },
  notes: trustSteps,
  pluginEnabled: async (ctx) =>
    /^\[plugins\."waymark@waymark"\]\s*\n(?:[^[]*\n)?\s*enabled\s*=\s*true/m.test((await readOrNull(configPath(ctx))) ?? ""),
  doctorChecks: trustChecks,
};
