/**
 * @module git/queries
 * Every git query of the helper, one function each, run so that it observes the project
 * directory and nothing else, changes nothing, and executes nothing the repository itself
 * defines:
 *
 * - Read-only: --no-optional-locks (and GIT_OPTIONAL_LOCKS=0), so `git status` never takes
 *   index.lock to write back its refreshed stat cache while an agent runs `git commit`.
 * - The right repository: GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE and every other inherited
 *   GIT_* variable is dropped from the children's environment; git discovers the repository
 *   from the project directory alone (./process.ts).
 * - Inert: the repository's command-bearing config is overridden (./inert-config.ts).
 * - Bytes: always -z, read by ./porcelain.ts.
 */
import { encodePathBytes } from "@waymark/protocol/paths";
import type { Transition } from "@waymark/protocol/wire";
import { fileStamp } from "../file-stamp.js";
import { type HiddenEntry, parseDiffRaw, parseHiddenEntries, parseStatus, type StatusResult, splitNul, stdinPath } from "./porcelain.js";
import { type GitContext, GitError, isErrno, runGit } from "./process.js";

export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const NEWLINE = Buffer.from("\n");
const NUL_BYTE = Buffer.from([0]);

/**
 * git's blob ids of regular files in the work tree, computed as `git add` would (autocrlf,
 * eol and text attributes, ident, trusted clean filters) without writing any object:
 * `git hash-object --stdin-paths`, one process for the whole batch. null for a file that is
 * gone by the time git reads it.
 */
export async function gitHashFiles(context: GitContext, paths: readonly Uint8Array[]): Promise<(string | null)[]> {
  if (paths.length === 0) return [];
  const input = Buffer.concat(paths.flatMap((path) => [stdinPath(path), NEWLINE]));
  try {
    const ids = (await runGit(context, HASH_FILES, input)).toString("latin1").split("\n");
    if (ids.length - 1 === paths.length) return ids.slice(0, paths.length);
  } catch (error) {
    if (!(error instanceof GitError)) throw error;
  }
  // A file vanished mid-batch (an agent is working here): hash one by one, so only it is lost.
  if (paths.length === 1) return [null];
  const ids: (string | null)[] = [];
  for (const path of paths) ids.push(...(await gitHashFiles(context, [path])));
  return ids;
}

/** The arguments of gitHashFiles' git query (a tool call may start it ahead: ../prestarted-git.ts). */
export const HASH_FILES: readonly string[] = ["hash-object", "--stdin-paths"];

/** The repository's top-level directory and git directory, or null when `dir` is not inside a git work tree. */
export async function gitToplevel(context: GitContext): Promise<{ root: string; gitDir: string } | null> {
  try {
    const [root = "", gitDir = ""] = (await runGit(context, ["rev-parse", "--show-toplevel", "--absolute-git-dir"]))
      .toString("utf8")
      .split("\n");
    return { root, gitDir };
  } catch (error) {
    // No git at all, or not a repository: both mean "use checksums". Anything else
    // (dubious ownership, corrupt repository) must surface rather than silently
    // degrade to a different snapshot type.
    if (error instanceof GitError && /not a git repository/i.test(error.stderr)) return null;
    if (isErrno(error) && error.code === "ENOENT") return null;
    throw error;
  }
}

/** True when git ignores `relative` (a directory inside the work tree, "/"-separated, no trailing "/"). */
export async function gitIgnoresDirectory(context: GitContext, relative: string): Promise<boolean> {
  try {
    await runGit(context, ["check-ignore", "-q", "--", `${relative}/`]);
    return true;
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return false;
    throw error;
  }
}

/**
 * `git status --porcelain=v2 -z -uall --no-renames --branch`: the HEAD commit, the
 * branch, and every path that differs from HEAD in the index or the working tree, or
 * is untracked (ignored files excluded). `--branch` saves a separate rev-parse.
 * Submodules are compared by commit only (`dirty`): their inner edits never change the
 * gitlink, and looking inside would run git in a repository with a config of its own.
 */
export async function gitStatus(context: GitContext): Promise<StatusResult> {
  const out = await runGit(context, ["status", "--porcelain=v2", "-z", "-uall", "--no-renames", "--branch", "--ignore-submodules=dirty"]);
  return parseStatus(out);
}

/**
 * `git diff --raw -z --no-abbrev --no-renames <from> <to>`: a tree-to-tree diff of two
 * commits, which never looks at (or refreshes) the index. A null commit means the
 * empty tree (no commit yet, or an unborn branch).
 */
export async function gitDiffCommits(context: GitContext, from: string | null, to: string | null): Promise<Transition[]> {
  const out = await runGit(context, [
    "diff",
    "--raw",
    "-z",
    "--no-abbrev",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules=none",
    from ?? EMPTY_TREE,
    to ?? EMPTY_TREE,
    "--",
  ]);
  return parseDiffRaw(out);
}

/**
 * The filter driver each path's `filter` attribute names (`git check-attr -z --stdin filter`, which
 * reads attributes and runs nothing), by wire path; a path without one is absent.
 */
export async function gitFilterDrivers(context: GitContext, paths: readonly Uint8Array[]): Promise<Map<string, string>> {
  const drivers = new Map<string, string>();
  if (paths.length === 0) return drivers;
  const input = Buffer.concat(paths.flatMap((path) => [Buffer.from(path), NUL_BYTE]));
  const fields = splitNul(await runGit(context, ["check-attr", "-z", "--stdin", "filter"], input));
  for (let index = 0; index + 2 < fields.length; index += 3) {
    const value = (fields[index + 2] as Buffer).toString("utf8");
    if (value !== "unspecified" && value !== "unset" && value !== "set") drivers.set(encodePathBytes(fields[index] as Buffer), value);
  }
  return drivers;
}

/** The HEAD commit, or null when the current branch has no commit yet. */
export async function gitHead(context: GitContext): Promise<string | null> {
  try {
    return (await runGit(context, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).toString("utf8").trim() || null;
  } catch (error) {
    if (error instanceof GitError && error.exitCode === 1) return null;
    throw error;
  }
}

/** True when `commit` is still in the object database (it may have been garbage-collected). */
export async function gitHasCommit(context: GitContext, commit: string): Promise<boolean> {
  try {
    await runGit(context, ["cat-file", "-e", `${commit}^{commit}`]);
    return true;
  } catch (error) {
    if (error instanceof GitError) return false;
    throw error;
  }
}

/** The full id of the commit `revision` names, or null when it names none here. */
export async function gitCommitOf(context: GitContext, revision: string): Promise<string | null> {
  try {
    return (await runGit(context, ["rev-parse", "--verify", "--end-of-options", `${revision}^{commit}`])).toString("utf8").trim();
  } catch (error) {
    if (error instanceof GitError) return null;
    throw error;
  }
}

/** The commit a submodule's work tree has checked out (its gitlink state on disk). */
export async function gitSubmoduleHead(context: GitContext, dir: string): Promise<string | null> {
  try {
    return (await runGit({ ...context, cwd: dir }, ["rev-parse", "--verify", "-q", "HEAD"])).toString("utf8").trim() || null;
  } catch {
    return null;
  }
}

/**
 * Hidden entries by index file, kept by a long-running helper while the index (and the context's
 * config, by its environment) is unchanged: listing a large index again for every tool call
 * cost a git process each time. Bounded: a helper serves a handful of repositories.
 */
const hiddenByIndex = new Map<string, { stamp: string; env: NodeJS.ProcessEnv; entries: HiddenEntry[] }>();

/**
 * Index entries flagged skip-worktree (`S`/`s`) or assume-unchanged (lowercase tag), from
 * `git ls-files -v -s -z` ("<tag> <mode> <object> <stage>\t<path>"). status trusts those
 * flags and never looks at such files, so edits to them (or an agent hiding an edit with
 * `git update-index --assume-unchanged`) would go unseen. Unflagged entries (tag `H`) are
 * skipped without being decoded. `indexFile`: the index git reads, when the caller knows it
 * (the listing is then kept while the index is unchanged).
 */
export async function gitHiddenEntries(context: GitContext, indexFile?: string): Promise<HiddenEntry[]> {
  // Taken before the listing: a change during it shows in the next comparison.
  const index = indexFile === undefined ? null : fileStamp(indexFile);
  const known = indexFile === undefined ? undefined : hiddenByIndex.get(indexFile);
  if (index && !index.racy && known?.stamp === index.stamp && known.env === context.env) return known.entries;
  const out = await runGit(context, ["ls-files", "-v", "-s", "-z"]);
  const hidden = parseHiddenEntries(out);
  if (indexFile !== undefined && index && !index.racy) {
    if (hiddenByIndex.size >= 16) hiddenByIndex.clear();
    hiddenByIndex.set(indexFile, { stamp: index.stamp, env: context.env, entries: hidden });
  }
  return hidden;
}

/** The commit a revision names (`git rev-parse --verify <rev>^{commit}`), or null when it names none here. */
export async function gitResolveCommit(context: GitContext, revision: string): Promise<string | null> {
  if (revision.startsWith("-")) return null;
  try {
    return (
      (await runGit(context, ["rev-parse", "-q", "--verify", "--end-of-options", `${revision}^{commit}`])).toString("utf8").trim() || null
    );
  } catch (error) {
    if (error instanceof GitError) return null;
    throw error;
  }
}

/**
 * The commits of a range, newest first (`git rev-list base..head`): what a pull request adds to
 * its base. At most `max`; `more` says whether there were others.
 */
export async function gitRangeCommits(
  context: GitContext,
  base: string,
  head: string,
  max: number,
): Promise<{ commits: string[]; more: boolean }> {
  const out = await runGit(context, ["rev-list", `--max-count=${max + 1}`, `${base}..${head}`, "--"]);
  const commits = out
    .toString("utf8")
    .split("\n")
    .filter((line) => /^[0-9a-f]{40,64}$/.test(line));
  return { commits: commits.slice(0, max), more: commits.length > max };
}

/**
 * The lines a file has after `head` that the range added or changed, as [first, last] ranges
 * (`git diff -U0 base head -- path`: the hunks' new sides), so findings land on changed lines.
 */
export async function gitAddedRanges(context: GitContext, base: string, head: string, path: string): Promise<[number, number][]> {
  const out = await runGit(context, ["diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", base, head, "--", path]);
  const ranges: [number, number][] = [];
  for (const match of out.toString("utf8").matchAll(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/gm)) {
    const start = Number(match[1]);
    const count = match[2] === undefined ? 1 : Number(match[2]);
    if (count > 0) ranges.push([start, start + count - 1]);
  }
  return ranges;
}

/** Whether `ancestor` is reachable from `descendant` (`git merge-base --is-ancestor`); false when either is not here. */
export async function gitIsAncestor(context: GitContext, ancestor: string, descendant: string): Promise<boolean> {
  try {
    await runGit(context, ["merge-base", "--is-ancestor", ancestor, descendant]);
    return true;
  } catch (error) {
    if (error instanceof GitError) return false;
    throw error;
  }
}

/**
 * The stable patch id of the change from `from` to `to` (`git diff | git patch-id --stable`): equal
 * for two changes that make the same edits, wherever their lines sit (how `git cherry` tells a
 * replayed commit); null for no change.
 */
export async function gitPatchId(context: GitContext, from: string, to: string): Promise<string | null> {
  const diff = await runGit(context, ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", "--binary", from, to, "--"]);
  if (diff.length === 0) return null;
  const id = (await runGit(context, ["patch-id", "--stable"], diff)).toString("utf8").split(" ")[0];
  return id && /^[0-9a-f]{40,64}$/.test(id) ? id : null;
}
