/**
 * @module durability
 * How long the agent's lines last (docs/insights.md, durability), observed with git on this
 * machine: the server has no git, so the helper looks. For each task completed here with
 * committed work, a ledger in the user cache (never in the repository) keeps its end commit, the
 * commits it made and the line ranges its agent wrote there (what its Agent Trace record says).
 * After a later completion in the same repository has been answered, off the agent's path, the
 * helper runs `git blame` of those files at HEAD and looks each line up in the ledger's records as
 * `waymark blame` does (@waymark/protocol/trace-blame): of the lines a task's agent wrote, how many
 * git still attributes to that task there. The next completion sends those observations in its
 * changes, signed with them by this device (they read "computed and signed" only then).
 *
 * Honest about what it cannot see: a task whose end commit is not in HEAD's history (rewritten,
 * another branch) is not observed, rather than counted as gone; a file that git's rename detection
 * does not follow counts as gone; a task is observed whole or not at all (the bounds below), and
 * only tasks completed through this machine's helper are known.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseTraceRecords, TraceIndex } from "@waymark/protocol/trace-blame";
import type { Changes, DurabilityObservation } from "@waymark/protocol/wire";
import { WIRE_LIMITS } from "@waymark/protocol/wire-constants";
import { blameLines, parseBlamePorcelain } from "./blame-command.js";
import { inertContext } from "./git/inert-config.js";
import { type GitContext, runGit } from "./git/process.js";
import { gitIsAncestor } from "./git/queries.js";
import { nameHash } from "./name-hash.js";

/** Tasks the ledger keeps per repository (the newest). */
export const LEDGER_TASKS = 50;
/** Files one look blames, and tasks it observes at most: it runs after an answer, bounded. */
export const PROBE_FILES = 40;
const PROBE_TASKS = 20;
/** A look stops starting new work after this long (what it finished is kept). */
const PROBE_MS = 30_000;

/** One task's committed lines as the ledger keeps them: the agent's ranges at the task's end commit. */
export interface LedgerTask {
  task_id: string;
  /** The task's end commit (HEAD when it completed), full. */
  end: string;
  /** Commits made during the task, as its review named them (abbreviated). */
  commits: string[];
  completed_at: number;
  /** The agent's lines in the task's committed files: what durability is a share of. */
  recorded: number;
  files: { path: string; ranges: [number, number][] }[];
  /** The HEAD the task was last observed at: it is not looked at again until HEAD moves. */
  observed_at?: string;
}

interface Ledger {
  version: 1;
  tasks: LedgerTask[];
  /** Observations not sent yet: the next completion carries them. */
  pending: DurabilityObservation[];
}

const empty = (): Ledger => ({ version: 1, tasks: [], pending: [] });

function ledgerFile(cacheRoot: string, repoRoot: string): string {
  return join(cacheRoot, "durability", `${nameHash(repoRoot).slice(0, 40)}.json`);
}

/** Read synchronously: a small file, read before every completion's request and again after its answer. */
async function load(cacheRoot: string, repoRoot: string): Promise<Ledger> {
  try {
    const ledger = JSON.parse(readFileSync(ledgerFile(cacheRoot, repoRoot), "utf8")) as Ledger;
    return ledger.version === 1 && Array.isArray(ledger.tasks) && Array.isArray(ledger.pending) ? ledger : empty();
  } catch {
    return empty();
  }
}

/**
 * Written whole, then moved into place: a reader never sees half a ledger (two helpers at once: the
 * last one wins). Synchronously, as it is read: through the thread pool it was five jobs.
 */
async function save(cacheRoot: string, repoRoot: string, ledger: Ledger): Promise<void> {
  const target = ledgerFile(cacheRoot, repoRoot);
  mkdirSync(join(cacheRoot, "durability"), { recursive: true, mode: 0o700 });
  const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
  writeFileSync(temp, JSON.stringify(ledger), { mode: 0o600 });
  renameSync(temp, target);
}

/**
 * What the ledger keeps of a completed task, from the changes the edge accepted: its end commit,
 * the commits it made, and the agent's ranges in files whose end content the end commit holds
 * (a file still dirty at the end has ranges of content no commit has). Null: nothing committed.
 */
export function ledgerEntry(taskId: string, changes: Changes, completedAt: number): LedgerTask | null {
  if (changes.type !== "git" || changes.head === null || !changes.review?.line_attribution || changes.review.commits.length === 0)
    return null;
  const end = changes.head;
  const dirty = new Set(changes.dirty.map((entry) => entry.path));
  const files: LedgerTask["files"] = [];
  let recorded = 0;
  for (const file of changes.review.line_attribution.files) {
    if (dirty.has(file.path)) continue;
    const ranges = file.ranges.filter((range) => range[2] === "agent").map(([start, end]): [number, number] => [start, end]);
    if (ranges.length === 0) continue;
    recorded += ranges.reduce((sum, [start, end]) => sum + end - start + 1, 0);
    files.push({ path: file.path, ranges });
  }
  if (recorded === 0) return null;
  return { task_id: taskId, end, commits: changes.review.commits.map((c) => c.sha), completed_at: completedAt, recorded, files };
}

/** The observations waiting to be sent from this repository (at most DURABILITY_OBSERVATIONS, oldest first). */
export async function pendingObservations(cacheRoot: string, repoRoot: string): Promise<DurabilityObservation[]> {
  return (await load(cacheRoot, repoRoot)).pending.slice(0, WIRE_LIMITS.DURABILITY_OBSERVATIONS);
}

/**
 * After a completion was answered: the observations it carried are sent (dropped from the
 * ledger) and the completed task joins the ledger. Quick: the process's end waits for it.
 */
export async function recordCompletion(
  cacheRoot: string,
  repoRoot: string,
  sent: readonly DurabilityObservation[],
  entry: LedgerTask | null,
): Promise<void> {
  if (sent.length === 0 && !entry) return;
  const ledger = await load(cacheRoot, repoRoot);
  const wasSent = new Set(sent.map((seen) => `${seen.task_id}\0${seen.commit}`));
  ledger.pending = ledger.pending.filter((seen) => !wasSent.has(`${seen.task_id}\0${seen.commit}`));
  if (entry)
    ledger.tasks = [...ledger.tasks.filter((task) => task.task_id !== entry.task_id), { ...entry, observed_at: entry.end }].slice(
      -LEDGER_TASKS,
    );
  await save(cacheRoot, repoRoot, ledger);
}

/**
 * Looks at the ledger's tasks at HEAD (observe) and keeps what it found for the next completion:
 * one observation per task waits, the latest. Slow (git blame): nothing waits for it, and the
 * ledger is read again before it is written, so a completion recorded meanwhile is kept.
 */
export async function lookAgain(cacheRoot: string, repoRoot: string, now = Date.now()): Promise<void> {
  const { tasks } = await load(cacheRoot, repoRoot);
  if (tasks.length === 0) return;
  const found = await observe(repoRoot, tasks, now);
  if (found.length === 0) return;
  const ledger = await load(cacheRoot, repoRoot);
  for (const seen of found) {
    const task = ledger.tasks.find((t) => t.task_id === seen.task_id);
    if (task) task.observed_at = seen.commit;
    ledger.pending = [...ledger.pending.filter((p) => p.task_id !== seen.task_id), seen];
  }
  ledger.pending = ledger.pending.slice(-WIRE_LIMITS.DURABILITY_OBSERVATIONS);
  await save(cacheRoot, repoRoot, ledger);
}

/** The ledger's tasks as Agent Trace records (only the fields `waymark blame`'s lookup reads). */
function traceIndex(tasks: readonly LedgerTask[]): TraceIndex {
  return new TraceIndex(
    parseTraceRecords(
      tasks.map((task) => ({
        vcs: { revision: task.end },
        files: task.files.map((file) => ({
          path: file.path,
          conversations: [{ contributor: { type: "ai" }, ranges: file.ranges.map(([start_line, end_line]) => ({ start_line, end_line })) }],
        })),
        metadata: { "dev.waymark": { task_id: task.task_id, commits: task.commits } },
      })),
    ),
  );
}

/** Which of `paths` exist at HEAD (one `git cat-file --batch-check`). */
async function existing(context: GitContext, paths: readonly string[]): Promise<Set<string>> {
  const nameable = paths.filter((path) => !path.includes("\n"));
  if (nameable.length === 0) return new Set();
  const out = await runGit(
    context,
    ["cat-file", "--batch-check=%(objecttype)"],
    Buffer.from(nameable.map((path) => `HEAD:${path}\n`).join("")),
  );
  const lines = out.toString("utf8").split("\n");
  return new Set(nameable.filter((_, i) => lines[i] === "blob"));
}

/** Where git's rename detection says the task's files went between its end commit and HEAD. */
async function renamedSince(context: GitContext, end: string): Promise<Map<string, string>> {
  const out = (await runGit(context, ["diff", "--name-status", "-M", "-z", "--no-ext-diff", "--no-textconv", end, "HEAD"])).toString(
    "utf8",
  );
  const fields = out.split("\0");
  const moved = new Map<string, string>();
  for (let i = 0; i < fields.length; ) {
    const status = fields[i] ?? "";
    if (status.startsWith("R")) {
      moved.set(fields[i + 1] ?? "", fields[i + 2] ?? "");
      i += 3;
    } else i += status.startsWith("C") ? 3 : 2;
  }
  return moved;
}

/**
 * The ledger's tasks that HEAD has moved past since they were last observed, newest first: of
 * each one's agent lines, how many `git blame` at HEAD still attributes to it. Bounded by
 * PROBE_TASKS, PROBE_FILES and PROBE_MS; a task is observed with all its files or not at all.
 */
export async function observe(repoRoot: string, tasks: readonly LedgerTask[], now = Date.now()): Promise<DurabilityObservation[]> {
  const started = Date.now();
  const context = { ...(await inertContext(repoRoot)), cwd: repoRoot };
  const head = (await runGit(context, ["rev-parse", "HEAD"])).toString("utf8").trim();
  const candidates = tasks
    .filter((task) => task.observed_at !== head)
    .reverse()
    .slice(0, PROBE_TASKS);
  const reachable: LedgerTask[] = [];
  for (const task of candidates) if (await gitIsAncestor(context, task.end, head)) reachable.push(task);
  if (reachable.length === 0) return [];
  // Every task of the ledger whose end commit HEAD holds: a later task that rewrote a line takes it from the earlier one.
  const known: LedgerTask[] = [];
  for (const task of tasks) if (reachable.includes(task) || (await gitIsAncestor(context, task.end, head))) known.push(task);
  const index = traceIndex(known);
  const present = new Map<string, number>();
  const blamed = new Set<string>();
  const observed: LedgerTask[] = [];
  for (const task of reachable) {
    if (Date.now() - started > PROBE_MS) break;
    const here = await existing(
      context,
      task.files.map((file) => file.path),
    );
    const moved = task.files.some((file) => !here.has(file.path)) ? await renamedSince(context, task.end) : new Map<string, string>();
    const paths = task.files
      .map((file) => (here.has(file.path) ? file.path : moved.get(file.path)))
      .filter((path): path is string => !!path);
    const toBlame = paths.filter((path) => !blamed.has(path));
    if (blamed.size + toBlame.length > PROBE_FILES) continue;
    for (const path of toBlame) {
      blamed.add(path);
      const lines = parseBlamePorcelain(
        (await runGit(context, ["blame", "--porcelain", "--no-textconv", "HEAD", "--", path])).toString("utf8"),
      );
      for (const author of await blameLines(context, lines, index)) {
        if (author.who === "agent" && author.task_id) present.set(author.task_id, (present.get(author.task_id) ?? 0) + 1);
      }
    }
    observed.push(task);
  }
  return observed.map((task) => ({
    task_id: task.task_id,
    commit: head,
    at: now,
    recorded: task.recorded,
    present: Math.min(task.recorded, present.get(task.task_id) ?? 0),
  }));
}
