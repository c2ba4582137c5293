/**
 * @module hooks/journal
 * What the helper remembers on this machine about the work in one repository, for the
 * agent's hooks: the tasks open there (written when `start_task` goes through the helper),
 * the paths the agent's own edit tools touched while each was open, the agent session and
 * its transcript, and, once a task completes, its edited paths and transcript-derived usage.
 * Everything lives in the user's cache dir (`<cache>/activity/<key>/`, ../tree-key.ts: the working
 * tree and the repository in it, never the path alone), never in the repository; edits are
 * appended, one JSON line per tool call.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { AgentConfig, HookPayload } from "@waymark/protocol/agent-config";
import { plainTop } from "../git/plain-top.js";
import { cleanGitEnv } from "../git/process.js";
import { nameHash } from "../name-hash.js";
import { cacheRoot } from "../store.js";
import { treeKey } from "../tree-key.js";
import type { TranscriptUsage } from "../usage/transcript.js";
import { hookRemindedAt, keepStopState } from "./stop-state.js";

export type OpenTask = {
  task_id: string;
  workflow_id: string | null;
  name: string | null;
  started_at: number;
  /** When the stop hook last reminded the agent to complete this task. */
  reminded_at?: number;
};

export type AgentSession = {
  agent: string;
  session_id: string | null;
  transcript_path: string | null;
  seen_at: number;
  /** The hooks that ran install a shell-command hook too (./commands.ts): commands can be observed. */
  commands?: true;
};

export type CompletedTask = OpenTask & {
  completed_at: number;
  /** Repository-relative paths the agent's own edit tools touched while the task was open. */
  edited_paths: string[];
  usage: TranscriptUsage | null;
};

/**
 * How a task's usage is read from the agent's transcript, by the agent's name, the transcript and the
 * window (../usage/transcript.ts's transcriptUsage, which the proxy gives: the hooks never read one).
 */
export type UsageReader = (agent: string, transcriptPath: string, fromMs: number, toMs: number) => Promise<TranscriptUsage | null>;

export type LastWorkflow = { workflow_id: string; name: string | null; seen_at: number };

/** A workflow's state as get_workflow told it, and when (./workflow-state.ts). */
export type WorkflowState = { workflow_id: string; text: string; at: number };

/** Bound on the kept state: the session-start context shows far less of it. */
const WORKFLOW_STATE_LIMIT = 16 * 1024;

/** Lines a batch keeps for one record file before writing them (the line log carries edited contents). */
const BATCH_LINES_CHARS = 1024 * 1024;

/** Paths kept per task; a task that edits more is still recorded, the list says so. */
export const EDITED_PATHS_LIMIT = 5000;

const hash = nameHash;

/**
 * The repository top level of a directory (git), else the directory itself; real path either way.
 * An ordinary checkout's is found without git (../git/plain-top.ts): every hook run asks.
 */
export async function repositoryRoot(dir: string, timeoutMs = 1000): Promise<string> {
  const plain = plainTop(dir);
  if (plain !== null) return plain;
  const top = await new Promise<string | null>((done) => {
    execFile(
      "git",
      ["-C", dir, "rev-parse", "--show-toplevel"],
      { timeout: timeoutMs, encoding: "utf8", env: cleanGitEnv() },
      (error, stdout) => done(error ? null : stdout.replace(/\n$/, "")),
    );
  });
  return realRoot(top || dir);
}

function realRoot(path: string): string {
  try {
    // One realpath(3) call: the JavaScript one stats every component of the path, for each journal opened.
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

/**
 * The journal's files are small and written on the way of a tool call's answer: synchronously,
 * as each write through the thread pool costs a round trip (several per call on a busy machine).
 */
function writeAtomic(path: string, value: unknown): void {
  const temp = `${path}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, JSON.stringify(value), { mode: 0o600 });
  renameSync(temp, path);
}

async function readJson<T>(path: string): Promise<T | null> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return null;
  }
}

/**
 * What a batch of recorded tool calls shares (Journal.startBatch): the reads made once, whether
 * the stop state changed, and the lines each record file gets, written once at the end.
 */
type Batch = {
  open?: Promise<OpenTask[]>;
  session?: Promise<AgentSession | null>;
  stopState: boolean;
  appends: Map<string, string>;
  /** The record folders made (or found) in this batch: not made again for each record. */
  made: Set<string>;
};

/** While above zero, stop states are noted in `heldBack` instead of written (holdStopStates). */
let stopStateHolds = 0;
const heldBack = new Map<string, { root: string; cache: string }>();

/**
 * Holds every journal's stop state back until the returned release: a completion changes it twice
 * (the spool's edits recorded, then the task closed) and only the second is worth writing. The release
 * writes what is due (the last hold's); a stop meanwhile finds the edit hook's mark newer than the
 * stop state and reminds of every open task, as it does while the spool waits (./stop-state.ts).
 */
export function holdStopStates(): () => Promise<void> {
  stopStateHolds++;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (--stopStateHolds > 0) return;
    const due = [...heldBack.values()];
    heldBack.clear();
    await Promise.all(due.map(({ root, cache }) => new Journal(root, cache).keepStopState().catch(() => {})));
  };
}

export class Journal {
  readonly folder: string;
  /** Set while a spool's payloads are recorded together: reads made once, the stop state kept once at the end. */
  private batch: Batch | null = null;

  /** `root` is the repository top level (see repositoryRoot). */
  constructor(
    readonly root: string,
    private readonly cache: string = cacheRoot(),
  ) {
    // The working tree and the repository in it: a repository created again at this path starts fresh.
    this.folder = join(cache, "activity", treeKey(root).slice(0, 24));
  }

  /**
   * `top`: the repository top level of `dir` when the caller already asked git for it (the MCP
   * proxy's snapshot did), so no git process is started again for the same answer.
   */
  static async forDirectory(dir: string, cache?: string, top?: string): Promise<Journal> {
    return new Journal(top === undefined ? await repositoryRoot(dir) : realRoot(top), cache);
  }

  private taskFile(kind: "open" | "edits" | "done", taskId: string): string {
    return join(this.folder, kind, `${hash(taskId).slice(0, 40)}.${kind === "edits" ? "jsonl" : "json"}`);
  }

  /** The name a task's records of another kind take in `folder` (one file per task, named as the journal names its own). */
  static taskFileName(taskId: string, extension: string): string {
    return `${hash(taskId).slice(0, 40)}.${extension}`;
  }

  /** Makes the folder of records of `kind` (once per batch). */
  ensure(kind: string): void {
    if (this.batch?.made.has(kind)) return;
    mkdirSync(join(this.folder, kind), { recursive: true, mode: 0o700 });
    this.batch?.made.add(kind);
  }

  /**
   * From now until endBatch, many tool calls are recorded at once (a drained spool,
   * ./spool.ts): the open tasks and the session are read once, and the stop state, which every
   * record changes, is kept once at the end instead of after each.
   */
  startBatch(): void {
    this.batch ??= { stopState: false, appends: new Map(), made: new Set() };
  }

  /**
   * Ends the batch: each record file gets the batch's lines in one write (ten spooled edits
   * opened the task's two logs twenty times), then the stop state is kept if a record changed it.
   * Never throws.
   */
  async endBatch(): Promise<void> {
    const batch = this.batch;
    this.batch = null;
    for (const [path, lines] of batch?.appends ?? []) {
      try {
        appendFileSync(path, lines, { mode: 0o600 });
      } catch {
        // Those edits are not recorded, as a failed write of each alone would have left them.
      }
    }
    if (batch?.stopState) await this.keepStopState().catch(() => {});
  }

  /**
   * Appends `lines` to a record file of this journal's (its folder made by the caller); in a batch,
   * at its end, or once a file's waiting lines pass BATCH_LINES_CHARS (edited contents can be large).
   */
  append(path: string, lines: string): void {
    const waiting = this.batch ? (this.batch.appends.get(path) ?? "") + lines : lines;
    if (!this.batch || waiting.length > BATCH_LINES_CHARS) {
      this.batch?.appends.delete(path);
      appendFileSync(path, waiting, { mode: 0o600 });
      return;
    }
    this.batch.appends.set(path, waiting);
  }

  /** Bytes of lines for `path` waiting for the end of the batch. */
  pendingBytes(path: string): number {
    const lines = this.batch?.appends.get(path);
    return lines === undefined ? 0 : Buffer.byteLength(lines);
  }

  async taskStarted(task: OpenTask): Promise<void> {
    if (this.batch) this.batch.open = undefined;
    this.ensure("open");
    writeAtomic(this.taskFile("open", task.task_id), task);
    if (task.workflow_id) await this.workflowSeen(task.workflow_id, null);
    await this.keepStopState();
  }

  async workflowSeen(workflowId: string, name: string | null): Promise<void> {
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    const known = await this.lastWorkflow();
    const keep = known?.workflow_id === workflowId ? (name ?? known.name) : name;
    // Written again only when it names another workflow (every task start names one).
    if (known?.workflow_id === workflowId && known.name === keep) return;
    writeAtomic(join(this.folder, "workflow.json"), { workflow_id: workflowId, name: keep, seen_at: Date.now() });
  }

  lastWorkflow(): Promise<LastWorkflow | null> {
    return readJson<LastWorkflow>(join(this.folder, "workflow.json"));
  }

  async keepWorkflowState(workflowId: string, text: string, at: number): Promise<void> {
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    writeAtomic(join(this.folder, "workflow-state.json"), { workflow_id: workflowId, text: text.slice(0, WORKFLOW_STATE_LIMIT), at });
  }

  /** The kept state of `workflowId`, if the last one kept is that workflow's. */
  async workflowState(workflowId: string): Promise<WorkflowState | null> {
    const state = await readJson<WorkflowState>(join(this.folder, "workflow-state.json"));
    return state?.workflow_id === workflowId && typeof state.text === "string" ? state : null;
  }

  /** The tasks open in this repository, oldest first. */
  openTasks(): Promise<OpenTask[]> {
    if (this.batch) {
      this.batch.open ??= this.readOpenTasks();
      return this.batch.open;
    }
    return this.readOpenTasks();
  }

  private async readOpenTasks(): Promise<OpenTask[]> {
    const folder = join(this.folder, "open");
    const tasks: OpenTask[] = [];
    // Listed synchronously, as its files are read: a complete_task lists them up to three times.
    let names: string[] = [];
    try {
      names = readdirSync(folder);
    } catch {
      // No task opened here yet.
    }
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      const task = await readJson<OpenTask>(join(folder, name));
      if (task && typeof task.task_id === "string") tasks.push(task);
    }
    return tasks.sort((a, b) => a.started_at - b.started_at);
  }

  async markReminded(task: OpenTask, at: number): Promise<void> {
    if (this.batch) this.batch.open = undefined;
    writeAtomic(this.taskFile("open", task.task_id), { ...task, reminded_at: at });
    await this.keepStopState();
  }

  /** The open tasks a stop should remind of: never reminded, or edited since the last reminder. */
  async remindersDue(): Promise<OpenTask[]> {
    return (await this.openAndDue()).due;
  }

  /**
   * What the stop hook answers without the helper (./stop-state.ts), kept after every change of
   * the open tasks or their edits: nothing (no task open, or every one reminded since its last
   * edit), or the reminder of the tasks due.
   */
  async keepStopState(): Promise<void> {
    if (this.batch) {
      this.batch.stopState = true;
      return;
    }
    if (stopStateHolds > 0) {
      heldBack.set(`${this.cache}\0${this.root}`, { root: this.root, cache: this.cache });
      return;
    }
    keepStopState(this.cache, this.root, await this.openAndDue());
  }

  /** The open tasks, the reminder the installed stop line gave counted in, and those of them due a reminder. */
  private async openAndDue(): Promise<{ open: OpenTask[]; due: OpenTask[] }> {
    const open = this.withHookReminder(await this.openTasks());
    const due: OpenTask[] = [];
    for (const task of open) {
      const edits = await this.editedPaths(task.task_id);
      if (task.reminded_at === undefined || (edits.last_at !== null && edits.last_at > task.reminded_at)) due.push(task);
    }
    return { open, due };
  }

  /** `open`, the tasks the installed stop line reminded of without the helper marked reminded at the time it did. */
  private withHookReminder(open: OpenTask[]): OpenTask[] {
    const reminded = hookRemindedAt(this.cache, this.root);
    if (reminded === null) return open;
    return open.map((task) => {
      if (!reminded.taskIds.includes(task.task_id) || (task.reminded_at ?? 0) >= reminded.at) return task;
      const marked = { ...task, reminded_at: reminded.at };
      writeAtomic(this.taskFile("open", task.task_id), marked);
      return marked;
    });
  }

  /**
   * Repository-relative form of a path an agent tool reported (absolute, or relative to
   * cwd); null outside the repository. The root is a real path, so a path given through a
   * symbolic link (macOS's /tmp, a linked checkout) is resolved before it is compared.
   */
  async relativePath(path: string, cwd: string): Promise<string | null> {
    const absolute = isAbsolute(path) ? path : resolve(cwd, path);
    const lexical = this.inside(absolute);
    if (lexical !== null) return lexical;
    const real = await realpath(absolute).catch(() =>
      realpath(dirname(absolute)).then(
        (dir) => join(dir, basename(absolute)),
        () => null,
      ),
    );
    return real === null ? null : this.inside(real);
  }

  private inside(absolute: string): string | null {
    const inside = relative(this.root, absolute);
    if (inside === "" || inside.startsWith(`..${sep}`) || inside === ".." || isAbsolute(inside)) return null;
    return inside.split(sep).join("/");
  }

  /**
   * Appends the edited paths to every task of the repository that was open `at` the tool call (a
   * task started since is not given an earlier edit: ./spool.ts records edits after the fact);
   * returns how many tasks got them. No paths: the agent worked without its edit tools (a shell
   * command), which counts as activity for the stop reminder and proves nothing about any file.
   */
  async recordEdits(paths: readonly string[], tool: string, at: number): Promise<number> {
    const tasks = (await this.openTasks()).filter((task) => task.started_at <= at);
    if (tasks.length === 0) return 0;
    this.ensure("edits");
    const line = `${JSON.stringify({ at, tool, paths })}\n`;
    for (const task of tasks) this.append(this.taskFile("edits", task.task_id), line);
    await this.keepStopState();
    return tasks.length;
  }

  /**
   * Every path recorded for the task, in first-edit order, without repeats; the time of the last
   * entry (`last_at`, shell activity included) and of the last that named a path (`last_edit_at`).
   */
  async editedPaths(taskId: string): Promise<{ paths: string[]; truncated: boolean; last_at: number | null; last_edit_at: number | null }> {
    let text = "";
    try {
      text = readFileSync(this.taskFile("edits", taskId), "utf8");
    } catch {
      return { paths: [], truncated: false, last_at: null, last_edit_at: null };
    }
    const seen = new Set<string>();
    let lastAt: number | null = null;
    let lastEditAt: number | null = null;
    for (const line of text.split("\n")) {
      if (line === "") continue;
      try {
        const entry = JSON.parse(line) as { at?: unknown; paths?: unknown };
        if (typeof entry.at === "number") lastAt = Math.max(lastAt ?? 0, entry.at);
        if (!Array.isArray(entry.paths)) continue;
        if (typeof entry.at === "number" && entry.paths.length > 0) lastEditAt = Math.max(lastEditAt ?? 0, entry.at);
        for (const path of entry.paths) if (typeof path === "string") seen.add(path);
      } catch {
        // A line cut by a crash: the others still count.
      }
    }
    const paths = [...seen];
    return {
      paths: paths.slice(0, EDITED_PATHS_LIMIT),
      truncated: paths.length > EDITED_PATHS_LIMIT,
      last_at: lastAt,
      last_edit_at: lastEditAt,
    };
  }

  /** Notes the agent's session and its transcript; written only when they changed (every hook run calls it). */
  /** Notes the agent's session (the last one seen is the one whose transcript tells a task's usage). */
  async sessionSeen(session: AgentSession): Promise<void> {
    const known = await this.session();
    if (known?.agent === session.agent && known.session_id === session.session_id && known.transcript_path === session.transcript_path)
      return;
    // A spooled tool call read late is no newer than the session a hook saw since.
    if (known && known.seen_at > session.seen_at) return;
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    writeAtomic(join(this.folder, "session.json"), session);
    if (this.batch) this.batch.session = Promise.resolve(session);
  }

  /**
   * Notes the session a hook's payload names, as its agent names it (its transcript tells the usage of
   * the tasks worked in it). The helper's hooks include the shell-command hook (./commands.ts):
   * commands are observed.
   */
  async hookSession(payload: HookPayload, agent: AgentConfig, at: number): Promise<void> {
    const { id, transcript } = agent.payload.session(payload);
    if (transcript || id)
      await this.sessionSeen({ agent: agent.name, session_id: id, transcript_path: transcript, seen_at: at, commands: true });
  }

  session(): Promise<AgentSession | null> {
    if (this.batch) {
      this.batch.session ??= readJson<AgentSession>(join(this.folder, "session.json"));
      return this.batch.session;
    }
    return readJson<AgentSession>(join(this.folder, "session.json"));
  }

  /**
   * Closes a task: its edited paths and, when the agent's transcript is known, the real
   * usage between its start and now are kept in `done/`. Returns that record (null when the
   * task was not started through this helper on this machine).
   */
  async taskCompleted(taskId: string, completedAt: number, usage: UsageReader): Promise<CompletedTask | null> {
    if (this.batch) this.batch.open = undefined;
    const done = await this.summarize(taskId, completedAt, usage);
    if (!done) return this.completed(taskId);
    this.ensure("done");
    writeAtomic(this.taskFile("done", taskId), done);
    rmSync(this.taskFile("open", taskId), { force: true });
    rmSync(this.taskFile("edits", taskId), { force: true });
    await this.keepStopState();
    return done;
  }

  /**
   * What completing the task now would record — its edited paths and the transcript usage
   * since it started — without closing it (so a complete_task request can carry it).
   */
  async summarize(taskId: string, at: number, usage: UsageReader): Promise<CompletedTask | null> {
    const task = await readJson<OpenTask>(this.taskFile("open", taskId));
    if (!task) return null;
    const edits = await this.editedPaths(taskId);
    const session = await this.session();
    const read = session?.transcript_path ? await usage(session.agent, session.transcript_path, task.started_at, at) : null;
    return { ...task, completed_at: at, edited_paths: edits.paths, usage: read };
  }

  completed(taskId: string): Promise<CompletedTask | null> {
    return readJson<CompletedTask>(this.taskFile("done", taskId));
  }
}
