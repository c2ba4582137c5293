/**
 * @module git/spawner
 * git started by a small shell instead of by the helper's own process. Node starts a child by
 * forking the whole process (libuv's spawn on Linux is fork then exec): the helper is a ~120 MB
 * process, and each fork copies its page tables and makes its next writes fault, about 2.5 ms
 * of CPU per git process, measured, against under 0.8 ms from a bare Node and far less from a
 * shell. So one `/bin/sh` per git environment, started with that environment and a few slots
 * (each two sockets Node made for it: stdin and stdout on one, stderr), starts the next git
 * processes: `git -C <dir> <args>`, the slot's sockets as its standard streams and every other
 * slot's closed. A shell whose slots are used up is let go and the next call starts another: one
 * fork of the helper per SLOTS gits. Only where the process asked for it (`waymark mcp`, which runs
 * for a whole session): a short-lived command would pay a shell and its check for a git or two.
 * What git is given is the same as spawn's: its arguments (never parsed by the shell: every word
 * is quoted), its directory, and its environment, checked once per environment by running
 * `/usr/bin/env` the same way (a shell may add or change variables; until the check answered, or
 * where it found a difference, git is spawned as before). The environment is never in the shell's
 * arguments, which other users can read. Where this cannot be exact git is spawned as before: a word or
 * variable with a newline (the shell reads a line per process), a directory that is not there or a
 * PATH with a relative entry or without git on it (they fail as spawn's ENOENT), no /bin/sh or
 * /usr/bin/env, or a shell that failed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import type { Duplex, Readable, Writable } from "node:stream";

const SHELL = "/bin/sh";
const ENV = "/usr/bin/env";
/**
 * git processes one shell starts before it is let go: two sockets each (stdin and stdout share one,
 * a socket being two-way; stderr), and the shell (dash) redirects descriptors up to 9 only.
 */
const SLOTS = 3;
const FIRST_FD = 3;
/** Shells kept, one per environment (the plain one and one per repository's inert config). */
const KEPT_SHELLS = 4;

/** A git process the shell started: its streams and how it ended (its exit code). */
export type ShellStarted = { stdin: Writable | null; stdout: Readable | null; stderr: Readable | null; exited: Promise<number | null> };

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** Every slot's descriptors closed, as a redirection list. */
const CLOSE_ALL = Array.from({ length: SLOTS * 2 }, (_, k) => `${FIRST_FD + k}<&-`).join(" ");

/**
 * The shell's program (its variables named so that no environment's are touched): each line
 * `__wm_r <id> <io> <err> <word>...` runs `<word>...` with the slot's descriptors as its streams and
 * every other slot's closed, and says `<id> x <code>` when it exited. The shell's own copies of the
 * slot are closed at once, so the streams end when the process does. No `cd` (it would change
 * PWD): git is given its directory with `-C`. The environment is the shell's own, the one it was
 * started with, which a shell may change (verified once per environment: startThroughShell).
 */
const PROGRAM = [
  `__wm_C=${quote(CLOSE_ALL)}`,
  "__wm_r() {",
  "  __wm_k=$1 __wm_o=$2 __wm_e=$3; shift 3",
  '  { ( eval "exec 0<&$__wm_o 1>&$__wm_o 2>&$__wm_e $__wm_C"; exec "$@" ) &',
  '    eval "exec $__wm_C"; wait $!; echo "$__wm_k x $?"; } &',
  '  eval "exec $__wm_o>&- $__wm_e>&-"',
  "}",
  'while IFS= read -r __wm_line; do eval "$__wm_line"; done',
  // Its processes stay its descendants until they end (never handed to init): the helper's CPU counts them.
  "wait",
].join("\n");

type Pending = { resolve(code: number | null): void; reject(error: Error): void };

class Shell {
  private readonly child: ChildProcess;
  private next = 0;
  private readonly pending = new Map<number, Pending>();
  private buffered = "";
  dead = false;

  constructor(env: NodeJS.ProcessEnv) {
    // The environment is the shell's, never its arguments: other users may read a process's arguments.
    this.child = spawn(SHELL, ["-c", PROGRAM], {
      stdio: ["pipe", "pipe", "ignore", ...Array.from({ length: SLOTS * 2 }, () => "pipe" as const)],
      env,
    });
    this.child.on("error", () => this.fail(new Error("the git shell did not start")));
    this.child.on("close", () => this.fail(new Error("the git shell ended before git did")));
    this.child.stdin?.on("error", () => {});
    this.child.stdout?.setEncoding("latin1");
    this.child.stdout?.on("data", (chunk: string) => this.answered(chunk));
    // Nothing of an idle shell keeps the helper alive: a git's answer does, while it runs (start).
    this.child.unref();
    for (const stream of this.child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
  }

  /** Let go: it ends once the git processes it started have. */
  retire(): void {
    this.next = SLOTS;
    this.child.stdin?.end();
  }

  /** Slots left in this shell. */
  get free(): number {
    return this.dead ? 0 : SLOTS - this.next;
  }

  start(words: readonly string[]): ShellStarted {
    const id = this.next++;
    const fds = [FIRST_FD + id * 2, FIRST_FD + id * 2 + 1];
    const [io, stderr] = fds.map((fd) => this.child.stdio[fd]) as [Duplex, Readable];
    const stdin: Writable = io;
    const stdout: Readable = io;
    const exited = new Promise<number | null>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    this.busy();
    for (const stream of [stdout, stderr]) (stream as { ref?: () => void }).ref?.();
    this.child.stdin?.write(`__wm_r ${id} ${fds.join(" ")} ${words.map(quote).join(" ")}\n`);
    // The last slot used: the shell ends once its git processes have (their streams stay open until then).
    if (this.next === SLOTS) this.child.stdin?.end();
    const streamsEnded = Promise.all([stdout, stderr].map((stream) => new Promise<void>((done) => stream.once("close", () => done()))));
    const ended = async (code: number | null) => {
      await streamsEnded;
      return code;
    };
    return { stdin, stdout, stderr, exited: exited.then(ended) };
  }

  private answered(chunk: string): void {
    this.buffered += chunk;
    let end = this.buffered.indexOf("\n");
    while (end >= 0) {
      const [id, kind, code] = this.buffered.slice(0, end).split(" ");
      this.buffered = this.buffered.slice(end + 1);
      const waiting = this.pending.get(Number(id));
      this.pending.delete(Number(id));
      if (kind === "x") waiting?.resolve(Number(code));
      end = this.buffered.indexOf("\n");
    }
    if (this.pending.size === 0) this.idle();
  }

  private fail(error: Error): void {
    this.dead = true;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }

  /** While a git runs, its answer keeps the helper alive; idle, the shell does not. */
  private busy(): void {
    (this.child.stdout as { ref?: () => void } | null)?.ref?.();
  }

  private idle(): void {
    (this.child.stdout as { unref?: () => void } | null)?.unref?.();
  }
}

const shells = new Map<string, Shell>();
/** Whether `git` is on a PATH (an absolute PATH only: a relative entry depends on the directory). */
const gitFound = new Map<string, boolean>();
let usable: boolean | undefined;
/** Off unless the process asked for it: a short-lived command would pay a shell and its check for a git or two. */
let enabled = false;

/** From now on, this process's git processes are started by a shell where that is exact (`waymark mcp`). */
export function startGitThroughShell(): void {
  enabled = true;
}

function gitOnPath(path: string | undefined): boolean {
  if (path === undefined || path === "") return false;
  let found = gitFound.get(path);
  if (found !== undefined) return found;
  const entries = path.split(delimiter);
  found = false;
  if (entries.every((entry) => entry !== "" && isAbsolute(entry))) {
    for (const entry of entries) {
      try {
        accessSync(join(entry, "git"), constants.X_OK);
        found = true;
        break;
      } catch {
        // Next entry.
      }
    }
  }
  if (gitFound.size >= 16) gitFound.clear();
  gitFound.set(path, found);
  return found;
}

function shellUsable(): boolean {
  if (usable === undefined) {
    try {
      accessSync(SHELL, constants.X_OK);
      accessSync(ENV, constants.X_OK);
      usable = process.platform !== "win32";
    } catch {
      usable = false;
    }
  }
  return usable;
}

/** Environments checked (startThroughShell): true where a shell passes them on unchanged. */
const verified = new Map<string, boolean>();
const checks = new Map<string, Promise<boolean>>();

/** The shell for `env` (`key`), a new one when it has no slot left; undefined when it cannot start. */
function shellFor(key: string, env: NodeJS.ProcessEnv): Shell | undefined {
  let shell = shells.get(key);
  if (shell && shell.free > 0) return shell;
  shells.delete(key);
  const oldest = shells.size >= KEPT_SHELLS ? shells.keys().next().value : undefined;
  if (oldest !== undefined) {
    shells.get(oldest)?.retire();
    shells.delete(oldest);
  }
  try {
    shell = new Shell(env);
  } catch {
    return undefined;
  }
  shells.set(key, shell);
  return shell;
}

/**
 * Whether a shell started with `env` gives its processes exactly `env` (a shell may export
 * variables of its own, or change some): `/usr/bin/env` run the same way prints what they get.
 * Until it answered, git is spawned as before.
 */
function verify(key: string, env: NodeJS.ProcessEnv, expected: readonly string[]): Promise<boolean> {
  verified.set(key, false);
  const shell = shellFor(key, env);
  if (!shell) return Promise.resolve(false);
  const run = shell.start([ENV]);
  run.stdin?.end();
  const out: Buffer[] = [];
  run.stdout?.on("data", (chunk: Buffer) => out.push(chunk));
  return run.exited.then(
    (code) => {
      const printed = Buffer.concat(out)
        .toString("utf8")
        .split("\n")
        .filter((line) => line !== "")
        .sort();
      const same = code === 0 && printed.length === expected.length && printed.every((line, at) => line === expected[at]);
      verified.set(key, same);
      if (!same) {
        shells.get(key)?.retire();
        shells.delete(key);
      }
      return same;
    },
    () => false,
  );
}

/** `env` as `env` prints it, sorted. */
function assignmentsOf(env: NodeJS.ProcessEnv): string[] {
  const assignments: string[] = [];
  for (const [name, value] of Object.entries(env)) if (value !== undefined) assignments.push(`${name}=${value}`);
  return assignments.sort();
}

/** The check of `env` (started once): whether git in `env` is started by a shell. */
export function shellChecked(env: NodeJS.ProcessEnv): Promise<boolean> {
  const assignments = assignmentsOf(env);
  const key = assignments.join("\0");
  let check = checks.get(key);
  if (!check) {
    check = verify(key, env, assignments);
    checks.set(key, check);
  }
  return check;
}

/**
 * git started by a shell with `env` as its whole environment, in `cwd` (`git -C`); undefined when
 * the caller must spawn it itself (see the module comment).
 */
export function startThroughShell(cwd: string, env: NodeJS.ProcessEnv, args: readonly string[]): ShellStarted | undefined {
  if (!enabled || !shellUsable() || !isAbsolute(cwd) || !gitOnPath(env.PATH)) return undefined;
  // A directory that is not there fails as spawn's ENOENT: spawned, as before.
  if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const assignments = assignmentsOf(env);
  const words = ["git", "-C", cwd, ...args];
  // The shell reads a line per process, and the check reads `env`'s lines: no word or variable with a newline.
  if ([...assignments, ...words].some((word) => word.includes("\n") || word.includes("\0"))) return undefined;
  const key = assignments.join("\0");
  if (!verified.get(key)) {
    if (!checks.has(key)) shellChecked(env).catch(() => {});
    return undefined;
  }
  return shellFor(key, env)?.start(words);
}
