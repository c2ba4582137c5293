/**
 * @module git/inert-config
 * The repository's own config (.git/config, config.worktree and what they include) is written
 * by whoever controls the repository, agents included. It is read without executing anything
 * (`git config --get-regexp`), and every command-bearing key it defines (core.fsmonitor, filter
 * drivers, diff drivers, pagers, ...) is overridden for every git child, back to the trusted
 * (system, global) value or to nothing. User, global and system config stay trusted. The same
 * read gives the settings the snapshot needs (file modes, symlinks, excludes, remotes, whether
 * files are stored as their bytes).
 */

import { splitNul } from "./porcelain.js";
import { cleanGitEnv, type GitContext, GitError, isErrno, runGit } from "./process.js";

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
    storesVerbatim: storesVerbatim(entries),
    unrunFilters: unrunFilters(entries),
  };
  return { context, includes: entries.some(({ key }) => key.startsWith("include.") || key.startsWith("includeif.")) };
}

/**
 * True when the config makes git convert no file on its way in: core.autocrlf off (unset or a
 * false value), no core.attributesFile and no attr.* setting (attr.tree reads attributes from a
 * tree); attributes files are looked for by ../verbatim-blobs.ts.
 */
function storesVerbatim(entries: readonly ConfigEntry[]): boolean {
  if (entries.some(({ key }) => key === "core.attributesfile" || key.startsWith("attr."))) return false;
  const autocrlf = entries.filter(({ key }) => key === "core.autocrlf").at(-1);
  return autocrlf === undefined || (autocrlf.value !== null && /^(false|no|off|0|)$/i.test(autocrlf.value.trim()));
}

/**
 * The filter drivers whose clean or process command the repository's own config sets: whatever
 * the trusted scopes say, git prefers that command when the agent commits, and the helper never
 * runs it, so its ids of such files are of their bytes where git's are of the filter's output.
 */
function unrunFilters(entries: readonly ConfigEntry[]): ReadonlySet<string> {
  const names = new Set<string>();
  for (const { scope, key } of entries) {
    const driver = /^filter\.(.+)\.(?:clean|process)$/.exec(key);
    if (driver?.[1] !== undefined && UNTRUSTED_SCOPES.has(scope)) names.add(driver[1]);
  }
  return names;
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

/** A context for the queries that run nothing a repository could define (`rev-parse`): no config read needed. */
export function plainContext(dir: string): GitContext {
  return { cwd: dir, env: cleanGitEnv(), fileMode: true, symlinks: true };
}

/**
 * `context` with hooks turned off as well: for the helper's one write to a repository (its notes,
 * ../notes/store.ts), whose `update-ref` would otherwise run a reference-transaction hook the
 * repository defines. A hooks path that names no directory makes git find no hook.
 */
export function withoutHooks(context: GitContext): GitContext {
  const count = Number(context.env.GIT_CONFIG_COUNT ?? "0");
  return {
    ...context,
    env: {
      ...context.env,
      GIT_CONFIG_COUNT: String(count + 1),
      [`GIT_CONFIG_KEY_${count}`]: "core.hooksPath",
      [`GIT_CONFIG_VALUE_${count}`]: "/dev/null/waymark-runs-no-hooks",
    },
  };
}
