/**
 * @module agent-config
 * What an agent is configured with to record its work in Waymark, defined once for the two
 * ways it gets there: `waymark init` (the helper writes it into a project) and the plugins every
 * endpoint serves (./plugin). The helper runs from the endpoint's own version-matched tarball
 * through npx; hooks and the MCP server first try the helper a previous run left a note of in the
 * user's cache dir (no npm start-up); the token is only ever referenced (WAYMARK_TOKEN), never written.
 */

/** The environment variable the helper reads its token from; configurations only ever reference it. */
export const TOKEN_VARIABLE = "WAYMARK_TOKEN";

export type AgentName = "claude" | "cursor" | "codex";

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
 * knows, without Node, that the open tasks were worked on since their last reminder. Cursor reads
 * a JSON object from every hook: it gets an empty one.
 */
export function spoolCommand(agent: AgentName): string {
  const cache = `"\${XDG_CACHE_HOME:-$HOME/.cache}/waymark"`;
  const line = [
    `c=${cache}`,
    `d="\${XDG_CACHE_HOME:-$HOME/.cache}/waymark/${SPOOL_DIR}"`,
    `[ -d "$d" ] || mkdir -p -m 700 "$d"`,
    `cat > "$(mktemp "$d/${agent}.XXXXXXXXXX")"`,
    `{ [ ! -d "$c/${STOP_STATE_DIR}" ] || : >"$c/${STOP_STATE_DIR}/$(${TREE_IDENTITY} -- "$(pwd -P)").edited"; } 2>/dev/null`,
  ].join("; ");
  return agent === "cursor" ? `${line}; echo '{}'` : `${line}; :`;
}

/**
 * The stop hook's command line, answered without Node from the stop state the helper left for this
 * working tree (client-helper/src/hooks/stop-state.ts) when it names this very directory and
 * repository (GNU `stat`; where it is missing the check fails):
 *  - a reminder due (a task never reminded, or the tree edited since the state was kept: its
 *    `.edited` is newer), for Claude Code and Codex: says it as `decision: "block"` (not to an
 *    agent that already continued once for a stop hook: `stop_hook_active`), then notes that it
 *    did, so the next stop is quiet and the helper counts the open tasks reminded;
 *  - nothing to say (no task open, or all reminded) and no edit spooled since: says nothing.
 * Else `helper`, the helper's own stop hook, which reads the payload (Cursor's reminders are
 * always the helper's: its stop answers in another shape). POSIX sh.
 */
export function stopCommand(agent: AgentName, helper: string): string {
  const cache = `"\${XDG_CACHE_HOME:-$HOME/.cache}/waymark"`;
  const quiet = agent === "cursor" ? `cat >/dev/null; echo '{}'` : "cat >/dev/null";
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
  if (agent === "cursor") return `if ${known} && ${nothingToSay}; then ${quiet}; else ${helper}; fi`;
  // The reminder to say now, if any: every open task's when the tree was edited since, else the due tasks'.
  const due = [
    `e=`,
    `{ [ ! "$c/${STOP_STATE_DIR}/$1.edited" -nt "$f" ] || e=$a; }`,
    `{ [ -n "$e" ] || case "$t" in "due "*) e=$r;; esac; }`,
    `[ -n "$e" ]`,
  ].join(" && ");
  const remind = [
    `p=$(cat)`,
    `case "$p" in *'"stop_hook_active":true'*|*'"stop_hook_active": true'*) ;; *) printf '{"decision":"block","reason":%s}\\n' "$e"; printf '%s\\nhook-reminded %s\\n\\n%s\\n' "$h" "\${t#* }" "$a" >"$f.$$" && mv -f "$f.$$" "$f";; esac`,
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
 * The hooks each agent runs, in its own event names: the session's start (context: the open
 * task), each edit and shell command (the agent's own edits, recorded for provenance; the
 * commands it ran, with their exit codes, as evidence), and its stop (a reminder to complete a
 * task it edited and left open).
 */
export function agentHooks(agent: AgentName, endpoint: EndpointUrls, version: string): HookSpec[] {
  const hook = (event: "session-start" | "stop") =>
    hookCommandLine(endpoint, version, ["hook", event, "--agent", agent, "--url", endpoint.mcp]);
  // What the agent's tools did (edits, shell commands) is spooled, for the helper to read later.
  const edit = spoolCommand(agent);
  switch (agent) {
    case "claude":
      return [
        { event: "SessionStart", matcher: "startup|resume|clear|compact", command: hook("session-start") },
        // Recording an edit or a command answers nothing: it runs in the background and never delays the agent.
        { event: "PostToolUse", matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash", command: edit, async: true },
        // A shell command that exited non-zero reaches this event instead, with its exit code.
        { event: "PostToolUseFailure", matcher: "Bash", command: edit, async: true },
        { event: "Stop", command: stopCommand(agent, hook("stop")) },
      ];
    case "codex":
      return [
        { event: "SessionStart", matcher: "startup|resume|clear", command: hook("session-start") },
        // apply_patch is Codex's edit tool; a shell command may run apply_patch too (or change files as any command does).
        { event: "PostToolUse", matcher: "apply_patch|Bash", command: edit },
        { event: "Stop", command: stopCommand(agent, hook("stop")) },
      ];
    case "cursor":
      return [
        { event: "sessionStart", command: hook("session-start") },
        { event: "afterFileEdit", command: edit },
        { event: "afterShellExecution", command: edit },
        // A subagent's own edits: Cursor lists them in subagentStop's modified_files.
        { event: "subagentStop", command: edit },
        { event: "stop", command: stopCommand(agent, hook("stop")) },
      ];
  }
}

/** Claude Code's and Codex's hook entry ({matcher?, hooks: [{type, command, timeout}]}). */
export function matcherHookEntry(hook: HookSpec): Record<string, unknown> {
  return {
    ...(hook.matcher ? { matcher: hook.matcher } : {}),
    hooks: [{ type: "command", command: hook.command, timeout: 10, ...(hook.async ? { async: true } : {}) }],
  };
}
