/**
 * @module init/run
 * `waymark init`: sets a project up for the agents found (or named) — MCP server entry,
 * instructions, hooks — and `--remove` takes it all out again. A second run changes
 * nothing; `--dry-run` prints the unified diff of what a run would write. No token is ever
 * written: configurations reference WAYMARK_TOKEN. To give files back byte for byte, the
 * bytes a file had before init are kept in the cache dir and restored by `--remove` when
 * the file still holds exactly what init wrote; otherwise only Waymark's entries are taken out.
 */
import { createHash } from "node:crypto";
import { lstat, mkdir, realpath, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, relative, sep } from "node:path";
import { helperCommandLine, TOKEN_VARIABLE } from "@waymark/protocol/agent-config";
import type { Agent, SetupContext } from "../agents/agent.js";
import { AGENTS } from "../agents/registry.js";
import { DeviceKey } from "../device-key.js";
import { type Endpoint, saveUserEndpoint } from "../endpoint.js";
import { repositoryRoot } from "../hooks/journal.js";
import { setupNotes } from "../notes/setup.js";
import { cacheRoot } from "../store.js";
import { commitCommand, uncommittedFiles } from "./commit-advice.js";
import { agentEdits, displayPath } from "./config-files.js";
import { detectAgent, isOnPath } from "./detect.js";
import { unifiedDiff } from "./diff.js";
import { type FileEdit, readOrNull } from "./file-edit.js";

export type InitOptions = {
  dir: string;
  endpoint: Endpoint;
  version: string;
  /** The agents named (--agent); null: the agents found. */
  agents: Agent[] | null;
  dryRun: boolean;
  remove: boolean;
  /** --global-config: write the files outside the project (Codex's ~/.codex/config.toml) without asking. */
  globalConfig: boolean;
  /** --trust: give the trust each agent asks of the user through the agent itself (Codex: the project and Waymark's hooks). */
  trust: boolean;
  /** Asks the user a yes/no question on the terminal; null when there is none to ask (no TTY). */
  confirm: ((question: string) => Promise<boolean>) | null;
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
};

type Backup = { before: string | null; after: string | null; created_dirs: string[] };

export function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME !== "" ? env.HOME : homedir();
}

export async function initContext(dir: string, endpoint: Endpoint, version: string, env: NodeJS.ProcessEnv): Promise<SetupContext> {
  return { project: await repositoryRoot(dir), home: homeOf(env), env, endpoint, version };
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * A repository can ship `CLAUDE.md`, `.claude/` or `.codex/` as symbolic links to files outside
 * it (`~/.bashrc`, another project): every component from the project down to the file is
 * looked at without following it, and a link that leads out of the project is refused before
 * anything is read or written. Links that stay inside (CLAUDE.md -> AGENTS.md) are fine.
 */
export async function assertStaysInProject(project: string, path: string): Promise<void> {
  const root = await realpath(project);
  const parts = relative(project, path).split(sep);
  let current = project;
  for (const part of parts) {
    current = join(current, part);
    const info = await lstat(current).catch(() => null);
    if (!info) return; // missing from here on: created inside the project
    if (!info.isSymbolicLink()) continue;
    const target = await realpath(current).catch(() => null);
    if (target === null || !inside(root, target)) {
      throw new Error(
        `${relative(project, current)} is a symbolic link that leads out of the project${target ? ` (to ${target})` : ""}; waymark init does not write through it. Replace it with a file, or leave this agent out (--agent)`,
      );
    }
  }
}

function backupFile(env: NodeJS.ProcessEnv, path: string): string {
  return join(cacheRoot(env), "init", `${createHash("sha256").update(path).digest("hex").slice(0, 40)}.json`);
}

async function readBackup(env: NodeJS.ProcessEnv, path: string): Promise<Backup | null> {
  const text = await readOrNull(backupFile(env, path)).catch(() => null);
  try {
    return text === null ? null : (JSON.parse(text) as Backup);
  } catch {
    return null;
  }
}

/** The folders between `path` and the first existing ancestor, deepest first. */
async function missingFolders(path: string): Promise<string[]> {
  const missing: string[] = [];
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    if (
      await stat(dir).then(
        () => true,
        () => false,
      )
    )
      break;
    missing.push(dir);
  }
  return missing;
}

type Planned = { edit: FileEdit; before: string | null; after: string | null; backup: Backup | null };

async function plan(edit: FileEdit, options: InitOptions, project: string): Promise<Planned> {
  if (edit.scope === "project") await assertStaysInProject(project, edit.path);
  const before = await readOrNull(edit.path);
  const backup = await readBackup(options.env, edit.path);
  if (options.remove) {
    const untouched = backup !== null && backup.after === before;
    return { edit, before, after: untouched ? backup.before : edit.remove(before), backup };
  }
  return { edit, before, after: edit.apply(before), backup };
}

async function write(planned: Planned, options: InitOptions, createdDirs: Set<string>): Promise<void> {
  const { edit, before, after, backup } = planned;
  const backupPath = backupFile(options.env, edit.path);
  if (options.remove) {
    if (after === null) await rm(edit.path, { force: true });
    else await writeFile(edit.path, after);
    for (const dir of backup?.created_dirs ?? []) createdDirs.add(dir);
    await rm(backupPath, { force: true });
    return;
  }
  const created = await missingFolders(edit.path);
  // A file init already wrote keeps the bytes it had before the first init. One changed since
  // (the agent's own CLI writes into its config too) has, as its bytes without Waymark, the file
  // as it is now less Waymark's part: never the block init wrote before.
  const original: Backup =
    backup === null
      ? { before, after, created_dirs: created }
      : backup.after === before
        ? { ...backup, after }
        : { before: before === null ? null : edit.remove(before), after, created_dirs: backup.created_dirs };
  await mkdir(dirname(backupPath), { recursive: true, mode: 0o700 });
  await writeFile(backupPath, JSON.stringify(original), { mode: 0o600 });
  await mkdir(dirname(edit.path), { recursive: true });
  if (after === null) await rm(edit.path, { force: true });
  else await writeFile(edit.path, after);
}

function chooseAgents(options: InitOptions, ctx: SetupContext): { agents: readonly Agent[]; why: Map<Agent, string[]> } {
  const why = new Map(AGENTS.map((agent) => [agent, detectAgent(agent, ctx)]));
  if (options.agents) return { agents: options.agents, why };
  if (options.remove) return { agents: AGENTS, why };
  return { agents: AGENTS.filter((agent) => (why.get(agent) ?? []).length > 0), why };
}

/** `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/**
 * This machine's device key (created here when there is none, outside the project), and how to
 * approve it: until then the helper's figures read "claimed by the client".
 */
async function deviceStep(project: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { key, created } = await DeviceKey.ensure({ env, project });
    return `\n${created ? "Created this device's signing key" : "This device's signing key"}: ${key.fingerprint} (${key.path}). Approve it once so the helper's figures read "computed and signed": waymark device pair\n`;
  } catch (error) {
    return `\nNo device key: ${error instanceof Error ? error.message : String(error)}. The helper's figures will read "claimed by the client".\n`;
  }
}

/**
 * What a setup needs beyond each agent's files, once they are written, in order: the endpoint kept
 * for every command, where the token comes from, the steps each agent asks of the user, this
 * device's key. A project-level step (not an agent's) goes in this list.
 */
async function projectSteps(options: InitOptions, ctx: SetupContext, agents: readonly Agent[]): Promise<void> {
  const saved = await saveUserEndpoint(options.endpoint, options.env);
  options.out(`\nEndpoint ${options.endpoint.mcp} kept in ${saved}: every waymark command uses it when no --url is given.`);
  options.out(
    `\nNo token was written to any file. Your agent must start with ${TOKEN_VARIABLE} in its environment, e.g. in your shell profile:\n  export ${TOKEN_VARIABLE}=<your Waymark token>\n`,
  );
  for (const agent of agents) {
    const { notes, trust } = agent.setup;
    // --trust gives, through the agent itself, what its notes would ask the user to do.
    if (options.trust && trust) options.out(await trust(ctx));
    else if (notes) options.out(await notes(ctx));
  }
  options.out(await deviceStep(ctx.project, options.env));
  options.out(`The bytes each file had before init are kept in ${join(cacheRoot(options.env), "init")}, for waymark init --remove.\n`);
  options.out(await commitStep(ctx, agents));
  options.out(onPathStep(options));
  options.out("Check the setup with: waymark doctor\n");
}

/**
 * Whether init may write `label`, a file of the user's outside the project (Codex's own config):
 * with --global-config, or when the user says yes on the terminal. Nothing outside the project
 * changes without saying so, nor without asking.
 */
async function mayWriteOutside(options: InitOptions, agent: Agent, label: string): Promise<boolean> {
  if (options.globalConfig) return true;
  if (!options.confirm) return false;
  return options.confirm(`${agent.label} reads its MCP servers from ${label}, outside this project. Add Waymark's block to it? [y/N] `);
}

/** Says what init left as it is outside the project, and how to add it: --global-config, or the lines themselves. */
async function leftOutside(options: InitOptions, agent: Agent, planned: Planned, label: string): Promise<string> {
  return (
    `  left ${label} as it is (outside the project; not asked${options.confirm ? ": answered no" : ": no terminal"}). ${agent.label} needs this change to start Waymark's MCP server:\n` +
    `  run init again with --global-config, or make it yourself:\n${await unifiedDiff(label, planned.before, planned.after)}`
  );
}

/** Init's files in the project that git would take into the next commit: the command that commits them first. */
async function commitStep(ctx: SetupContext, agents: readonly Agent[]): Promise<string> {
  const paths = agents.flatMap((agent) =>
    agentEdits(agent, ctx)
      .filter((edit) => edit.scope === "project")
      .map((edit) => edit.path),
  );
  const files = await uncommittedFiles(ctx.project, paths);
  if (files === null || files.length === 0) return "";
  return (
    `\nCommit what init wrote into the project before your agent's first task (it sets the project up for everyone who clones it;\n` +
    `otherwise the agent's first commit sweeps it in with its work):\n  ${commitCommand(files)}\n` +
    `Nothing else needs committing or ignoring: Waymark keeps its own state outside the project. To keep these files to\n` +
    `yourself instead, list them in .git/info/exclude.\n`
  );
}

/**
 * Init usually runs through npx, which puts nothing on PATH: the `waymark …` commands it prints,
 * and the docs show, need the alias it prints (the same version-matched helper, through npx).
 */
function onPathStep(options: InitOptions): string {
  // npx puts the package it runs on PATH for that one run (its cache's `_npx/<hash>/node_modules/.bin`): not the user's PATH.
  const userPath = (options.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => !/[\\/]_npx[\\/]/.test(dir))
    .join(delimiter);
  if (isOnPath("waymark", userPath)) return "";
  const command = helperCommandLine(options.endpoint, options.version, []);
  return `\n\`waymark\` is not on your PATH (init ran through npx). For \`waymark doctor\` and the other commands, add to your shell profile:\n  alias waymark='${command}'\n`;
}

/** Runs init (or --remove, or a dry run); returns the exit code. */
export async function runInit(options: InitOptions): Promise<number> {
  const ctx = await initContext(options.dir, options.endpoint, options.version, options.env);
  const { agents, why } = chooseAgents(options, ctx);
  if (agents.length === 0) {
    options.out(
      `No agent found in ${ctx.project} or ${ctx.home} (looked for ${listed(AGENTS.map((agent) => agent.label))}).\nName them: waymark init --url ${options.endpoint.origin} --agent ${AGENTS.map((agent) => agent.name).join(",")}\n`,
    );
    return 1;
  }
  let failed = false;
  /** Folders init created, taken out by --remove once every file is gone (deepest first). */
  const createdDirs = new Set<string>();
  const verb = options.remove ? "removed from" : "wrote";
  for (const agent of agents) {
    const changed: string[] = [];
    const problems: string[] = [];
    const notWritten: string[] = [];
    for (const edit of agentEdits(agent, ctx)) {
      const label = displayPath(edit.path, ctx);
      let planned: Planned;
      try {
        planned = await plan(edit, options, ctx.project);
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
        continue;
      }
      if (planned.before === planned.after) continue;
      if (options.dryRun) {
        changed.push(label);
        options.out(await unifiedDiff(label, planned.before, planned.after));
        continue;
      }
      if (edit.scope === "home" && !options.remove && !(await mayWriteOutside(options, agent, label))) {
        notWritten.push(await leftOutside(options, agent, planned, label));
        continue;
      }
      changed.push(label);
      await write(planned, options, createdDirs);
    }
    const evidence = options.agents || options.remove ? "" : ` (found ${(why.get(agent) ?? []).join(", ")})`;
    const summary =
      changed.length === 0
        ? options.remove
          ? "nothing of Waymark's to remove"
          : "already up to date"
        : `${options.dryRun ? `would ${options.remove ? "remove from" : "write"}` : verb} ${changed.join(", ")}`;
    options.out(`${agent.label}${evidence}: ${summary}\n`);
    for (const text of notWritten) options.out(text);
    for (const problem of problems) options.out(`  error: ${problem}\n`);
    failed ||= problems.length > 0;
  }
  for (const dir of [...createdDirs].sort((a, b) => b.length - a.length)) await rmdir(dir).catch(() => {});
  // The repository's git config that makes the task records (git notes) follow rewrites and fetches.
  options.out(
    await setupNotes(ctx.project, { remove: options.remove, dryRun: options.dryRun }).catch(
      (e: unknown) => `Notes: not set up: ${String(e)}\n`,
    ),
  );
  if (!options.remove && !options.dryRun) await projectSteps(options, ctx, agents);
  return failed ? 1 : 0;
}
