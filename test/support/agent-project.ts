/**
 * @module test/support/agent-project
 * A project set up for a real agent as the README says, for the real-agent tests and the hooks
 * bench: a git repository and a user home of their own in temp dirs, then `waymark init --url
 * <endpoint> --agent <agent>` run through `npx --package=<endpoint>/helper/waymark-helper-<version>.tgz`
 * (the endpoint's own tarball, built from this checkout), with the user's own agent configuration
 * (Codex: its model provider) written before, as a user has it; optionally with a bare `origin` the
 * first commit was pushed to, as a clone of a team's repository has. Codex's setup is the README's
 * headless one: `--global-config` (no terminal to answer init's question about ~/.codex/config.toml)
 * and `--trust` (no `codex` UI to trust the project and the hooks in), unless `initArgs` says otherwise.
 *
 * Relative imports carry their `.ts` extension, so the benches can load this file through Node's
 * type stripping.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type AgentCli, type AgentRun, agentEnv, envWithCli, runProcess } from "./agent-clis.ts";
import { ensureCurrentHelperTarball } from "./worker-build-setup.ts";

const ROOT = resolve(import.meta.dirname, "../..");
export const HELPER_VERSION = (JSON.parse(readFileSync(join(ROOT, "client-helper", "package.json"), "utf8")) as { version: string })
  .version;

export interface AgentProject {
  /** The user's home: the agent's configuration, caches and sessions live here. */
  home: string;
  /** The repository's top level. */
  repo: string;
  /** The bare repository the project was cloned from (`origin`), when it was asked for. */
  origin: string | null;
  /** `waymark init`'s run; null when the project was made without it. */
  init: AgentRun | null;
  git(...args: string[]): string;
  remove(): void;
}

export interface AgentProjectOptions {
  agent: "claude" | "codex";
  /** Files of the first commit, by repository-relative path. */
  files: Record<string, string>;
  /** Files of the user's home written before init (e.g. `.codex/config.toml`), by home-relative path. */
  home?: Record<string, string>;
  /** false: the same project without Waymark (no `waymark init`). */
  init?: boolean;
  /** init's flags after `--agent` (Codex's default: `--global-config --trust`; Claude Code's: none). */
  initArgs?: string[];
  /** The agent's CLI, on the user's PATH when init runs (as `codex` / `claude`: init --trust asks it). */
  cli?: AgentCli;
  /** true: the first commit is pushed to a bare `origin` before init, as in a clone of a team's repository. */
  origin?: boolean;
}

/** Creates the repository and the home, then (unless `init: false`) runs the README's `waymark init` in the repository. */
export async function agentProject(endpoint: { url: string }, options: AgentProjectOptions): Promise<AgentProject> {
  ensureCurrentHelperTarball();
  const home = mkdtempSync(join(tmpdir(), `waymark-${options.agent}-home-`));
  const repo = mkdtempSync(join(tmpdir(), `waymark-${options.agent}-repo-`));
  const git = (...args: string[]): string => {
    const run = spawnSync("git", args, { cwd: repo, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
    return run.stdout;
  };
  const write = (base: string, files: Record<string, string>) => {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(base, path)), { recursive: true });
      writeFileSync(join(base, path), content);
    }
  };
  git("init", "-q", "-b", "main");
  git("config", "user.name", "Test");
  git("config", "user.email", "test@example.com");
  git("config", "commit.gpgsign", "false");
  write(repo, options.files);
  git("add", "-A");
  git("commit", "-q", "-m", "initial");
  let origin: string | null = null;
  if (options.origin) {
    origin = join(mkdtempSync(join(tmpdir(), `waymark-${options.agent}-origin-`)), "origin.git");
    git("init", "-q", "--bare", "-b", "main", origin);
    git("remote", "add", "origin", origin);
    git("push", "-q", "-u", "origin", "main");
  }
  write(home, options.home ?? {});
  const init =
    options.init === false
      ? null
      : await runProcess(
          "npx",
          [
            "-y",
            `--package=${endpoint.url}/helper/waymark-helper-${HELPER_VERSION}.tgz`,
            "waymark",
            "init",
            "--url",
            endpoint.url,
            "--agent",
            options.agent,
            ...(options.initArgs ?? (options.agent === "codex" ? ["--global-config", "--trust"] : [])),
          ],
          { cwd: repo, env: options.cli ? envWithCli(home, options.cli, options.agent) : agentEnv(home), timeoutMs: 180_000 },
        );
  return {
    home,
    repo,
    origin,
    init,
    git,
    remove() {
      rmSync(home, { recursive: true, force: true });
      rmSync(repo, { recursive: true, force: true });
      if (origin) rmSync(dirname(origin), { recursive: true, force: true });
    },
  };
}
