/**
 * @module test/support/agent-clis
 * The real agent CLIs the end-to-end tests and the hooks bench run: Claude Code and Codex at
 * pinned npm versions, installed on first use into node_modules/.cache/agent-clis (not as
 * dependencies of the project: their native binaries weigh about 760 MB, which every
 * `npm install` would fetch), each resolved to a command that starts here, or to the reason it
 * cannot. `npm run agent-clis` installs them ahead (.ci/run does). Also: the environment that
 * runs an agent headless against the scripted model (./model-server.ts) in a home of its own,
 * and a bounded run of one agent process.
 *
 * Relative imports carry their `.ts` extension and there are no parameter properties, so the
 * benches can load this file through Node's type stripping.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";

export const CLAUDE_CODE = { package: "@anthropic-ai/claude-code", version: "2.1.328" } as const;
export const CODEX = { package: "@openai/codex", version: "0.169.0" } as const;

const ROOT = resolve(import.meta.dirname, "../..");
const CACHE = join(ROOT, "node_modules", ".cache", "agent-clis");
/** One directory per pair of pinned versions: a version change installs anew beside the old one. */
const PREFIX = join(CACHE, `claude-code-${CLAUDE_CODE.version}+codex-${CODEX.version}`);
const INSTALL_TIMEOUT_MS = 600_000;

/** A command that starts the CLI (the native binary, or node with the package's launcher). */
export interface AgentCli {
  name: string;
  version: string;
  command: string;
  args: string[];
}

export type Availability = { cli: AgentCli; skip?: undefined } | { cli?: undefined; skip: string };

function installedVersion(pkg: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(PREFIX, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

/**
 * Installs both CLIs at their pinned versions unless they are there; null once installed, else
 * why not (npm's own words). Installed into a directory of its own, then moved into place, so a
 * run that stops half-way or a concurrent one never leaves a half-installed CLI behind.
 */
function install(): string | null {
  if (installedVersion(CLAUDE_CODE.package) === CLAUDE_CODE.version && installedVersion(CODEX.package) === CODEX.version) return null;
  mkdirSync(CACHE, { recursive: true });
  const staging = `${PREFIX}.installing-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  const run = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      staging,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `${CLAUDE_CODE.package}@${CLAUDE_CODE.version}`,
      `${CODEX.package}@${CODEX.version}`,
    ],
    { cwd: CACHE, encoding: "utf8", timeout: INSTALL_TIMEOUT_MS, env: { ...process.env, npm_config_update_notifier: "false" } },
  );
  if (run.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    const said = `${run.stderr ?? ""}${run.error ? String(run.error) : ""}`.trim().split("\n").slice(-3).join(" ");
    return `npm install ${CLAUDE_CODE.package}@${CLAUDE_CODE.version} ${CODEX.package}@${CODEX.version} failed: ${said || `exit ${run.status}`}`;
  }
  rmSync(PREFIX, { recursive: true, force: true });
  try {
    renameSync(staging, PREFIX);
  } catch (error) {
    // Another run moved its copy into place first: use that one.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(PREFIX)) return `could not move the installed CLIs into ${PREFIX}: ${String(error)}`;
  }
  return null;
}

/** The first candidate whose `--version` names the pinned version, or why none starts. */
function firstStarting(name: string, version: string, candidates: { command: string; args: string[] }[]): Availability {
  const failures: string[] = [];
  for (const candidate of candidates) {
    if (candidate.command !== process.execPath && !existsSync(candidate.command)) continue;
    const run = spawnSync(candidate.command, [...candidate.args, "--version"], { encoding: "utf8", timeout: 60_000 });
    if (run.status === 0 && run.stdout.includes(version)) return { cli: { name, version, ...candidate } };
    failures.push(
      `${[candidate.command, ...candidate.args].join(" ")}: ${(run.stderr || run.stdout || String(run.error)).trim().slice(0, 300)}`,
    );
  }
  return {
    skip: `${name} ${version} does not start on ${process.platform}-${process.arch}: ${failures.join("; ") || "no binary for this platform"}`,
  };
}

function claudeCode(): Availability {
  const modules = join(PREFIX, "node_modules", "@anthropic-ai");
  const platform = `${process.platform}-${process.arch}`;
  return firstStarting("Claude Code", CLAUDE_CODE.version, [
    // The package's bin, once its postinstall put the native binary there; else the platform package's binary.
    { command: join(modules, "claude-code", "bin", "claude.exe"), args: [] },
    { command: join(modules, `claude-code-${platform}`, "claude"), args: [] },
    { command: join(modules, `claude-code-${platform}-musl`, "claude"), args: [] },
    // What the package documents when npm skipped its postinstall.
    { command: process.execPath, args: [join(modules, "claude-code", "cli-wrapper.cjs")] },
  ]);
}

function codex(): Availability {
  return firstStarting("Codex", CODEX.version, [
    { command: process.execPath, args: [join(PREFIX, "node_modules", "@openai", "codex", "bin", "codex.js")] },
  ]);
}

let resolved: { claude: Availability; codex: Availability } | null = null;

/** Both CLIs, installed on first use; each either starts here or says why it is skipped. */
export function agentClis(): { claude: Availability; codex: Availability } {
  if (resolved) return resolved;
  const failed = install();
  resolved = failed ? { claude: { skip: failed }, codex: { skip: failed } } : { claude: claudeCode(), codex: codex() };
  return resolved;
}

/** What a user's machine gives every process: locale, temp dir, trusted certificates, proxies, machine-wide npm config. */
const MACHINE_ENV =
  /^(LANG|LC_ALL|TMPDIR|TERM|NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|npm_config_(globalconfig|cafile))$/;

/**
 * The environment an agent runs in, as on a user's machine: its own HOME (so no configuration,
 * credentials, npm cache or session of the machine's user is read or written), the machine's
 * PATH without this repository's node_modules (whose Node and tools are the test's, not the
 * user's), the machine-wide settings of MACHINE_ENV, and `extra`.
 */
export function agentEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { HOME: home, XDG_CACHE_HOME: join(home, ".cache"), XDG_CONFIG_HOME: join(home, ".config") };
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && MACHINE_ENV.test(key)) env[key] = value;
  const own = join(ROOT, "node_modules");
  env.PATH = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== "" && !resolve(dir).startsWith(own))
    .join(delimiter);
  return { ...env, npm_config_update_notifier: "false", ...extra };
}

/**
 * `claude -p` arguments as a headless user gives them: stream-json output, and edits and the
 * listed tools allowed (as root, Claude Code refuses to bypass its permissions altogether).
 */
export function claudePrint(prompt: string, tools: string[], extra: string[] = []): string[] {
  return [
    "-p",
    prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
    "--allowedTools",
    ...tools,
    ...extra,
  ];
}

/**
 * `codex exec` arguments with the trust each setup has:
 * - "saved": none on the command line: `waymark init --trust` (the README's headless setup) had
 *   Codex save its trust of the project and of Waymark's hooks;
 * - "exec": Codex's own headless flags, which save the project's trust (`--trust`) but run hooks
 *   without saving theirs (`--dangerously-bypass-hook-trust`);
 * - "plugin": the plugin needs no project trust; its hooks run by the bypass flag.
 * Full access: Codex's workspace-write sandbox keeps `.git` read-only, and the agents commit their work.
 */
export function codexExec(prompt: string, trust: "saved" | "exec" | "plugin"): string[] {
  const flags = { saved: [], exec: ["--trust", "--dangerously-bypass-hook-trust"], plugin: ["--dangerously-bypass-hook-trust"] }[trust];
  return ["exec", "--json", ...flags, "--sandbox", "danger-full-access", prompt];
}

/** Claude Code against the scripted model: `ANTHROPIC_BASE_URL`, no telemetry, no update check. */
export function claudeEnv(home: string, modelUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return agentEnv(home, {
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "scripted-model",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...extra,
  });
}

/**
 * Codex's user configuration for the scripted model (what a user's own `~/.codex/config.toml`
 * holds before `waymark init` adds to it): a provider on 127.0.0.1 speaking the Responses API, and
 * the model unless null. Its key comes from `SCRIPTED_MODEL_KEY`.
 */
export function codexModelConfig(modelUrl: string, model: string | null): string {
  return [
    // No model: Codex's own default (what a user who never chose one gets).
    ...(model === null ? [] : [`model = ${JSON.stringify(model)}`]),
    `model_provider = "scripted"`,
    "",
    "[model_providers.scripted]",
    `name = "scripted"`,
    `base_url = ${JSON.stringify(`${modelUrl}/v1`)}`,
    `wire_api = "responses"`,
    `env_key = "SCRIPTED_MODEL_KEY"`,
    "",
  ].join("\n");
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

const running = new Set<ChildProcess>();

/**
 * Runs one process to its end, bounded by `timeoutMs`; its whole process group (the MCP servers
 * and hooks an agent started) is ended with it. Never synchronous: a dev server started by the
 * same test process keeps being read (a blocked event loop would leave its output pipe full).
 */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<AgentRun> {
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    running.add(child);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-64 * 1024);
    });
    const timer = setTimeout(() => {
      timedOut = true;
      endGroup(child);
    }, options.timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      endGroup(child);
      running.delete(child);
      done({ code, stdout, stderr, ms: performance.now() - started, timedOut });
    });
  });
}

/**
 * The environment `agentEnv` makes, with the CLI on PATH as `bin` (a user who installed it has it
 * there: `waymark init --trust` and `waymark doctor` ask it), through a one-line wrapper in the
 * home's own bin folder.
 */
export function envWithCli(home: string, cli: AgentCli, bin: string, extra: Record<string, string> = {}): Record<string, string> {
  const dir = join(home, "bin");
  mkdirSync(dir, { recursive: true });
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  writeFileSync(join(dir, bin), `#!/bin/sh\nexec ${[cli.command, ...cli.args].map(quote).join(" ")} "$@"\n`, { mode: 0o755 });
  const env = agentEnv(home, extra);
  return { ...env, PATH: `${dir}${delimiter}${env.PATH}` };
}

/** Runs an agent CLI with `args` (see runProcess). */
export function runAgent(
  cli: AgentCli,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<AgentRun> {
  return runProcess(cli.command, [...cli.args, ...args], options);
}

function endGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** Ends every agent process group still running (a test that failed half-way). */
export function stopAgents(): void {
  for (const child of running) endGroup(child);
  running.clear();
}

// `npm run agent-clis`: install ahead and say what starts.
if (import.meta.main) {
  const clis = agentClis();
  for (const [name, availability] of Object.entries(clis)) {
    console.log(
      availability.cli
        ? `${availability.cli.name} ${availability.cli.version}: ${[availability.cli.command, ...availability.cli.args].join(" ")}`
        : `${name}: skipped: ${availability.skip}`,
    );
  }
}
