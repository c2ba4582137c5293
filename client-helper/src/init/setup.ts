/**
 * @module init/setup
 * `waymark init`: sets a project up for the agents found (or named) — MCP server entry,
 * instructions, hooks — and `--remove` takes it all out again. A second run changes
 * nothing; `--dry-run` prints the unified diff of what a run would write. No token is ever
 * written: configurations reference WAYMARK_TOKEN. To give files back byte for byte, the
 * bytes a file had before init are kept in the cache dir and restored by `--remove` when
 * the file still holds exactly what init wrote; otherwise only Waymark's entries are taken out.
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, rmdir, stat, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { repositoryRoot } from "../hooks/journal.js";
import { cacheRoot } from "../store.js";
import { AGENT_LABELS, AGENTS, type AgentName, agentEdits, type Context, displayPath, type FileEdit, SERVER_NAME } from "./agents.js";
import { detectAgents } from "./detect.js";
import { unifiedDiff } from "./diff.js";
import { parseEndpoint, TOKEN_VARIABLE } from "./helper-command.js";

export type InitOptions = {
  dir: string;
  url: string;
  version: string;
  agents: AgentName[] | null;
  dryRun: boolean;
  remove: boolean;
  env: NodeJS.ProcessEnv;
  out: (text: string) => void;
};

type Backup = { before: string | null; after: string | null; created_dirs: string[] };

export function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME !== "" ? env.HOME : homedir();
}

export async function initContext(dir: string, url: string, version: string, env: NodeJS.ProcessEnv): Promise<Context> {
  const home = homeOf(env);
  return {
    project: await repositoryRoot(dir),
    home,
    codexHome: env.CODEX_HOME && env.CODEX_HOME !== "" ? env.CODEX_HOME : join(home, ".codex"),
    endpoint: parseEndpoint(url),
    version,
  };
}

export async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** The endpoint written in the project's configuration, when --url and WAYMARK_URL are not given. */
export async function configuredUrl(dir: string): Promise<string | undefined> {
  for (const file of [".mcp.json", ".cursor/mcp.json"]) {
    const text = await readOrNull(`${dir}/${file}`).catch(() => null);
    if (!text) continue;
    try {
      const args = (JSON.parse(text) as { mcpServers?: Record<string, { args?: unknown }> }).mcpServers?.[SERVER_NAME]?.args;
      if (Array.isArray(args)) {
        const at = args.indexOf("--url");
        if (at >= 0 && typeof args[at + 1] === "string") return args[at + 1] as string;
      }
    } catch {
      // unreadable configuration: doctor reports it below
    }
  }
  return undefined;
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

async function plan(edit: FileEdit, options: InitOptions): Promise<Planned> {
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
  // A file init already wrote keeps the bytes it had before the first init.
  const original: Backup = backup !== null && backup.after === before ? { ...backup, after } : { before, after, created_dirs: created };
  await mkdir(dirname(backupPath), { recursive: true, mode: 0o700 });
  await writeFile(backupPath, JSON.stringify(original), { mode: 0o600 });
  await mkdir(dirname(edit.path), { recursive: true });
  if (after === null) await rm(edit.path, { force: true });
  else await writeFile(edit.path, after);
}

function chooseAgents(options: InitOptions, ctx: Context): { agents: AgentName[]; why: Record<AgentName, string[]> } {
  const why = detectAgents({ project: ctx.project, home: ctx.home, codexHome: ctx.codexHome, path: options.env.PATH });
  if (options.agents) return { agents: options.agents, why };
  if (options.remove) return { agents: [...AGENTS], why };
  return { agents: AGENTS.filter((agent) => why[agent].length > 0), why };
}

/** Runs init (or --remove, or a dry run); returns the exit code. */
export async function runInit(options: InitOptions): Promise<number> {
  const ctx = await initContext(options.dir, options.url, options.version, options.env);
  const { agents, why } = chooseAgents(options, ctx);
  if (agents.length === 0) {
    options.out(
      `No agent found in ${ctx.project} or ${ctx.home} (looked for Claude Code, Cursor and Codex).\nName them: waymark init --url ${options.url} --agent claude,cursor,codex\n`,
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
    for (const edit of agentEdits(agent, ctx)) {
      const label = displayPath(edit.path, ctx);
      let planned: Planned;
      try {
        planned = await plan(edit, options);
      } catch (error) {
        problems.push(error instanceof Error ? error.message : String(error));
        continue;
      }
      if (planned.before === planned.after) continue;
      changed.push(label);
      if (options.dryRun) options.out(await unifiedDiff(label, planned.before, planned.after));
      else await write(planned, options, createdDirs);
    }
    const evidence = options.agents || options.remove ? "" : ` (found ${why[agent].join(", ")})`;
    const summary =
      changed.length === 0
        ? options.remove
          ? "nothing of Waymark's to remove"
          : "already up to date"
        : `${options.dryRun ? `would ${options.remove ? "remove from" : "write"}` : verb} ${changed.join(", ")}`;
    options.out(`${AGENT_LABELS[agent]}${evidence}: ${summary}\n`);
    for (const problem of problems) options.out(`  error: ${problem}\n`);
    failed ||= problems.length > 0;
  }
  for (const dir of [...createdDirs].sort((a, b) => b.length - a.length)) await rmdir(dir).catch(() => {});
  if (!options.remove && !options.dryRun) {
    options.out(
      `\nNo token was written to any file. Your agent must start with ${TOKEN_VARIABLE} in its environment, e.g. in your shell profile:\n  export ${TOKEN_VARIABLE}=<your Waymark token>\n`,
    );
    if (agents.includes("codex")) {
      options.out("Codex runs the Waymark hooks only with hooks enabled in ~/.codex/config.toml: [features] codex_hooks = true\n");
    }
    options.out("Check the setup with: waymark doctor\n");
  }
  return failed ? 1 : 0;
}
