/**
 * @module init/doctor
 * `waymark doctor`: checks what recording depends on and says how to fix each failure —
 * the endpoint answers, the token is accepted, git and the repository's identity, and the
 * configuration `waymark init` writes (MCP server entry, instructions, hooks) is in place
 * and runs this helper version. Exit code 1 when any check fails.
 */
import { execFile } from "node:child_process";
import { isWaymarkHookCommand, TOKEN_VARIABLE } from "@waymark/protocol/agent-config";
import type { ResolvedEndpoint } from "../endpoint.js";
import { noEndpointHelp } from "../endpoint.js";
import { cleanGitEnv } from "../git/process.js";
import { launcherPath } from "../hooks/launcher.js";
import { Remote, RemoteFailure } from "../remote.js";
import { AGENT_LABELS, AGENTS, type AgentName, agentEdits, displayPath } from "./agents.js";
import { hooksSetting } from "./codex.js";
import { codexView } from "./codex-trust.js";
import { initContext, readOrNull } from "./setup.js";

export type DoctorOptions = {
  dir: string;
  /** --url, WAYMARK_URL or the user-level config; never an endpoint named in the project's files. */
  endpoint: ResolvedEndpoint | null;
  token: string | undefined;
  version: string;
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
  timeoutMs?: number;
};

/** `skipped`: the check could not run (its detail says why); neither a pass nor a failure. */
type Check = { name: string; ok: boolean; detail: string; fix?: string; skipped?: boolean };

function git(args: string[], cwd: string): Promise<string | null> {
  return new Promise((done) => {
    execFile("git", args, { cwd, timeout: 5000, encoding: "utf8", env: cleanGitEnv() }, (error, stdout) =>
      done(error ? null : stdout.trim()),
    );
  });
}

async function checkEndpoint(origin: string, timeoutMs: number): Promise<Check> {
  const started = Date.now();
  try {
    const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    if (response.ok)
      return { name: "endpoint", ok: true, detail: `${origin}/health answered ${response.status} in ${Date.now() - started} ms` };
    return {
      name: "endpoint",
      ok: false,
      detail: `${origin}/health answered HTTP ${response.status}`,
      fix: "check --url: it must be the Waymark endpoint's address",
    };
  } catch (error) {
    const reason =
      error instanceof Error && error.name === "TimeoutError"
        ? `no answer within ${timeoutMs} ms`
        : String((error as Error).cause ?? error);
    return {
      name: "endpoint",
      ok: false,
      detail: `cannot reach ${origin}/health: ${reason}`,
      fix: "check that the endpoint is up and that --url (or WAYMARK_URL) is right",
    };
  }
}

async function checkToken(url: string, token: string | undefined, version: string, timeoutMs: number): Promise<Check> {
  if (!token) {
    return {
      name: "token",
      ok: false,
      detail: `${TOKEN_VARIABLE} is not set`,
      fix: `export ${TOKEN_VARIABLE}=<your Waymark token> where your agent starts (e.g. your shell profile)`,
    };
  }
  const remote = new Remote({ url, token, timeoutMs, version });
  try {
    const result = await remote.request("tools/list", undefined);
    return { name: "token", ok: true, detail: `accepted by ${url} (${result.tools.length} tools)` };
  } catch (error) {
    if (error instanceof RemoteFailure && error.code === "UNAUTHORIZED") {
      return {
        name: "token",
        ok: false,
        detail: `${url} rejected the token in ${TOKEN_VARIABLE}`,
        fix: `set ${TOKEN_VARIABLE} to a valid token of your Waymark account (a revoked or mistyped token is refused)`,
      };
    }
    return {
      name: "token",
      ok: false,
      detail: `could not check the token: ${error instanceof Error ? error.message : String(error)}`,
      fix: "fix the endpoint check first",
    };
  } finally {
    await remote.close();
  }
}

async function checkGit(dir: string): Promise<Check[]> {
  const version = await git(["--version"], dir);
  if (!version)
    return [
      {
        name: "git",
        ok: false,
        detail: "git is not installed or not on PATH",
        fix: "install git: file changes are computed from it (outside git the helper compares checksums)",
      },
    ];
  const top = await git(["rev-parse", "--show-toplevel"], dir);
  if (!top)
    return [{ name: "git", ok: true, detail: `${version}; ${dir} is not a git repository (file changes will be compared by checksums)` }];
  const [branch, root, remote] = await Promise.all([
    git(["symbolic-ref", "--quiet", "--short", "HEAD"], top),
    git(["rev-list", "--max-parents=0", "HEAD"], top),
    git(["remote", "get-url", "origin"], top),
  ]);
  const identity = [
    `top level ${top}`,
    `branch ${branch ?? "(detached)"}`,
    `root commit ${root ? root.split("\n")[0]?.slice(0, 12) : "(none yet)"}`,
    `origin ${remote ?? "(none)"}`,
  ];
  return [
    { name: "git", ok: true, detail: version },
    { name: "repository", ok: true, detail: identity.join(", ") },
  ];
}

/** Informational: whether hooks can start without npm (see hooks/launcher). */
async function fastPathCheck(version: string): Promise<Check> {
  const launcher = launcherPath(version);
  const present = await readOrNull(launcher).catch(() => null);
  return {
    name: "hooks fast path",
    ok: true,
    detail: present
      ? `${launcher} (hooks start without npm)`
      : "none yet: the first hook run through npx writes it (until then each hook pays npm's start-up, about a second)",
  };
}

const CODEX_EVENTS = [
  ["sessionStart", "SessionStart"],
  ["postToolUse", "PostToolUse"],
  ["stop", "Stop"],
] as const;

/** Codex runs a project's hooks only in a trusted project and once each hook is trusted: asked of Codex itself. */
async function checkCodexTrust(ctx: Awaited<ReturnType<typeof initContext>>, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const name = "Codex trust";
  const view = await codexView(ctx.project, env);
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
  const config = `${ctx.codexHome}/config.toml`;
  const checks: Check[] = [];
  if (view.projectDisabled) {
    checks.push({
      name,
      ok: false,
      detail: `Codex does not load ${ctx.project}/.codex/ (Waymark's hooks): ${view.projectDisabled}`,
      fix: `run \`codex\` in ${ctx.project} and answer yes when asked to trust it, or add [projects.${JSON.stringify(ctx.project)}] trust_level = "trusted" to ${config} (headless: codex exec --trust)`,
    });
  } else checks.push({ name, ok: true, detail: `Codex loads ${ctx.project}/.codex/ (a trusted project)` });
  const setting = hooksSetting(await readOrNull(config).catch(() => null));
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
  const missing = CODEX_EVENTS.filter(([event]) => !ours.some((hook) => hook.event === event)).map(([, label]) => label);
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
    const labels = untrusted.map((hook) => `${CODEX_EVENTS.find(([event]) => event === hook.event)?.[1] ?? hook.event} (${hook.trust})`);
    checks.push({
      name: "Codex hooks",
      ok: false,
      detail: `Codex has not trusted Waymark's ${labels.join(", ")} hook(s), and skips them without a word${deprecated}`,
      fix: `run \`codex\` in ${ctx.project}, type /hooks, review Waymark's hooks and trust them (headless runs: codex exec --dangerously-bypass-hook-trust)`,
    });
  }
  if (missing.length === 0 && untrusted.length === 0) {
    checks.push({ name: "Codex hooks", ok: true, detail: `Codex trusts Waymark's SessionStart, PostToolUse and Stop hooks${deprecated}` });
  }
  return checks;
}

/**
 * The Waymark plugin enabled for the user (Claude Code's settings, Codex's config) and init's
 * files in the project besides: two MCP servers and every hook twice (two reminders at each stop).
 */
async function pluginAlsoEnabled(agent: AgentName, ctx: Awaited<ReturnType<typeof initContext>>): Promise<Check | null> {
  const enabled =
    agent === "claude"
      ? /"waymark@waymark"\s*:\s*true/.test((await readOrNull(`${ctx.home}/.claude/settings.json`).catch(() => null)) ?? "")
      : agent === "codex"
        ? /^\[plugins\."waymark@waymark"\]\s*\n(?:[^[]*\n)?\s*enabled\s*=\s*true/m.test(
            (await readOrNull(`${ctx.codexHome}/config.toml`).catch(() => null)) ?? "",
          )
        : false;
  if (!enabled) return null;
  return {
    name: AGENT_LABELS[agent],
    ok: false,
    detail: `the Waymark plugin is enabled for you and this project is also set up by waymark init: two MCP servers, and every hook runs twice`,
    fix: `keep one: waymark init --remove --agent ${agent} (the plugin covers every project), or uninstall the plugin`,
  };
}

async function checkAgents(ctx: Awaited<ReturnType<typeof initContext>>, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [];
  const configured: AgentName[] = [];
  const results = new Map<AgentName, { label: string; problem: string | null }[]>();
  for (const agent of AGENTS) {
    const files: { label: string; problem: string | null }[] = [];
    let present = false;
    for (const edit of agentEdits(agent, ctx)) {
      const content = await readOrNull(edit.path).catch(() => null);
      const problem = edit.check(content);
      // An agent counts as set up when any of its files carries something of Waymark's.
      if (content !== null && (problem === null || !/^(missing|no )/.test(problem))) present = true;
      files.push({ label: displayPath(edit.path, ctx), problem });
    }
    if (present) configured.push(agent);
    results.set(agent, files);
  }
  if (configured.length === 0) {
    return [
      {
        name: "agents",
        ok: false,
        detail: "no agent is set up for Waymark in this project",
        fix: `run: waymark init --url ${ctx.endpoint.mcp}`,
      },
    ];
  }
  checks.push(await fastPathCheck(ctx.version));
  for (const agent of configured) {
    const twice = await pluginAlsoEnabled(agent, ctx);
    if (twice) checks.push(twice);
    if (agent === "codex") checks.push(...(await checkCodexTrust(ctx, env)));
    for (const file of results.get(agent) ?? []) {
      checks.push(
        file.problem === null
          ? { name: AGENT_LABELS[agent], ok: true, detail: `${file.label} runs waymark-helper ${ctx.version}` }
          : {
              name: AGENT_LABELS[agent],
              ok: false,
              detail: `${file.label}: ${file.problem}`,
              fix: `run: waymark init --url ${ctx.endpoint.mcp} --agent ${agent}`,
            },
      );
    }
  }
  return checks;
}

export async function runDoctor(options: DoctorOptions): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const checks: Check[] = [];
  if (!options.endpoint) {
    checks.push({
      name: "endpoint",
      ok: false,
      detail: `${noEndpointHelp(options.env)}. An endpoint named in the project's files is never used: a repository could name any server, and your token would go to it.`,
      fix: "run: waymark init --url <your Waymark endpoint>",
    });
    checks.push(...(await checkGit(options.dir)));
  } else {
    const ctx = await initContext(options.dir, options.endpoint.endpoint, options.version, options.env);
    const endpoint = await checkEndpoint(ctx.endpoint.origin, timeoutMs);
    endpoint.detail = `${endpoint.detail} (from ${options.endpoint.source})`;
    checks.push(endpoint);
    checks.push(
      endpoint.ok
        ? await checkToken(ctx.endpoint.mcp, options.token, options.version, timeoutMs)
        : { name: "token", ok: false, detail: "not checked: the endpoint cannot be reached", fix: "fix the endpoint check first" },
    );
    checks.push(...(await checkGit(ctx.project)));
    checks.push(...(await checkAgents(ctx, options.env)));
  }
  for (const check of checks) {
    options.out(`${check.skipped ? "skip" : check.ok ? "ok  " : "FAIL"} ${check.name}: ${check.detail}\n`);
    if (!check.ok && check.fix) options.out(`     fix: ${check.fix}\n`);
  }
  const failures = checks.filter((check) => !check.ok).length;
  options.out(failures === 0 ? "All checks passed.\n" : `${failures} check(s) failed.\n`);
  return failures === 0 ? 0 : 1;
}
