/**
 * @module agent-config
 * What every agent is configured with to record its work in Waymark, and the shape of one agent's
 * definition (AgentConfig), for the two ways it gets there: `waymark init` (the helper writes it into a
 * project) and the plugins every endpoint serves (./plugin). The helper runs from the endpoint's own
 * version-matched tarball through npx; hooks and the MCP server first try the helper a previous run left
 * a note of in the user's cache dir (no npm start-up); the token is only ever referenced (WAYMARK_TOKEN),
 * never written. Each agent's own formats are its module in ./agents/ (listed once in ./agents.ts).
 */

/** The environment variable the helper reads its token from; configurations only ever reference it. */
export const TOKEN_VARIABLE = "WAYMARK_TOKEN";

export type EndpointUrls = {
  /** `https://waymark.example.com` */
  origin: string;
  /** The Streamable HTTP MCP endpoint. */
  mcp: string;
};

/** The npm package spec of a helper version, served by the endpoint itself. */
export function helperPackageSpec(endpoint: EndpointUrls, version: string): string {
  return `${endpoint.origin}/helper/waymark-helper-${version}.tgz`;
}

/** The command and arguments that run `waymark <args...>` from that package. */
export function helperCommand(endpoint: EndpointUrls, version: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: "npx", args: ["-y", `--package=${helperPackageSpec(endpoint, version)}`, "waymark", ...args] };
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The same as one shell command line (hooks take a string); every argument is shell-safe. */
export function helperCommandLine(endpoint: EndpointUrls, version: string, args: readonly string[]): string {
  const { command, args: all } = helperCommand(endpoint, version, args);
  return [command, ...all].map(shellQuote).join(" ");
}

/**
 * The hooks' launcher as a POSIX shell word: `<cache>/waymark/helper-<version>.mjs`, which the
 * helper writes on each hook run (client-helper/src/hooks/launcher.ts puts it at the same path).
 */
export function launcherShellPath(version: string): string {
  return `"\${XDG_CACHE_HOME:-$HOME/.cache}/waymark/helper-${version}.mjs"`;
}

/**
 * A hook's command line: the launcher when a previous hook run left it (fast: no npm start-up),
 * else npx. The hook always exits 0, so the fallback only runs when the launcher is missing or
 * cannot load.
 */
export function hookCommandLine(endpoint: EndpointUrls, version: string, args: readonly string[]): string {
  const fast = ["node", launcherShellPath(version), ...args.map(shellQuote)].join(" ");
  return `${fast} 2>/dev/null || ${helperCommandLine(endpoint, version, args)}`;
}

/** The spool of the edit hooks, under the helper's cache dir (client-helper/src/hooks/spool.ts reads it). */
export const SPOOL_DIR = "spool";
/** What every spooling command line contains. */
const SPOOL_MARK = `/waymark/${SPOOL_DIR}"`;

/** Where the helper keeps each working tree's stop answer (client-helper/src/hooks/stop-state.ts writes it). */
export const STOP_STATE_DIR = "trees";

/** The working tree's identity on disk as the stop state is named by it (device, inode, birth time; GNU `stat`). */
const TREE_IDENTITY = `stat -c '%d:%i:%.9W'`;

/**
 * The edit hook's command line for `agent`: the agent's payload on stdin into a new file of the
 * spool (the directory made once, private), without Node or the helper: an edit hook runs after
 * every edit, and Node's start-up alone costs more CPU than recording the edit is worth. The helper
 * reads the spool at the next stop or complete_task. It also touches the working tree's
 * `<identity>.edited` beside its stop state (when the helper keeps one), so that the stop hook
 * knows, without Node, that the open tasks were worked on since their last reminder. An agent that
 * reads an answer from every hook (its `answers.silence`) gets the one that says nothing.
 */
export function spoolCommand(agent: Pick<AgentConfig, "name" | "answers">): string {
  const cache = `"\${XDG_CACHE_HOME:-$HOME/.cache}/waymark"`;
  const line = [
    `c=${cache}`,
    `d="\${XDG_CACHE_HOME:-$HOME/.cache}/waymark/${SPOOL_DIR}"`,
    `[ -d "$d" ] || mkdir -p -m 700 "$d"`,
    `cat > "$(mktemp "$d/${agent.name}.XXXXXXXXXX")"`,
    `{ [ ! -d "$c/${STOP_STATE_DIR}" ] || : >"$c/${STOP_STATE_DIR}/$(${TREE_IDENTITY} -- "$(pwd -P)").edited"; } 2>/dev/null`,
  ].join("; ");
  return `${line}; ${echoSilence(agent.answers) ?? ":"}`;
}

/**
 * The stop hook's command line, answered without Node from the stop state the helper left for this
 * working tree (client-helper/src/hooks/stop-state.ts) when it names this very directory and
 * repository (GNU `stat`; where it is missing the check fails):
 *  - a reminder due (a task never reminded, or the tree edited since the state was kept: its
 *    `.edited` is newer), for an agent whose stop line may remind (`answers.stopInShell`): says it
 *    in the agent's answer (`answers.reminder`; not to an agent that already continued once for a
 *    stop hook: `stop_hook_active`), then notes that it did, so the next stop is quiet and the
 *    helper counts the open tasks reminded;
 *  - nothing to say (no task open, or all reminded) and no edit spooled since: says nothing.
 * Else `helper`, the helper's own stop hook, which reads the payload. POSIX sh.
 */
export function stopCommand(agent: Pick<AgentConfig, "answers">, helper: string): string {
  const cache = `"\${XDG_CACHE_HOME:-$HOME/.cache}/waymark"`;
  const silence = echoSilence(agent.answers);
  const quiet = silence === null ? "cat >/dev/null" : `cat >/dev/null; ${silence}`;
  const known = [
    `c=${cache}`,
    `d=$(pwd -P)`,
    `s=$(${TREE_IDENTITY} -- "$d" "$d/.git" 2>/dev/null)`,
    "set -- $s",
    `f="$c/${STOP_STATE_DIR}/$1.stop"`,
    // The state's lines: this tree's header, the state and the open tasks, the reminder of the tasks due, of all open tasks.
    `{ IFS= read -r h && IFS= read -r t && { IFS= read -r r && IFS= read -r a || :; }; } 2>/dev/null <"$f"`,
    `[ "$h" = "$2 $d" ]`,
  ].join(" && ");
  const nothingToSay = [
    `case "$t" in none|"reminded "*|"hook-reminded "*) ;; *) false;; esac`,
    // An edit spooled since: the helper records it (with no task open too: the spool stays small).
    `[ -z "$(find "$c/${SPOOL_DIR}" -type f -newer "$f" 2>/dev/null)" ]`,
  ].join(" && ");
  if (!agent.answers.stopInShell) return `if ${known} && ${nothingToSay}; then ${quiet}; else ${helper}; fi`;
  // The reminder to say now, if any: every open task's when the tree was edited since, else the due tasks'.
  const due = [
    `e=`,
    `{ [ ! "$c/${STOP_STATE_DIR}/$1.edited" -nt "$f" ] || e=$a; }`,
    `{ [ -n "$e" ] || case "$t" in "due "*) e=$r;; esac; }`,
    `[ -n "$e" ]`,
  ].join(" && ");
  const remind = [
    `p=$(cat)`,
    `case "$p" in *'"stop_hook_active":true'*|*'"stop_hook_active": true'*) ;; *) printf '${singleQuoted(agent.answers.reminder("%s"))}\\n' "$e"; printf '%s\\nhook-reminded %s\\n\\n%s\\n' "$h" "\${t#* }" "$a" >"$f.$$" && mv -f "$f.$$" "$f";; esac`,
  ].join("; ");
  return `if ${known} && ${due}; then ${remind}; elif [ "$h" = "$2 $d" ] && ${nothingToSay}; then ${quiet}; else ${helper}; fi`;
}

/** Whether an installed hook command is one of Waymark's (init and doctor find their own entries by it). */
export function isWaymarkHookCommand(command: unknown): boolean {
  return typeof command === "string" && (command.includes(" waymark hook ") || command.includes(SPOOL_MARK));
}

/**
 * The stdio MCP server every agent runs: the helper's proxy to the endpoint. Through npx a start
 * costs npm's own start-up (over a second, measured) before the agent's first request; so, like a
 * hook, it first runs the helper a previous run left a note of in the user's cache dir
 * (`helper-<version>.bin`: the path of the helper npx installed, written by the helper itself,
 * client-helper/src/hooks/launcher.ts) when that file is still there, else npx. POSIX sh.
 */
export function mcpServerCommand(endpoint: EndpointUrls, version: string): { command: string; args: string[] } {
  const args = ["mcp", "--url", endpoint.mcp];
  const note = `"\${XDG_CACHE_HOME:-$HOME/.cache}/waymark/helper-${version}.bin"`;
  const fast = `b=$(cat ${note} 2>/dev/null) && [ -f "$b" ] && exec node "$b" ${args.map(shellQuote).join(" ")}`;
  return { command: "sh", args: ["-c", `${fast}; exec ${helperCommandLine(endpoint, version, args)}`] };
}

/** One hook: the agent's event (and matcher) and the command it runs; `async`: Claude Code runs it in the background. */
export type HookSpec = { event: string; matcher?: string; command: string; async?: boolean };

/**
 * The helper's hooks (`waymark hook <event>`), which each agent installs on events of its own:
 * the session's start (context: the open tasks and the workflow), what a tool call did (an edit, a
 * shell command: spooled without Node, spoolCommand) and the stop (a reminder to complete a task
 * left open: answered without Node when it can be, stopCommand).
 */
export const HOOK_EVENTS = ["session-start", "post-tool-use", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The command line each hook runs, by event (./agents.ts's agentHooks makes them): each agent installs them on its own events. */
export type HookLines = { readonly [Event in HookEvent]: string };

/** A hook's payload: the JSON object the agent writes on the hook's stdin. */
export type HookPayload = Record<string, unknown>;

/** What an agent's hooks answer on stdout, in its format (the helper's hooks and the shell lines alike). */
export type HookAnswers = {
  /** What a hook with nothing to say prints: nothing (null), or the JSON the agent reads from every hook. */
  silence: string | null;
  /** The session start's context. */
  context(text: string): string;
  /** A stop's reminder, made from the reminder as a JSON string (the stop line fills it in from the kept state, without Node). */
  reminder(reasonJson: string): string;
  /**
   * Whether the installed stop line may say a due reminder itself: the agent tells a stop it already
   * continued once by `"stop_hook_active": true` in the payload, which the line checks. Else every
   * reminder is the helper's, which reads the payload.
   */
  stopInShell: boolean;
};

/** The fields of a hook's payload every hook reads, before anything else. */
export type HookPayloadFields = {
  /** The directory the agent works in; null: the hook's own. */
  workingDirectory(payload: HookPayload): string | null;
  /** The agent's session, and the transcript that holds its usage. */
  session(payload: HookPayload): { id: string | null; transcript: string | null };
  /** Whether a stop may remind: not when the agent already continued once for a stop hook, nor when the user stopped it. */
  stopMayRemind(payload: HookPayload): boolean;
};

/** One file of the plugin marketplace repository (./plugin). */
export type PluginFile = { path: string; content: string };

/** What every agent's plugin files are made of (./plugin gives them). */
export type PluginParts = {
  /** The plugin's name, and the marketplace's. */
  name: string;
  marketplace: string;
  /** The plugin's directory in the repository (`plugins/waymark`). */
  dir: string;
  origin: string;
  version: string;
  /** What every manifest starts with. */
  entry: { name: string; description: string; version: string };
  author: { name: string };
  /** The MCP server's command (mcpServerCommand). */
  server: { command: string; args: string[] };
  /** The agent's hooks file, in its layout (hooksFile). */
  hooks: string;
  /** The instructions (./instructions), for an agent whose plugin carries them in a file of its own. */
  instructions: string;
};

/**
 * One agent as both sides know it, Node-free: its name and label, the hooks it installs and its hooks
 * file's layout, what its hooks answer and the payload fields every hook reads, and its plugin files.
 * Each agent's definition is its module in ./agents/; the helper's own side of the same agent (its
 * files in a project, its tool calls and transcript) is client-helper/src/agents/<name>.ts, which
 * extends this one.
 */
export type AgentConfig = {
  /** `waymark init --agent <name>`, `waymark hook --agent <name>`, the spool's file names. */
  readonly name: string;
  readonly label: string;
  /** Its hooks: the lines, on its own events. */
  hooks(lines: HookLines): HookSpec[];
  /** Its hooks file: `{...header, hooks: {<event>: [entry(hook), ...]}}`. */
  readonly hooksFile: { entry(hook: HookSpec): Record<string, unknown>; header?: Readonly<Record<string, unknown>> };
  readonly answers: HookAnswers;
  readonly payload: HookPayloadFields;
  /** Its marketplace manifest, and its plugin files (beside the other agents', in one plugin directory). */
  plugin(parts: PluginParts): { marketplace: PluginFile; files: PluginFile[] };
};

/** A file's JSON as the plugins and init write it: two spaces, a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The shell command that prints the agent's silence; null: the agent reads nothing from a quiet hook. */
function echoSilence(answers: HookAnswers): string | null {
  return answers.silence === null ? null : `echo '${singleQuoted(answers.silence)}'`;
}

/** A fixed text that goes between single quotes of a shell line (a printf format at most): refused if it could end them. */
function singleQuoted(text: string): string {
  if (text.includes("'") || text.includes("\\") || text.replace("%s", "").includes("%"))
    throw new Error(`cannot go between single quotes: ${text}`);
  return text;
}
