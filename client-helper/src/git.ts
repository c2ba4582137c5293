/**
 * @module git
 * Every git query of the helper, run so that it observes the project directory and nothing
 * else, changes nothing, and executes nothing the repository itself defines.
 *
 * - Read-only: --no-optional-locks (and GIT_OPTIONAL_LOCKS=0), so `git status` never takes
 *   index.lock to write back its refreshed stat cache while an agent runs `git commit`.
 * - The right repository: GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE and every other inherited
 *   GIT_* variable is dropped from the children's environment; git discovers the repository
 *   from the project directory alone.
 * - Inert: the repository's own config (.git/config, config.worktree and what they include)
 *   is written by whoever controls the repository, agents included. Every command-bearing key
 *   it defines (core.fsmonitor, filter drivers, diff drivers, pagers, ...) is overridden for
 *   every git child, back to the trusted (system, global) value or to nothing. User, global
 *   and system config stay trusted.
 * - Bytes: -z output is split and read as bytes; paths become wire paths
 *   (@waymark/protocol/paths) without ever being decoded as UTF-8 on the way.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { encodePathBytes } from "@waymark/protocol/paths";
import type { FileState, Transition } from "@waymark/protocol/wire";
import { fileStamp } from "./file-stamp.js";

export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
export const NULL_SHA = "0000000000000000000000000000000000000000";
const NULL_MODE = "000000";
const NUL = 0;
const SPACE = 0x20;

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
  /** From the config read: git stores files as their bytes unless attributes say otherwise (./verbatim-blobs.ts). */
  plainCheckin?: boolean;
  /** git processes this tool call started ahead of their input (./prestarted-git.ts). */
  ready?: { take(context: GitContext, args: readonly string[]): StartedGit | undefined; spawned(): void };
};

/** A git process started before its input is known: `finish` sends the input and reads the answer. */
export type StartedGit = {
  finish(input: Buffer, options?: { differencesOk?: boolean }): Promise<Buffer>;
};

/** Spawns git with the helper's fixed flags; `finish` ends its stdin with the input (if it reads one) and reads its answer. */
export function startGit(context: GitContext, args: readonly string[], readsInput = true): StartedGit {
  const child = spawn("git", ["--no-pager", "--no-optional-locks", ...args], {
    cwd: context.cwd,
    env: context.env,
    stdio: [readsInput ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => err.push(chunk));
  child.stdin?.on("error", () => {}); // git may exit before reading it all; its exit code says why
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  exited.catch(() => {});
  return {
    async finish(input, options = {}) {
      child.stdin?.end(input);
      const code = await exited;
      if (code === 0 || (code === 1 && options.differencesOk)) return Buffer.concat(out);
      const stderr = Buffer.concat(err).toString("utf8").trim();
      throw new GitError(`git ${args[0]} failed (exit ${code}): ${stderr}`, code, stderr);
    },
  };
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

/**
 * Config keys that make git run a program, by pattern on git's normalised key (section and
 * variable lowercased, subsection as written), with the value that disables them.
 */
const COMMAND_KEYS: readonly { pattern: RegExp; disabled: string }[] = [
  { pattern: /^core\.fsmonitor$/, disabled: "false" },
  { pattern: /^core\.(pager|editor|askpass|sshcommand|gitproxy)$/, disabled: "" },
  { pattern: /^sequence\.editor$/, disabled: "" },
  { pattern: /^pager\..+$/, disabled: "false" },
  { pattern: /^filter\..+\.(clean|smudge|process)$/, disabled: "" },
  { pattern: /^filter\..+\.required$/, disabled: "false" },
  { pattern: /^diff\.external$/, disabled: "" },
  { pattern: /^diff\..+\.(textconv|command)$/, disabled: "" },
  { pattern: /^merge\..+\.driver$/, disabled: "" },
  { pattern: /^credential\.helper$/, disabled: "" },
  { pattern: /^gpg\.(.+\.)?program$/, disabled: "" },
];
const READ_KEYS_REGEXP =
  "^(core\\.(fsmonitor|pager|editor|askpass|sshcommand|gitproxy|filemode|symlinks|excludesfile|autocrlf|attributesfile)|sequence\\.editor|pager\\..*|filter\\..*|diff\\..*|merge\\..*|credential\\.helper|gpg\\..*|remote\\..*|include\\..*|includeif\\..*|attr\\..*)$";
const UNTRUSTED_SCOPES = new Set(["local", "worktree"]);

export type ConfigEntry = { scope: string; key: string; value: string | null };

/** `git config --show-scope --null` output: "scope\0key\nvalue\0", or "scope\0key\0" for a key without value. */
export function parseConfigList(out: Buffer): ConfigEntry[] {
  const entries: ConfigEntry[] = [];
  const fields = splitNul(out);
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const scope = (fields[index] as Buffer).toString("utf8");
    const item = fields[index + 1] as Buffer;
    const newline = item.indexOf(0x0a);
    const key = (newline < 0 ? item : item.subarray(0, newline)).toString("utf8");
    entries.push({ scope, key, value: newline < 0 ? null : item.subarray(newline + 1).toString("utf8") });
  }
  return entries;
}

/**
 * The overrides that neutralise every command the repository's own config defines: for each
 * such key set in local or worktree scope, the last trusted value of that key, else the
 * disabling value. core.fsmonitor is always off (a hook there would run on every status).
 */
export function untrustedCommandOverrides(entries: readonly ConfigEntry[]): [string, string][] {
  const trusted = new Map<string, string>();
  const untrusted = new Set<string>();
  for (const { scope, key, value } of entries) {
    if (!COMMAND_KEYS.some(({ pattern }) => pattern.test(key))) continue;
    if (UNTRUSTED_SCOPES.has(scope)) untrusted.add(key);
    else if (value !== null) trusted.set(key, value);
  }
  const overrides = new Map<string, string>([["core.fsmonitor", "false"]]);
  for (const key of untrusted) {
    if (key === "core.fsmonitor") continue;
    const disabled = COMMAND_KEYS.find(({ pattern }) => pattern.test(key))?.disabled ?? "";
    overrides.set(key, trusted.get(key) ?? disabled);
  }
  return [...overrides];
}

/**
 * Config given through GIT_CONFIG_COUNT/KEY/VALUE rather than `-c key=value`: a driver name may
 * contain "=", which `-c` would split at, letting a crafted name escape its override.
 */
function withConfig(env: NodeJS.ProcessEnv, overrides: readonly [string, string][]): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env, GIT_CONFIG_COUNT: String(overrides.length) };
  overrides.forEach(([key, value], index) => {
    out[`GIT_CONFIG_KEY_${index}`] = key;
    out[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return out;
}

/**
 * The context for running git in `dir`: a clean environment plus overrides for every command
 * the repository's config defines. Reading config executes nothing. Outside a repository (or
 * without git) only the trusted scopes exist and the context is still safe to use.
 */
export async function inertContext(dir: string, inherited: NodeJS.ProcessEnv = process.env): Promise<GitContext> {
  return (await readInertContext(dir, inherited)).context;
}

/** inertContext, and whether any config file read includes another (include.path, includeIf). */
export async function readInertContext(
  dir: string,
  inherited: NodeJS.ProcessEnv = process.env,
): Promise<{ context: GitContext; includes: boolean }> {
  const env = cleanGitEnv(inherited);
  let entries: ConfigEntry[] = [];
  try {
    entries = parseConfigList(
      await runGit({ cwd: dir, env, fileMode: true, symlinks: true }, [
        "config",
        "--includes",
        "--show-scope",
        "--null",
        "--get-regexp",
        READ_KEYS_REGEXP,
      ]),
    );
  } catch (error) {
    // Exit 1 means no key matched. Other failures (no git, dubious ownership) surface from the next query.
    if (!(error instanceof GitError) || error.exitCode !== 1) {
      if (!(isErrno(error) && error.code === "ENOENT")) throw error;
    }
  }
  const context: GitContext = {
    cwd: dir,
    env: withConfig(env, untrustedCommandOverrides(entries)),
    fileMode: booleanSetting(entries, "core.filemode"),
    symlinks: booleanSetting(entries, "core.symlinks"),
    localExcludesFile:
      entries.filter((entry) => entry.key === "core.excludesfile" && UNTRUSTED_SCOPES.has(entry.scope)).at(-1)?.value ?? "",
    remotes: remotesOf(entries),
    plainCheckin: plainCheckin(entries),
  };
  return { context, includes: entries.some(({ key }) => key.startsWith("include.") || key.startsWith("includeif.")) };
}

/**
 * True when the config makes git convert no file on its way in: core.autocrlf off (unset or a
 * false value), no core.attributesFile and no attr.* setting (attr.tree reads attributes from a
 * tree); attributes files are looked for by ./verbatim-blobs.ts.
 */
function plainCheckin(entries: readonly ConfigEntry[]): boolean {
  if (entries.some(({ key }) => key === "core.attributesfile" || key.startsWith("attr."))) return false;
  const autocrlf = entries.filter(({ key }) => key === "core.autocrlf").at(-1);
  return autocrlf === undefined || (autocrlf.value !== null && /^(false|no|off|0|)$/i.test(autocrlf.value.trim()));
}

/** Remote names (the subsection of any `remote.<name>.<variable>` key) and each one's last url. */
export function remotesOf(entries: readonly ConfigEntry[]): Map<string, string | null> {
  const remotes = new Map<string, string | null>();
  for (const { key, value } of entries) {
    if (!key.startsWith("remote.")) continue;
    const dot = key.lastIndexOf(".");
    if (dot <= "remote.".length) continue;
    const name = key.slice("remote.".length, dot);
    // As `git config --get` prints it and the helper read it from there: trimmed, empty is none.
    if (key.slice(dot + 1) === "url") remotes.set(name, value?.trim() || null);
    else if (!remotes.has(name)) remotes.set(name, null);
  }
  return remotes;
}

/** git's reading of a boolean key: the last value wins, a key without value is true, default true. */
function booleanSetting(entries: readonly ConfigEntry[], key: string): boolean {
  let value = true;
  for (const entry of entries) {
    if (entry.key !== key) continue;
    value = entry.value === null || /^(true|yes|on|1)$/i.test(entry.value.trim());
  }
  return value;
}

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

/** The arguments of gitHashFiles' git query (a tool call may start it ahead: ./prestarted-git.ts). */
export const HASH_FILES: readonly string[] = ["hash-object", "--stdin-paths"];
const NEWLINE = Buffer.from("\n");
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * A path as one line of --stdin-paths: as is, or C-quoted when a newline, a leading quote or
 * a trailing carriage return would otherwise change it (git unquotes lines that start with ").
 */
function stdinPath(path: Uint8Array): Buffer {
  const bytes = Buffer.from(path);
  const needsQuotes = bytes.includes(0x0a) || bytes[0] === QUOTE || bytes[bytes.length - 1] === 0x0d;
  if (!needsQuotes) return bytes;
  const out: number[] = [QUOTE];
  for (const byte of bytes) {
    if (byte === QUOTE || byte === BACKSLASH) out.push(BACKSLASH, byte);
    else if (byte < 0x20 || byte === 0x7f) out.push(BACKSLASH, ...Buffer.from(byte.toString(8).padStart(3, "0")));
    else out.push(byte);
  }
  out.push(QUOTE);
  return Buffer.from(out);
}

/** Splits -z output into its NUL-terminated fields (bytes, never decoded). */
export function splitNul(out: Buffer): Buffer[] {
  const fields: Buffer[] = [];
  let start = 0;
  while (start < out.length) {
    let end = out.indexOf(NUL, start);
    if (end < 0) end = out.length;
    fields.push(out.subarray(start, end));
    start = end + 1;
  }
  return fields;
}

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

/** The main repository's git directory of a linked worktree's (its `commondir` file); null for a main repository. */
export function commonGitDir(gitDir: string): string | null {
  try {
    const named = readFileSync(join(gitDir, "commondir"), "utf8").replace(/\r?\n$/, "");
    return named === "" ? null : resolve(gitDir, named);
  } catch {
    return null;
  }
}

/** A context for the queries that run nothing a repository could define (`rev-parse`): no config read needed. */
export function plainContext(dir: string): GitContext {
  return { cwd: dir, env: cleanGitEnv(), fileMode: true, symlinks: true };
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

export type TrackedRecord = {
  kind: "tracked";
  xy: string;
  sub: string;
  mH: string;
  mI: string;
  mW: string;
  hH: string;
  hI: string;
  path: string;
};
export type UnmergedRecord = {
  kind: "unmerged";
  xy: string;
  sub: string;
  /** Stage 2 ("ours") is the HEAD side of the conflicted operation. */
  m2: string;
  h2: string;
  mW: string;
  path: string;
};
export type UntrackedRecord = { kind: "untracked"; path: string; directory: boolean };
export type StatusRecord = TrackedRecord | UnmergedRecord | UntrackedRecord;
export type StatusResult = {
  head: string | null;
  branch: string | null;
  records: StatusRecord[];
};

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

/** Splits off `count` space-separated ASCII fields; the rest of the record is the path (bytes, may hold spaces). */
function fields(record: Buffer, count: number): { parts: string[]; path: Buffer } {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const space = record.indexOf(SPACE, start);
    if (space < 0) throw new Error(`unexpected git status record: ${JSON.stringify(record.toString("latin1"))}`);
    parts.push(record.toString("latin1", start, space));
    start = space + 1;
  }
  return { parts, path: record.subarray(start) };
}

export function parseStatus(out: Buffer): StatusResult {
  let head: string | null = null;
  let branch: string | null = null;
  const records: StatusRecord[] = [];
  for (const record of splitNul(out)) {
    if (record.length === 0) continue;
    switch (String.fromCharCode(record[0] as number)) {
      case "#": {
        const { parts, path: value } = fields(record, 2);
        // A branch name is shown, never compared: decoding it is harmless.
        const text = value.toString("utf8");
        if (parts[1] === "branch.oid") head = text === "(initial)" ? null : text;
        else if (parts[1] === "branch.head") branch = text === "(detached)" ? null : text;
        break;
      }
      case "1": {
        const { parts: f, path } = fields(record, 8);
        records.push({
          kind: "tracked",
          xy: f[1] ?? "",
          sub: f[2] ?? "",
          mH: f[3] ?? "",
          mI: f[4] ?? "",
          mW: f[5] ?? "",
          hH: f[6] ?? "",
          hI: f[7] ?? "",
          path: encodePathBytes(path),
        });
        break;
      }
      case "u": {
        // u XY sub m1 m2 m3 mW h1 h2 h3 path
        const { parts: f, path } = fields(record, 10);
        records.push({
          kind: "unmerged",
          xy: f[1] ?? "",
          sub: f[2] ?? "",
          m2: f[4] ?? "",
          mW: f[6] ?? "",
          h2: f[8] ?? "",
          path: encodePathBytes(path),
        });
        break;
      }
      case "?": {
        const path = record.subarray(2);
        // An untracked nested repository is reported as "dir/": git would record a gitlink.
        const directory = path[path.length - 1] === 0x2f;
        records.push({ kind: "untracked", path: encodePathBytes(directory ? path.subarray(0, -1) : path), directory });
        break;
      }
      default:
        // "2" (renames) cannot appear with --no-renames and "!" not without --ignored;
        // anything else is a format this parser does not know, and guessing would be wrong.
        throw new Error(`unexpected git status record: ${JSON.stringify(record.toString("latin1"))}`);
    }
  }
  return { head, branch, records };
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

export function parseDiffRaw(out: Buffer): Transition[] {
  const tokens = splitNul(out);
  const transitions: Transition[] = [];
  for (let i = 0; i + 1 < tokens.length; i += 2) {
    const meta = (tokens[i] as Buffer).toString("latin1");
    if (!meta.startsWith(":")) throw new Error(`unexpected git diff record: ${JSON.stringify(meta)}`);
    const [srcMode, dstMode, srcSha, dstSha] = meta.slice(1).split(" ") as [string, string, string, string];
    transitions.push({
      path: encodePathBytes(tokens[i + 1] as Buffer),
      before: fileState(srcMode, srcSha),
      after: fileState(dstMode, dstSha),
    });
  }
  return transitions;
}

export function fileState(mode: string, sha: string): FileState | null {
  return mode === NULL_MODE || sha === NULL_SHA ? null : { mode, blob: sha };
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

const SHA = /^[0-9a-f]{40}$/;

/**
 * HEAD read straight from the files of a plain `.git` directory (no process spawn).
 * Undefined whenever the layout is not the simple one (linked worktree, reftable,
 * unborn branch, symbolic ref chains): the caller then asks git. Callers must check
 * the value against another source (status's branch.oid) since refs may move at any time.
 */
export async function headFromFiles(root: string): Promise<string | undefined> {
  try {
    const gitDir = join(root, ".git");
    const head = readFileSync(join(gitDir, "HEAD"), "utf8").trim();
    if (SHA.test(head)) return head;
    const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    try {
      const loose = readFileSync(join(gitDir, ref), "utf8").trim();
      return SHA.test(loose) ? loose : undefined;
    } catch {
      const packed = readFileSync(join(gitDir, "packed-refs"), "utf8");
      for (const line of packed.split("\n")) {
        const [sha, name] = line.split(" ");
        if (name === ref && sha && SHA.test(sha)) return sha;
      }
      return undefined;
    }
  } catch {
    return undefined;
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

function isErrno(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && "code" in error;
}

/** An index entry whose worktree changes `git status` does not report. */
export type HiddenEntry = { path: string; flag: "skip-worktree" | "assume-unchanged"; index: FileState };

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
  const hidden: HiddenEntry[] = [];
  let start = 0;
  while (start < out.length) {
    let end = out.indexOf(NUL, start);
    if (end < 0) end = out.length;
    const tag = out[start] as number;
    if (tag !== 0x48 /* H */) {
      const tab = out.indexOf(0x09, start);
      if (tab > start && tab < end) {
        const [tagText, mode, object, stage] = out.toString("latin1", start, tab).split(" ");
        const skip = tagText === "S" || tagText === "s";
        const assumed = tagText !== undefined && tagText !== tagText.toUpperCase();
        const state = mode && object ? fileState(mode, object) : null;
        if ((skip || assumed) && stage === "0" && state !== null) {
          hidden.push({
            path: encodePathBytes(out.subarray(tab + 1, end)),
            flag: skip ? "skip-worktree" : "assume-unchanged",
            index: state,
          });
        }
      }
    }
    start = end + 1;
  }
  if (indexFile !== undefined && index && !index.racy) {
    if (hiddenByIndex.size >= 16) hiddenByIndex.clear();
    hiddenByIndex.set(indexFile, { stamp: index.stamp, env: context.env, entries: hidden });
  }
  return hidden;
}
