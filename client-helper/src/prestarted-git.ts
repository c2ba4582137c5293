/**
 * @module prestarted-git
 * git processes a tool call starts before their input is known: while `git status` runs, the
 * `hash-object` that will hash the dirty files (and, at complete_task, the `cat-file` that will
 * tell which contents are stored, when the last task's line counts needed it) are already
 * started, so their start-up is off the call's path
 * (a spawn also holds the helper's thread for a few milliseconds: better while status runs).
 * runGit (./git/process.ts) takes one when the arguments, directory and environment match; the call
 * ends the ones it did not use (an empty input: they exit having done nothing).
 */
import { type GitContext, type StartedGit, startGit } from "./git/process.js";

type Waiting = { cwd: string; env: NodeJS.ProcessEnv; args: readonly string[]; started: StartedGit };

export class PrestartedGit {
  private readonly waiting: Waiting[] = [];
  private readonly queued: (() => void)[] = [];
  private closed = false;

  /**
   * Starts `git <args>` in `context` right after the next git process the call starts itself
   * (`git status` goes first: it is the longest), its stdin open until it is taken or the call ends.
   */
  startAfterNext(context: GitContext, args: readonly string[]): void {
    this.afterNext(() => {
      try {
        this.waiting.push({ cwd: context.cwd, env: context.env, args, started: startGit(context, args) });
      } catch {
        // Not started ahead: it starts when it is needed, as without this.
      }
    });
  }

  /** Runs `prepare` right after the next git process the call starts itself (unless the call ended first). */
  afterNext(prepare: () => void): void {
    this.queued.push(prepare);
  }

  /** runGit: the call started a process of its own. */
  spawned(): void {
    if (this.queued.length === 0) return;
    const queued = this.queued.splice(0);
    // After the processes started in the same turn (status and its siblings).
    setImmediate(() => {
      if (this.closed) return;
      for (const prepare of queued) prepare();
    });
  }

  /** The process started ahead for exactly this query, once; undefined when there is none. */
  take(context: GitContext, args: readonly string[]): StartedGit | undefined {
    const index = this.waiting.findIndex(
      (waiting) =>
        waiting.cwd === context.cwd &&
        waiting.env === context.env &&
        waiting.args.length === args.length &&
        waiting.args.every((arg, at) => arg === args[at]),
    );
    if (index < 0) return undefined;
    return this.waiting.splice(index, 1)[0]?.started;
  }

  /** Ends every process not taken, and starts no more. */
  close(): void {
    this.closed = true;
    this.queued.length = 0;
    for (const { started } of this.waiting.splice(0)) started.finish(Buffer.alloc(0)).catch(() => {});
  }
}
