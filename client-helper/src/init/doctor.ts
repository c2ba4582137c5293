/**
 * @module init/doctor
 * `waymark doctor`: checks what recording depends on and says how to fix each failure —
 * the endpoint answers, the token is accepted, git and the repository's identity, and the
 * configuration `waymark init` writes (MCP server entry, instructions, hooks) is in place
 * and runs this helper version, with what each agent itself must allow (its setup's
 * `doctorChecks`). Exit code 1 when any check fails.
 */
import { execFile } from "node:child_process";
import { TOKEN_VARIABLE } from "@waymark/protocol/agent-config";
import type { Agent, DoctorCheck, SetupContext } from "../agents/agent.js";
import { AGENTS } from "../agents/registry.js";
import type { ResolvedEndpoint } from "../endpoint.js";
import { noEndpointHelp } from "../endpoint.js";
import { cleanGitEnv } from "../git/process.js";
import { launcherPath } from "../hooks/launcher.js";
import { checkNotes } from "../notes/setup.js";
import { Remote, RemoteFailure } from "../remote.js";
import { commitCommand, uncommittedFiles } from "./commit-advice.js";
import { agentEdits, displayPath } from "./config-files.js";
import { readOrNull } from "./file-edit.js";
import { initContext } from "./setup.js";

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

function git(args: string[], cwd: string): Promise<string | null> {
  return new Promise((done) => {
    execFile("git", args, { cwd, timeout: 5000, encoding: "utf8", env: cleanGitEnv() }, (error, stdout) =>
      done(error ? null : stdout.trim()),
    );
  });
}

async function checkEndpoint(origin: string, timeoutMs: number): Promise<DoctorCheck> {
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

async function checkToken(url: string, token: string | undefined, version: string, timeoutMs: number): Promise<DoctorCheck> {
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

async function checkGit(dir: string): Promise<DoctorCheck[]> {
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
async function fastPathCheck(version: string): Promise<DoctorCheck> {
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

/**
 * The Waymark plugin enabled for the user (each agent says where: `pluginEnabled`) and init's
 * files in the project besides: two MCP servers and every hook twice (two reminders at each stop).
 */
async function pluginAlsoEnabled(agent: Agent, ctx: SetupContext): Promise<DoctorCheck | null> {
  if (!(await agent.setup.pluginEnabled?.(ctx))) return null;
  return {
    name: agent.label,
    ok: false,
    detail: `the Waymark plugin is enabled for you and this project is also set up by waymark init: two MCP servers, and every hook runs twice`,
    fix: `keep one: waymark init --remove --agent ${agent.name} (the plugin covers every project), or uninstall the plugin`,
  };
}

/** Init's files in the project are committed (or ignored): an agent's first commit would otherwise sweep them in with its work. */
async function committedCheck(ctx: SetupContext, agents: readonly Agent[]): Promise<DoctorCheck> {
  const paths: string[] = [];
  for (const agent of agents)
    for (const edit of agentEdits(agent, ctx))
      if (edit.scope === "project" && (await readOrNull(edit.path).catch(() => null)) !== null) paths.push(edit.path);
  const files = await uncommittedFiles(ctx.project, paths);
  if (files === null) return { name: "project files", ok: true, skipped: true, detail: "not checked: git status did not answer" };
  if (files.length === 0) return { name: "project files", ok: true, detail: "what init wrote into the project is committed (or ignored)" };
  return {
    name: "project files",
    ok: false,
    detail: `${files.join(", ")} ${files.length === 1 ? "is" : "are"} not committed: your agent's first commit would sweep ${files.length === 1 ? "it" : "them"} in with its work`,
    fix: `${commitCommand(files)} (or list ${files.length === 1 ? "it" : "them"} in .git/info/exclude to keep ${files.length === 1 ? "it" : "them"} to yourself)`,
  };
}

async function checkAgents(ctx: SetupContext): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const configured: Agent[] = [];
  const results = new Map<Agent, { label: string; problem: string | null; outside: boolean }[]>();
  for (const agent of AGENTS) {
    const files: { label: string; problem: string | null; outside: boolean }[] = [];
    let present = false;
    for (const edit of agentEdits(agent, ctx)) {
      const content = await readOrNull(edit.path).catch(() => null);
      const problem = edit.check(content);
      // An agent counts as set up when any of its files carries something of Waymark's.
      if (content !== null && (problem === null || !/^(missing|no )/.test(problem))) present = true;
      files.push({ label: displayPath(edit.path, ctx), problem, outside: edit.scope === "home" });
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
    const { doctorChecks } = agent.setup;
    if (doctorChecks) checks.push(...(await doctorChecks(ctx)));
    for (const file of results.get(agent) ?? []) {
      checks.push(
        file.problem === null
          ? { name: agent.label, ok: true, detail: `${file.label} runs waymark-helper ${ctx.version}` }
          : {
              name: agent.label,
              ok: false,
              detail: `${file.label}: ${file.problem}`,
              // A file outside the project is written only when the user allows it.
              fix: `run: waymark init --url ${ctx.endpoint.mcp} --agent ${agent.name}${file.outside ? " --global-config" : ""}`,
            },
      );
    }
  }
  checks.push(await committedCheck(ctx, configured));
  return checks;
}

export async function runDoctor(options: DoctorOptions): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const checks: DoctorCheck[] = [];
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
    // The project's own checks (not an agent's) go here, after git's; then each agent's.
    checks.push(...(await checkGit(ctx.project)));
    checks.push(
      ...(await checkNotes(ctx.project).catch((e: unknown) => [
        { name: "notes", ok: false, detail: `not checked: ${String(e)}`, fix: "run: waymark notes setup" },
      ])),
    );
    checks.push(...(await checkAgents(ctx)));
  }
  for (const check of checks) {
    options.out(`${check.skipped ? "skip" : check.ok ? "ok  " : "FAIL"} ${check.name}: ${check.detail}\n`);
    if (!check.ok && check.fix) options.out(`     fix: ${check.fix}\n`);
  }
  const failures = checks.filter((check) => !check.ok).length;
  options.out(failures === 0 ? "All checks passed.\n" : `${failures} check(s) failed.\n`);
  return failures === 0 ? 0 : 1;
}
