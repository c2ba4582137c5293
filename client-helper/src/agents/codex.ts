/**
 * @module agents/codex
 * Codex on the developer's machine (checked against Codex 0.169; the Node-free half, its hooks,
 * answers and plugin, is @waymark/protocol/agents/codex):
 * - init: the MCP server in the user's `~/.codex/config.toml` (or `$CODEX_HOME`), as a marked TOML
 *   block, the token (and the cache and config dirs) forwarded from the environment with `env_vars`
 *   (Codex passes an MCP server only a few variables of its own); `[features] hooks = true` (the
 *   canonical key: `codex_hooks` is its deprecated alias) when the file has no `[features]` table of
 *   its own, which a second table of that name would break; the instructions in AGENTS.md; the hooks
 *   in `.codex/hooks.json`; found by `.codex/`, AGENTS.md, its home or `codex` on PATH; its plugin is
 *   enabled by `[plugins."waymark@waymark"] enabled = true` in its config;
 * - the trust steps Codex asks of the user before it runs anything a project defines: the project's
 *   `.codex/` layer is loaded only for a trusted project, and each hook only once its exact definition
 *   was reviewed and trusted (Codex records its hash): init says both, with the commands that do them,
 *   and doctor asks Codex itself (./codex-app-server.ts);
 * - its tool calls (PostToolUse): `apply_patch` carries the patch (./codex-patch.ts: its headers name
 *   the files; files added with their content, deleted, or updated by chunks), and so does a shell
 *   command that runs apply_patch; any other shell command (`Bash`) is work on the task, reported with
 *   its command and output only: its exit code and duration are read at complete_task from its session
 *   file, by the call's id;
 * - its session ("rollout") file, the `transcript_path` of its payloads
 *   (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`):
 *   `{"type":"turn_context","payload":{"turn_id":…,"model":…}}` opens each turn with its model;
 *   `{"type":"token_usage_record","timestamp":…,"payload":{"turn_id":…,"response_id":…,"usage":
 *   {"input_tokens","cached_input_tokens","cache_write_input_tokens","output_tokens",
 *   "reasoning_output_tokens","total_tokens"}}}` follows each model response. OpenAI's counts nest:
 *   cached and cache-write tokens are part of `input_tokens`, reasoning tokens part of
 *   `output_tokens` (observed: total = input + output); they are split here into the disjoint counts
 *   the price table uses. Cumulative `token_count` events are not counted (they would count every
 *   response again). `item_completed` events of a `CommandExecution` item carry a command's exit code
 *   and duration. Codex names a tool call `_meta.callId`, writes a response's items as they stream and
 *   its usage once the response ends, which may be after it ran the call (observed: 500 ms later when
 *   the model streamed 500 ms past the call's item). Its version is in the file's first line.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isWaymarkHookCommand, mcpServerCommand } from "@waymark/protocol/agent-config";
import { agentHooks, hookEvents } from "@waymark/protocol/agents";
import { CODEX, CODEX_FORWARDED_VARIABLES } from "@waymark/protocol/agents/codex";
import { removeBlock, TOML_MARKERS } from "../init/blocks.js";
import { type CapturedEdit, NOT_FOLLOWED, tooLarge } from "../lines/capture.js";
import { boundedLines } from "../usage/lines.js";
import {
  type Agent,
  type CommandResult,
  type DoctorCheck,
  durationMs,
  explicitExitCode,
  nonEmpty,
  objectIn,
  type SetupContext,
  type TranscriptResponse,
  tokenCount,
  wholeNumber,
} from "./agent.js";
import { codexView, trustInCodex } from "./codex-app-server.js";
import { hasPatch, parsePatch, patchPaths, patchText } from "./codex-patch.js";

/** Its instructions, relative to the project. */
const INSTRUCTIONS_FILE = "AGENTS.md";

/** A string, empty included. */
const string = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** A rollout line longer than this is a command with huge output: its exit code is not read. */
const ROLLOUT_LINE_BYTES = 4 * 1024 * 1024;

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
/** The event as Codex's config names it, from the app-server's name. */
const eventLabel = (event: string) => CODEX_EVENTS.find((name) => appServerEvent(name) === event) ?? event;
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
    `  2. Trust Waymark's ${COUNT_WORDS[CODEX_EVENTS.length] ?? CODEX_EVENTS.length} hooks (${CODEX_EVENTS.join(", ")}): in \`codex\`, type /hooks, review them and`,
    "     trust each. Codex skips a hook it has not trusted without a word, and asks again whenever init changes",
    "     one (a new helper version).",
    `  Headless (no \`codex\` UI): waymark init --url ${ctx.endpoint.origin} --agent codex --trust has Codex save both, for`,
    "     the hooks exactly as init wrote them (codex exec --dangerously-bypass-hook-trust runs hooks once, saving nothing).",
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
      fix: `run \`codex\` in ${ctx.project} and answer yes when asked to trust it, or add [projects.${JSON.stringify(ctx.project)}] trust_level = "trusted" to ${config} (headless: waymark init --url ${ctx.endpoint.origin} --agent codex --trust)`,
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
    const labels = untrusted.map((hook) => `${eventLabel(hook.event)} (${hook.trust})`);
    checks.push({
      name: "Codex hooks",
      ok: false,
      detail: `Codex has not trusted Waymark's ${labels.join(", ")} hook(s), and skips them without a word${deprecated}`,
      fix: `run \`codex\` in ${ctx.project}, type /hooks, review Waymark's hooks and trust them (headless: waymark init --url ${ctx.endpoint.origin} --agent codex --trust)`,
    });
  }
  if (missing.length === 0 && untrusted.length === 0) {
    checks.push({ name: "Codex hooks", ok: true, detail: `Codex trusts Waymark's ${inSentence(CODEX_EVENTS)} hooks${deprecated}` });
  }
  return checks;
}

/** `init --trust`: Codex trusts the project and Waymark's hooks as init wrote them, as /hooks would after a review. */
async function giveTrust(ctx: SetupContext): Promise<string> {
  const expected = agentHooks(CODEX, ctx.endpoint, ctx.version).map((hook) => ({
    event: appServerEvent(hook.event),
    matcher: hook.matcher ?? null,
    command: hook.command,
  }));
  const given = await trustInCodex(ctx.project, expected, ctx.env);
  if ("unavailable" in given) {
    return `\nCodex trust: not given (${given.unavailable}). Trust the project and Waymark's hooks in \`codex\` instead:${await trustSteps(ctx)}`;
  }
  const config = configPath(ctx);
  const lines = [
    "",
    given.project
      ? `Codex now trusts ${ctx.project} (it loads its .codex/, Waymark's hooks): written by Codex in ${config}`
      : `Codex already trusted ${ctx.project}`,
    ...given.hooks.map(
      (hook) =>
        `Codex ${hook.already ? "already trusted" : "now trusts"} Waymark's ${eventLabel(hook.event)} hook (${hook.hash}), as init wrote it`,
    ),
    ...given.missing.map(
      (event) => `Codex does not list Waymark's ${eventLabel(event)} hook as init wrote it: not trusted (waymark doctor says more)`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

/** A patch's files as line edits. */
function patchEdits(patch: string): CapturedEdit[] {
  const edits: CapturedEdit[] = [];
  for (const file of parsePatch(patch)) {
    if (file.kind === "add")
      edits.push(tooLarge(file.content) ? { path: file.path, skipped: NOT_FOLLOWED.TOO_LARGE } : { path: file.path, after: file.content });
    else if (file.kind === "delete") edits.push({ path: file.path, after: null });
    else if (file.moveTo === null) edits.push({ path: file.path, chunks: file.chunks });
    else {
      // The old path is gone; the new one holds the old content with the chunks applied.
      edits.push({ path: file.path, after: null });
      edits.push({ path: file.moveTo, movedFrom: file.path, chunks: file.chunks });
    }
  }
  return edits;
}

type RolloutEntry = { type?: unknown; timestamp?: unknown; payload?: Record<string, unknown> };

/** A reader of one rollout file: the model of each turn, as its turn_context said, then each response's usage under it. */
function rolloutResponses(): (line: string, fromMs: number, toMs: number) => TranscriptResponse | null {
  const models = new Map<string, string>();
  let lastModel: string | null = null;
  return (line, fromMs, toMs) => {
    // Cheap: no parsing of the lines this reader does not need.
    if (!line.includes('"type":"token_usage_record"') && !line.includes('"type":"turn_context"')) return null;
    let entry: RolloutEntry;
    try {
      entry = JSON.parse(line) as RolloutEntry;
    } catch {
      return null;
    }
    const payload = entry.payload && typeof entry.payload === "object" ? entry.payload : null;
    if (!payload) return null;
    const turn = typeof payload.turn_id === "string" ? payload.turn_id : null;
    if (entry.type === "turn_context") {
      if (typeof payload.model === "string" && payload.model !== "") {
        lastModel = payload.model;
        if (turn) models.set(turn, payload.model);
      }
      return null;
    }
    if (entry.type !== "token_usage_record") return null;
    const usage = payload.usage && typeof payload.usage === "object" ? (payload.usage as Record<string, unknown>) : null;
    const model = (turn ? models.get(turn) : undefined) ?? lastModel;
    if (!usage || !model) return null;
    const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
    if (!Number.isFinite(at) || at < fromMs || at > toMs) return null;
    const cached = tokenCount(usage.cached_input_tokens);
    const written = tokenCount(usage.cache_write_input_tokens);
    const id = typeof payload.response_id === "string" ? payload.response_id : `${turn}:${at}`;
    return {
      key: `codex:${id}`,
      response: {
        model,
        input_tokens: Math.max(0, tokenCount(usage.input_tokens) - cached - written),
        output_tokens: tokenCount(usage.output_tokens),
        cache_creation_input_tokens: written,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: cached,
      },
    };
  };
}

/** Exit codes and durations from the session file: `item_completed` events of a `CommandExecution` item, by the item's id. */
async function commandResults(path: string, ids: ReadonlySet<string>): Promise<Map<string, CommandResult>> {
  const found = new Map<string, CommandResult>();
  try {
    for await (const line of boundedLines(path, ROLLOUT_LINE_BYTES)) {
      if (!line.includes('"CommandExecution"') || !line.includes('"item_completed"')) continue;
      const entry = JSON.parse(line) as { payload?: { type?: unknown; item?: unknown } };
      const item = entry.payload?.type === "item_completed" ? objectIn(entry.payload.item) : {};
      const id = nonEmpty(item.id);
      if (item.type !== "CommandExecution" || !id || !ids.has(id)) continue;
      const spent = objectIn(item.duration);
      const ms = typeof spent.secs === "number" && typeof spent.nanos === "number" ? spent.secs * 1000 + spent.nanos / 1e6 : null;
      found.set(id, { exit_code: wholeNumber(item.exit_code), duration_ms: durationMs(ms) });
      if (found.size === ids.size) break;
    }
  } catch {
    // Unreadable: those exit codes stay not observed.
  }
  return found;
}

export const codex = {
  ...CODEX,
  instructionsFile: INSTRUCTIONS_FILE,
  setup: {
    evidence: (ctx) => [
      { label: ".codex/", path: join(ctx.project, ".codex") },
      { label: INSTRUCTIONS_FILE, path: join(ctx.project, INSTRUCTIONS_FILE) },
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
          // Codex appends its own tables (project trust, hook trust) inside the block when it is last in the file.
          toml: { keepOnRemove: ["features"] },
        },
        { kind: "instructions", path: join(ctx.project, INSTRUCTIONS_FILE) },
        { kind: "hooks", path: join(ctx.project, ".codex", "hooks.json") },
      ];
    },
    notes: trustSteps,
    trust: giveTrust,
    pluginEnabled: async (ctx) =>
      /^\[plugins\."waymark@waymark"\]\s*\n(?:[^[]*\n)?\s*enabled\s*=\s*true/m.test((await readOrNull(configPath(ctx))) ?? ""),
    doctorChecks: trustChecks,
  },

  toolCall: (payload) => {
    const tool = nonEmpty(payload.tool_name);
    if (tool !== "apply_patch" && tool !== "Bash") return null;
    const command = nonEmpty(objectIn(payload.tool_input).command) ?? "";
    // A shell command that runs no patch is work on the task, never an edit of any file.
    return { tool, paths: tool === "apply_patch" || hasPatch(command) ? patchPaths(command) : [] };
  },
  shellRun: (payload) => {
    if (payload.tool_name !== "Bash") return null;
    const command = nonEmpty(objectIn(payload.tool_input).command);
    // apply_patch run through the shell is an edit, not a command to report.
    if (!command || hasPatch(command)) return null;
    const run = { command, exit_code: explicitExitCode(objectIn(payload.tool_response)), duration_ms: durationMs(payload.duration_ms) };
    const id = nonEmpty(payload.tool_use_id);
    const transcript = nonEmpty(payload.transcript_path);
    // Its hooks carry no exit code: read at complete_task from the session file, by the call's id.
    return run.exit_code === null && id && transcript ? { ...run, call_id: id, transcript } : run;
  },
  capturedEdits: (payload) => {
    const tool = string(payload.tool_name);
    if (tool !== "apply_patch" && tool !== "Bash") return [];
    const input = objectIn(payload.tool_input);
    const patch = patchText(string(input.command) ?? string(input.input) ?? "");
    return patch === null ? [] : patchEdits(patch);
  },

  trace: { name: "codex", versionAt: "start" },
  transcript: {
    responses: rolloutResponses,
    // The first token_usage_record after the function_call item with that call_id.
    callingResponseWritten: (callId) => {
      const id = JSON.stringify(callId);
      let called = false;
      return (line) => {
        if (called) return line.includes('"type":"token_usage_record"');
        if (line.includes(`"call_id":${id}`) && line.includes('"type":"function_call"')) called = true;
        return false;
      };
    },
    commandResults,
  },
  callId: (meta) => nonEmpty(meta.callId) ?? undefined,
} satisfies Agent;
