/**
 * @module git/process
 * How the helper starts git: a clean environment (no inherited GIT_* variable but the ones that
 * select the user's own config files, no optional locks, no prompts, the C locale), the fixed
 * flags (--no-pager, --no-optional-locks), and the context each query runs in (./inert-config.ts
 * makes the repository's command-bearing config inert). A failure is a GitError with git's exit
 * code and stderr.
 */
import { spawn } from "node:child_process";
import { type ShellStarted, startThroughShell } from "./spawner.js";

export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
    this.name = "GitError";
  }
}

/** Inherited variables that still only select the user's own trusted config files. */
const TRUSTED_GIT_VARIABLES = new Set(["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"]);

/** The environment of every git child before the repository's overrides are added. */
export function cleanGitEnv(inherited: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(inherited)) {
    if (!name.startsWith("GIT_") || TRUSTED_GIT_VARIABLES.has(name)) env[name] = value;
  }
  env.GIT_OPTIONAL_LOCKS = "0";
  env.GIT_TERMINAL_PROMPT = "0";
  env.LC_ALL = "C";
  return env;
}

/**
 * Where git runs and with which environment (overrides of the repository's command-bearing
 * config included), and the two settings that decide which mode git records for a file.
 */
export type GitContext = {
  cwd: string;
  env: NodeJS.ProcessEnv;
  fileMode: boolean;
  symlinks: boolean;
  /** core.excludesFile as the repository's own config sets it (ignore rules outside the working tree). */
  localExcludesFile?: string;
  /**
   * The remotes the config defines (every `remote.<name>.*` section, as `git remote` lists them)
   * with their `remote.<name>.url` (the last value, as `git config --get`), when the config was read.
   */
  remotes?: ReadonlyMap<string, string | null>;
  /** From the config read: git stores files as their bytes unless attributes say otherwise (../verbatim-blobs.ts). */
  storesVerbatim?: boolean;
  /**
   * Filter drivers the repository's own config defines a clean or process command for: git runs
   * them when the agent commits, the helper never does (../unrun-filters.ts).
   */
  unrunFilters?: ReadonlySet<string>;
  /** git processes this tool call started ahead of their input (../prestarted-git.ts). */
  ready?: { take(context: GitContext, args: readonly string[]): StartedGit | undefined; spawned(): void };
};

/** A git process started before its input is known: `finish` sends the input and reads the answer. */
export type StartedGit = {
  finish(input: Buffer, options?: { differencesOk?: boolean }): Promise<Buffer>;
};

/** Spawns git with the helper's fixed flags; `finish` ends its stdin with the input (if it reads one) and reads its answer. */
export function startGit(context: GitContext, args: readonly string[], readsInput = true): StartedGit {
  const words = ["--no-pager", "--no-optional-locks", ...args];
  // Started by a small shell where that gives git exactly what spawn would (./spawner.ts): no fork of this process.
  const started = startThroughShell(context.cwd, context.env, words) ?? spawnGit(context, words, readsInput);
  const { stdin, stdout, stderr, exited } = started;
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout?.on("data", (chunk: Buffer) => out.push(chunk));
  stderr?.on("data", (chunk: Buffer) => err.push(chunk));
  stdin?.on("error", () => {}); // git may exit before reading it all; its exit code says why
  exited.catch(() => {});
  if (!readsInput) stdin?.end();
  return {
    async finish(input, options = {}) {
      if (readsInput) stdin?.end(input);
      const code = await exited;
      if (code === 0 || (code === 1 && options.differencesOk)) return Buffer.concat(out);
      const stderr = Buffer.concat(err).toString("utf8").trim();
      throw new GitError(`git ${args[0]} failed (exit ${code}): ${stderr}`, code, stderr);
    },
  };
}

/** git spawned by this process itself. */
function spawnGit(context: GitContext, words: readonly string[], readsInput: boolean): ShellStarted {
  const child = spawn("git", words, {
    cwd: context.cwd,
    env: context.env,
    stdio: [readsInput ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  return { stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, exited };
}

/**
 * `differencesOk`: exit code 1 is an answer (diff --no-index: "the files differ"), not a failure.
 * A process the tool call started ahead for these arguments (context.ready) is used when there is one.
 */
export function runGit(
  context: GitContext,
  args: readonly string[],
  input?: Buffer,
  options: { differencesOk?: boolean } = {},
): Promise<Buffer> {
  try {
    const taken = input === undefined ? undefined : context.ready?.take(context, args);
    if (taken) return taken.finish(input ?? Buffer.alloc(0), options);
    const started = startGit(context, args, input !== undefined);
    context.ready?.spawned();
    return started.finish(input ?? Buffer.alloc(0), options);
  } catch (error) {
    return Promise.reject(error);
  }
}

export function isErrno(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && "code" in error;
}
