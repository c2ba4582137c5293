/**
 * @module config-cache
 * The inert git context of a repository (./git/inert-config.ts: a clean environment plus the overrides that
 * neutralise every command its config defines), kept by the long-running MCP proxy between tool
 * calls instead of reading the config again for each. A kept context is used only while every
 * config file git reads for that repository is unchanged (same inode, size, modification and
 * change times), and a configuration that includes other files is never kept: an include's
 * target, or its condition (the branch, the remotes), can change while those files do not.
 * At a repository's top level, where git finds the repository is kept too, while its `.git` is
 * the same directory or the same gitfile: a tool call there then starts no git process before
 * `git status`.
 */
import { lstatSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileStamp, RACY_MS, type Stamp } from "./file-stamp.js";
import { commonGitDir } from "./git/head-files.js";
import { inertContext, readInertContext } from "./git/inert-config.js";
import type { GitContext } from "./git/process.js";

/** Where git looks for the system-wide config when GIT_CONFIG_SYSTEM does not say (distribution, /usr/local, Homebrew builds). */
const SYSTEM_CONFIGS = ["/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"];

/** Every config file git may read for the repository of `gitDir`, present or not (one that appears changes the stamp too). */
export function configFiles(gitDir: string, inherited: NodeJS.ProcessEnv = process.env): string[] {
  const home = inherited.HOME || homedir();
  const xdg = inherited.XDG_CONFIG_HOME || join(home, ".config");
  const files = [
    join(gitDir, "config"),
    join(gitDir, "config.worktree"),
    // A linked worktree reads the main repository's config: `commondir` names it.
    join(gitDir, "commondir"),
    join(home, ".gitconfig"),
    join(xdg, "git", "config"),
    ...SYSTEM_CONFIGS,
  ];
  const common = commonGitDir(gitDir);
  if (common !== null) files.push(join(common, "config"));
  for (const variable of ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"]) {
    const file = inherited[variable];
    if (file) files.push(file);
  }
  return files;
}

/** The stamps of `files` as one string, and whether any of them changed too recently to rely on it. */
export function configStamp(files: readonly string[], now = Date.now()): Stamp {
  const stamps = files.map((file) => fileStamp(file, now));
  return { stamp: stamps.map(({ stamp }) => stamp).join("|"), racy: stamps.some(({ racy }) => racy) };
}

/** Where git found the repository of a directory: its top level and git directory (`git rev-parse`). */
export type Found = { root: string; gitDir: string };

/**
 * The stat data that decides which repository git finds from a repository's top level: its
 * `.git`, the same directory (same inode) or the same gitfile (a linked worktree's pointer).
 * Null when `.git` is missing or was changed too recently to rely on.
 */
function discoveryStamp(root: string, now: number): string | null {
  const info = lstatSync(join(root, ".git"), { bigint: true, throwIfNoEntry: false });
  if (!info) return null;
  if (info.isDirectory()) {
    // Still a repository (git checks HEAD, objects and refs): an emptied .git sends git on upwards.
    const parts = ["HEAD", "objects", "refs"].map((name) => lstatSync(join(root, ".git", name), { bigint: true, throwIfNoEntry: false }));
    if (parts.some((part) => !part)) return null;
    return `dir:${info.dev}:${info.ino}:${parts.map((part) => (part?.isDirectory() ? part.ino : "f")).join(":")}`;
  }
  if (now - Number(info.mtimeMs) < RACY_MS || now - Number(info.ctimeMs) < RACY_MS) return null;
  return `file:${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

type Kept = Found & { context: GitContext; files: string[]; stamp: string; discovery: string | null };

export class InertContexts {
  private readonly known = new Map<string, Kept>();

  /** `clock`: the time the racy rule compares modification times with. */
  constructor(
    private readonly inherited: NodeJS.ProcessEnv = process.env,
    private readonly clock: () => number = Date.now,
  ) {}

  private unchanged(kept: Kept): boolean {
    return configStamp(kept.files, this.clock()).stamp === kept.stamp;
  }

  /**
   * The repository git would find from `dir` and its inert context, without running git, when
   * `dir` is the top level of a repository read before and neither its `.git` nor any config file
   * changed since; null otherwise (ask git: gitToplevel, then `of`).
   */
  kept(dir: string): (Found & { context: GitContext }) | null {
    const kept = this.known.get(dir);
    if (!kept || kept.discovery === null || kept.discovery !== discoveryStamp(dir, this.clock())) return null;
    return this.unchanged(kept) ? { root: kept.root, gitDir: kept.gitDir, context: kept.context } : null;
  }

  /**
   * The inert context of `dir`. `found`: where git found the repository of `dir` in this tool
   * call (null outside a repository, where nothing is kept).
   */
  async of(dir: string, found: Found | null): Promise<GitContext> {
    if (found === null) return inertContext(dir, this.inherited);
    const kept = this.known.get(dir);
    if (kept && kept.gitDir === found.gitDir && kept.root === found.root && this.unchanged(kept)) return kept.context;
    this.known.delete(dir);
    const files = configFiles(found.gitDir, this.inherited);
    // Taken before the read: a change during it shows in the next comparison.
    const now = this.clock();
    const before = configStamp(files, now);
    const discovery = dir === found.root ? discoveryStamp(dir, now) : null;
    const { context, includes } = await readInertContext(dir, this.inherited);
    if (!includes && !before.racy) this.known.set(dir, { ...found, context, files, stamp: before.stamp, discovery });
    return context;
  }
}
