/**
 * @module verify-repo
 * `waymark verify --repo <dir> [--ref <rev>]`: each task's record checked against the branch being
 * reviewed (HEAD, or the ref given), deciding every task or failing.
 *
 * A task whose commits are on the branch: git's own diff between its recorded start and end
 * commits (files, exact-content renames, line counts as the helper counts them) and its log (the
 * commits made) are compared with the record. A file that had uncommitted changes when the task
 * started began from a state no commit holds, so its change may rightly differ from git's: the
 * record names those files (repository.dirty_paths_at_start), and a difference on one of them is
 * explained; a difference on any other file contradicts the record. Where the record counts such
 * files without naming them (recorded before they were named, or too many), a difference is
 * undecided, and an undecided task fails the check: it is never "git agrees".
 *
 * A task whose commits are not on the branch (a squash or rebase merge, an amend, a rebase) is
 * checked against the commits that now hold its record there: the repository's notes (./notes/)
 * that a rewrite copied (notes.rewriteRef) or `waymark notes carry` wrote onto them, whose ranges'
 * content hashes must match the bytes git holds. Where `waymark notes carry` found that those
 * commits hold exactly the task's commits' changes (`carried.commits`: a rebase merge replays each,
 * a squash holds them all) and they follow each other on the branch, the task is checked against
 * them as against its own commits (files, renames, line counts; the replayed commits' subjects),
 * and agrees or differs as it would on its own branch. The report says how each was mapped. A commit
 * still in the repository but no longer on the branch, with nothing on the branch holding its
 * record, is "rewritten", and fails; a commit not in the repository at all is "missing", and fails.
 *
 * Without an export (`waymark verify --repo <dir>`), the tasks are those the notes on the branch
 * name, checked the same way from what the notes record (offline, with nothing but a clone). With
 * an export, each note of its workflow must also name a chain head the export's events end on.
 *
 * git runs as the helper runs it (./git/, ./review-measures.ts): no command the repository's
 * config defines, nothing written to the repository; line counts in the helper's scratch repository.
 */
import { changeStatus, type PathChange } from "@waymark/protocol/attribution";
import type { Json, JsonObject } from "@waymark/protocol/export-rebuild";
import { summarizeChanges } from "@waymark/protocol/files-changed";
import type { ReadTaskNote } from "@waymark/protocol/git-note";
import { inertContext } from "./git/inert-config.js";
import { type GitContext, runGit } from "./git/process.js";
import { gitCommitOf, gitDiffCommits, gitHasCommit, gitIsAncestor, gitToplevel } from "./git/queries.js";
import { NoteAttribution } from "./notes/attribution.js";
import { checkEntryContent } from "./notes/check.js";
import { commitsSince, countLines } from "./review-measures.js";

/**
 * agrees: on the branch, nothing git shows contradicts the record; rewritten: not on the branch,
 * but the commits that hold its record there agree with it (`mapping` says which); the rest fail
 * the check, but not_checked (nothing committed to check).
 */
export type RepoVerdict = "agrees" | "rewritten" | "differs" | "not_on_branch" | "missing_commit" | "undecided" | "not_checked";

/** Verdicts that fail `waymark verify --repo`. */
export const FAILING_VERDICTS: ReadonlySet<RepoVerdict> = new Set(["differs", "not_on_branch", "missing_commit", "undecided"]);

export interface TaskAgainstGit {
  id: string;
  name: string;
  verdict: RepoVerdict;
  /** Why not checked, why it fails, or which commit is missing. */
  reason?: string;
  /** What git contradicts. */
  differences: string[];
  /** Differences a start state no commit holds could explain, on files the record does not name (the task fails). */
  undecided: string[];
  /** Why they cannot be decided (set when `undecided` is not empty). */
  undecidedWhy?: string;
  /** Differences on files the record names as dirty at the task's start: explained by that start state. */
  explained: string[];
  /** What git confirmed, for the report: committed files, renames, line counts (absent: not compared, as from the notes alone), commits. */
  confirmed?: { files?: number; renames?: number; lines?: number; commits: number };
  /** How the task's commits map onto the branch (its commits, or the commits holding its record). */
  mapping: string[];
  /** What the repository's notes said of the task, and what of it was checked. */
  notes: string[];
  /** Files of the record left uncommitted at the end: git cannot speak for them. */
  uncommitted: number;
}

export interface RepoCheck {
  root: string;
  /** The branch reviewed, as given, and the commit it names. */
  ref: string;
  head: string;
  tasks: TaskAgainstGit[];
}

export interface RepoOptions {
  /** The branch being reviewed (default HEAD). */
  ref?: string;
  /** Only tasks with notes on commits after this one (a pull request's range): notes mode. */
  since?: string;
  /** Where a diff of a note's line hashes runs (the helper's cache). */
  scratchRoot: string;
  /** The export's workflow and events, to find its tasks' notes and check their checkpoints (export mode). */
  workflowId?: string;
  events?: readonly Json[];
}

/** A usage problem: not a repository, a ref that names nothing. */
export class RepoUsageError extends Error {}

const isObject = (value: Json | undefined): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);
const strings = (value: Json | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
const short = (commit: string) => commit.slice(0, 12);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The repository, the branch and its notes, with the reachability answers kept. */
class Branch {
  private readonly reachable = new Map<string, boolean>();

  constructor(
    readonly context: GitContext,
    readonly root: string,
    readonly ref: string,
    readonly head: string,
    readonly notes: NoteAttribution,
    readonly scratchRoot: string,
    readonly since: string | null,
  ) {}

  static async open(dir: string, options: RepoOptions): Promise<Branch> {
    const context = await inertContext(dir);
    const top = await gitToplevel(context);
    if (!top) throw new RepoUsageError(`--repo ${dir}: not a git repository`);
    const rooted = { ...context, cwd: top.root };
    const ref = options.ref ?? "HEAD";
    const resolve = async (revision: string, flag: string) => {
      const commit = await gitCommitOf(rooted, revision);
      if (commit === null) throw new RepoUsageError(`${flag} ${revision}: names no commit in ${top.root}`);
      return commit;
    };
    const head = await resolve(ref, "--ref");
    const since = options.since === undefined ? null : await resolve(options.since, "--since");
    const notes = await NoteAttribution.load(rooted, options.scratchRoot);
    return new Branch(rooted, top.root, ref, head, notes, options.scratchRoot, since);
  }

  /** Whether `commit` is on the branch (and after `since`, when one was given). */
  async has(commit: string, withinSince = false): Promise<boolean> {
    const known = this.reachable.get(`${commit}\0${withinSince}`);
    if (known !== undefined) return known;
    let on = await gitIsAncestor(this.context, commit, this.head);
    if (on && withinSince && this.since) on = !(await gitIsAncestor(this.context, commit, this.since));
    this.reachable.set(`${commit}\0${withinSince}`, on);
    return on;
  }

  /** The note entries of a task, each with the commit it is attached to. */
  entriesOf(workflowId: string | null, taskId: string): { attached: string; entry: ReadTaskNote }[] {
    const found: { attached: string; entry: ReadTaskNote }[] = [];
    for (const [attached, entries] of this.notes.entries()) {
      for (const entry of entries)
        if (entry.task_id === taskId && (workflowId === null || entry.workflow_id === workflowId)) found.push({ attached, entry });
    }
    return found;
  }
}

function emptyResult(id: string, name: string, uncommitted = 0): TaskAgainstGit {
  return { id, name, verdict: "not_checked", differences: [], undecided: [], explained: [], mapping: [], notes: [], uncommitted };
}

/** Checks every task of a parsed export against the branch at `dir` (see the module comment). */
export async function checkAgainstRepository(tasks: readonly Json[], dir: string, options: RepoOptions): Promise<RepoCheck> {
  const branch = await Branch.open(dir, options);
  const checked: TaskAgainstGit[] = [];
  for (const task of tasks)
    if (isObject(task) && typeof task.id === "string")
      checked.push(await checkTask(branch, task, options.workflowId ?? null, options.events));
  return { root: branch.root, ref: branch.ref, head: branch.head, tasks: checked };
}

/** Checks the tasks the notes on the branch name, from the notes alone (no export). */
export async function checkNotesAgainstRepository(dir: string, options: RepoOptions): Promise<RepoCheck> {
  const branch = await Branch.open(dir, options);
  const tasks = new Map<string, ReadTaskNote[]>();
  for (const [attached, entries] of branch.notes.entries()) {
    if (!(await branch.has(attached, true))) continue;
    for (const entry of entries)
      tasks.set(`${entry.workflow_id}\0${entry.task_id}`, [...(tasks.get(`${entry.workflow_id}\0${entry.task_id}`) ?? []), entry]);
  }
  const checked: TaskAgainstGit[] = [];
  for (const entries of tasks.values()) checked.push(await checkNotedTask(branch, entries));
  return { root: branch.root, ref: branch.ref, head: branch.head, tasks: checked };
}

/** The task's record as its notes give it: name, commits; its end commit checked as the export path checks one. */
async function checkNotedTask(branch: Branch, noted: readonly ReadTaskNote[]): Promise<TaskAgainstGit> {
  const first = noted.find((entry) => !entry.carried) ?? (noted[0] as ReadTaskNote);
  const name = first.trace.metadata?.["dev.waymark"]?.task_name ?? "";
  const result = emptyResult(first.task_id, name);
  const { start_commit: start, end_commit: end, commits } = first.task;
  result.notes.push(
    `recorded by ${first.origin ?? "an unnamed deployment"}, workflow ${first.workflow_id}${first.checkpoint ? `, event ${first.checkpoint.events} (chain head ${short(first.checkpoint.head)})` : ""}: the notes are not signed; \`waymark verify <export.json> --repo\` checks them against the deployment's record`,
  );
  if ((await gitHasCommit(branch.context, end)) && (await branch.has(end))) {
    const log = await commitsSince(branch.context, start, end);
    const gitCommits = await fullCommits(branch.context, start, end, log.commits.length + log.omitted);
    const recorded = new Set(commits);
    for (const commit of gitCommits)
      if (!recorded.has(commit))
        result.differences.push(`commit ${short(commit)}: in git's log between the task's commits, not in its record`);
    for (const commit of commits)
      if (!gitCommits.includes(commit))
        result.differences.push(
          `commit ${short(commit)}: in the record, not in git's log between ${start ? short(start) : "the root"} and ${short(end)}`,
        );
    result.mapping.push(`its ${plural(commits.length, "commit")} ${short(start ?? "")}..${short(end)} are on ${branch.ref}`);
    await checkNotesContent(branch, branch.entriesOf(first.workflow_id, first.task_id), result, false);
    result.verdict = result.differences.length > 0 ? "differs" : "agrees";
    result.confirmed = { commits: commits.length - result.differences.length };
    return result;
  }
  // Carried onto commits that hold exactly the task's commits, one after another on the branch: as on its own.
  const carried = await carriedRange(branch, first.workflow_id, first.task_id);
  if (carried) {
    result.mapping.push(...carriedMapping(carried));
    await checkNotesContent(branch, carried.holders, result, true);
    result.verdict = result.differences.length > 0 ? "differs" : "agrees";
    result.confirmed = { commits: commits.length };
    return result;
  }
  return mapThroughNotes(branch, first.workflow_id, first.task_id, end, result);
}

/** Full ids of git's commits from start (exclusive) to end. */
async function fullCommits(context: GitContext, start: string | null, end: string, max: number): Promise<string[]> {
  const range = start === null ? [end] : [end, `^${start}`];
  return (await runGit(context, ["rev-list", `--max-count=${Math.max(1, max)}`, ...range, "--"]))
    .toString("utf8")
    .split("\n")
    .filter(Boolean);
}

/**
 * Checks the content the task's note entries name (every entry, or only those on the branch) and
 * says so in `result.notes`; a range whose bytes are not git's is a difference.
 */
async function checkNotesContent(
  branch: Branch,
  entries: readonly { attached: string; entry: ReadTaskNote }[],
  result: TaskAgainstGit,
  onBranchOnly: boolean,
): Promise<{ unchanged: number; changed: number; ranges: number }> {
  const totals = { unchanged: 0, changed: 0, ranges: 0 };
  for (const { attached, entry } of entries) {
    if (onBranchOnly && !(await branch.has(attached))) continue;
    if (!(await gitHasCommit(branch.context, attached))) continue;
    const content = await checkEntryContent(branch.context, branch.scratchRoot, attached, entry);
    totals.unchanged += content.unchanged;
    totals.changed += content.changed;
    totals.ranges += content.ranges;
    for (const mismatch of content.mismatched) result.differences.push(`note on ${short(attached)}: ${mismatch}`);
  }
  if (totals.ranges > 0)
    result.notes.push(
      `the notes' line ranges: ${totals.unchanged} of ${totals.ranges} found with the bytes they name${totals.changed > 0 ? `, ${totals.changed} changed since by a rewrite` : ""}`,
    );
  return totals;
}

/**
 * A task whose recorded commits are not on the branch: the commits there holding its record
 * (copied by a rewrite, or carried by `waymark notes carry`), checked; else rewritten or missing.
 */
async function mapThroughNotes(
  branch: Branch,
  workflowId: string | null,
  taskId: string,
  end: string,
  result: TaskAgainstGit,
): Promise<TaskAgainstGit> {
  const holders: { attached: string; entry: ReadTaskNote }[] = [];
  for (const held of branch.entriesOf(workflowId, taskId))
    if (held.attached !== held.entry.commit || held.entry.carried) if (await branch.has(held.attached)) holders.push(held);
  const present = await gitHasCommit(branch.context, end);
  if (holders.length === 0) {
    result.verdict = present ? "not_on_branch" : "missing_commit";
    result.reason = present
      ? `rewritten: commit ${short(end)} is in this repository but not on ${branch.ref}, and no commit on ${branch.ref} holds the task's record (amend or rebase without notes.rewriteRef, an unmerged branch, or a squash or rebase merge whose 'waymark notes carry' did not run)`
      : `missing: commit ${short(end)} is not in this repository and no commit on ${branch.ref} holds the task's record (history rewritten, not fetched, or notes not fetched: git fetch origin refs/notes/waymark)`;
    return result;
  }
  for (const { attached, entry } of holders) {
    result.mapping.push(
      entry.carried
        ? `${short(entry.carried.from)} → ${short(attached)} (carried by waymark notes carry)`
        : `${short(entry.commit)} → ${short(attached)} (copied by git's rewrite)`,
    );
  }
  const totals = await checkNotesContent(branch, holders, result, true);
  result.verdict = result.differences.length > 0 ? "differs" : "rewritten";
  result.reason = `commit ${short(end)} is ${present ? "in this repository but " : ""}not on ${branch.ref}: ${totals.unchanged} of ${totals.ranges} recorded range(s) found unchanged on the commits holding its record there`;
  return result;
}

/** Each note of the task must name a chain head the export's events end on. */
function checkCheckpoints(
  entries: readonly { attached: string; entry: ReadTaskNote }[],
  events: readonly Json[],
  result: TaskAgainstGit,
): void {
  const seen = new Set<string>();
  for (const { attached, entry } of entries) {
    const checkpoint = entry.checkpoint;
    if (!checkpoint || seen.has(`${checkpoint.events}\0${checkpoint.head}`)) continue;
    seen.add(`${checkpoint.events}\0${checkpoint.head}`);
    const event = events[checkpoint.events - 1];
    const hash = isObject(event) && event.seq === checkpoint.events ? event.hash : undefined;
    if (hash === checkpoint.head)
      result.notes.push(`its notes name event ${checkpoint.events} and chain head ${short(checkpoint.head)}, as the export's events do`);
    else
      result.differences.push(
        `note on ${short(attached)}: names chain head ${short(checkpoint.head)} at event ${checkpoint.events}, the export's events ${typeof hash === "string" ? `end on ${short(hash)} there` : "do not reach it"}: the note is not this record's`,
      );
  }
}

/** The files a record names as dirty at the task's start: a set when it names them, null when it only counts them. */
function dirtyAtStart(repository: JsonObject, result: TaskAgainstGit): { clean: boolean; named: Set<string> | null } {
  const dirty = repository.dirty_at_start;
  const named = repository.dirty_paths_at_start;
  if (dirty === 0) return { clean: true, named: new Set() };
  if (Array.isArray(named)) return { clean: false, named: new Set(strings(named)) };
  result.undecidedWhy =
    typeof dirty === "number"
      ? `${dirty} file(s) had uncommitted changes when the task started, and the record does not say which`
      : "the record does not say whether the task started with uncommitted changes";
  return { clean: false, named: null };
}

async function checkTask(
  branch: Branch,
  task: JsonObject,
  workflowId: string | null,
  events: readonly Json[] | undefined,
): Promise<TaskAgainstGit> {
  const files = isObject(task.files_changed) ? task.files_changed : null;
  const uncommitted = new Set(strings(files?.uncommitted));
  const result = emptyResult(String(task.id), typeof task.name === "string" ? task.name : "", uncommitted.size);
  const repository = isObject(task.repository) ? task.repository : null;
  const start = typeof repository?.start_commit === "string" ? repository.start_commit : null;
  const end = typeof repository?.end_commit === "string" ? repository.end_commit : null;
  if (task.status === "in_progress") return { ...result, reason: "still open" };
  if (!files || !repository || end === null)
    return { ...result, reason: "no end commit recorded (not a git task, or completed without the helper): nothing committed to check" };
  const noted = branch.entriesOf(workflowId, result.id);
  if (events) checkCheckpoints(noted, events, result);
  for (const commit of [start, end]) {
    if (commit !== null && !(await branch.has(commit))) {
      const carried = await carriedRange(branch, workflowId, result.id);
      if (carried) {
        const replayed = emptyResult(result.id, result.name, result.uncommitted);
        replayed.notes.push(...result.notes);
        replayed.differences.push(...result.differences);
        await compareChanges(branch, task, files, repository, carried.start, carried.end, replayed, (out) =>
          compareCarriedCommits(branch.context, files, carried, out),
        );
        if (replayed.verdict === "agrees") {
          replayed.mapping.push(...carriedMapping(carried));
          await checkNotesContent(branch, carried.holders, replayed, true);
          if (replayed.differences.length > 0) replayed.verdict = "differs";
          return replayed;
        }
        result.notes.push(
          `the commits ${short(carried.start)}..${short(carried.end)} holding its record do not hold its changes as recorded (${plural(replayed.differences.length + replayed.undecided.length, "difference")}: a conflict resolved in the merge, or work of others in it): checked by its line ranges there instead`,
        );
      }
      const mapped = await mapThroughNotes(branch, workflowId, result.id, end, result);
      if (mapped.verdict === "rewritten" && result.differences.length > 0) mapped.verdict = "differs";
      return mapped;
    }
  }
  result.mapping.push(`its commits ${start ? short(start) : "(root)"}..${short(end)} are on ${branch.ref}`);
  if (noted.length > 0) await checkNotesContent(branch, noted, result, false);
  return compareChanges(branch, task, files, repository, start, end, result, (out) =>
    compareCommits(branch.context, files, start, end, out),
  );
}

/**
 * The record's changes against git's diff from `start` to `end`: files, renames, line counts, and
 * the commits as `commits` compares them; sets the verdict (agrees, differs, undecided).
 */
async function compareChanges(
  branch: Branch,
  task: JsonObject,
  files: JsonObject,
  repository: JsonObject,
  start: string | null,
  end: string,
  result: TaskAgainstGit,
  commits: (out: string[]) => Promise<number>,
): Promise<TaskAgainstGit> {
  const uncommitted = new Set(strings(files.uncommitted));
  const changes: PathChange[] = [];
  for (const transition of await gitDiffCommits(branch.context, start, end)) {
    const status = changeStatus(transition.before, transition.after);
    if (status) changes.push({ ...transition, status, committed: true });
  }
  const git = summarizeChanges(changes);
  const gitStatus = new Map(changes.map((change) => [change.path, change.status]));
  const recorded = new Map<string, string>();
  for (const [list, status] of [
    ["added", "A"],
    ["modified", "M"],
    ["deleted", "D"],
  ] as const)
    for (const path of strings(files[list])) recorded.set(path, status);
  const overlaps = new Map<string, string>();
  const verification = isObject(task.verification) ? task.verification : null;
  for (const overlap of Array.isArray(verification?.overlapping) ? verification.overlapping : []) {
    if (isObject(overlap) && typeof overlap.path === "string") overlaps.set(overlap.path, String(overlap.task_id));
  }
  const cut = isObject(files.truncated);
  const start_ = dirtyAtStart(repository, result);
  /** A difference a start state outside the commits could explain: decided by whether the record names the file as dirty at the start. */
  const explainable = (paths: readonly string[], text: string) => {
    if (start_.clean) result.differences.push(text);
    else if (start_.named === null) result.undecided.push(text);
    else if (paths.some((path) => start_.named?.has(path))) result.explained.push(text);
    else result.differences.push(text);
  };
  const range = `${start === null ? "the empty tree" : short(start)} and ${short(end)}`;
  let agreeing = 0;
  for (const change of changes) {
    const status = recorded.get(change.path);
    if (status === undefined) {
      if (overlaps.has(change.path) || cut) continue;
      explainable(
        [change.path],
        `${change.path}: git shows it ${STATUS_WORD[change.status]} between ${range}, the record does not list it`,
      );
    } else if (uncommitted.has(change.path)) {
      // Changed again after its last commit: the record's end state is the working tree's, not a commit's.
    } else if ((status !== "D") !== (change.after !== null)) {
      result.differences.push(
        `${change.path}: the record says it was ${STATUS_WORD[status]} and committed, but the end commit ${change.after === null ? "does not have it" : "still has it"}`,
      );
    } else if (status !== change.status) {
      explainable(
        [change.path],
        `${change.path}: the record says ${STATUS_WORD[status]}, git says ${STATUS_WORD[change.status]} between ${range}`,
      );
    } else agreeing++;
  }
  for (const [path, status] of recorded) {
    if (!uncommitted.has(path) && !gitStatus.has(path)) {
      explainable([path], `${path}: the record lists it as committed (${STATUS_WORD[status]}), git shows no change to it between ${range}`);
    }
  }
  const renames = compareRenames(files, git.renamed, uncommitted, explainable);
  const lines = await compareLines(branch.context, branch.root, files, changes, git.renamed, uncommitted, explainable);
  const confirmedCommits = await commits(result.differences);
  result.verdict = result.differences.length > 0 ? "differs" : result.undecided.length > 0 ? "undecided" : "agrees";
  result.confirmed = { files: agreeing, renames, lines, commits: confirmedCommits };
  return result;
}

/** The commits on the branch that hold exactly a task's commits' changes, as `waymark notes carry` found them. */
interface CarriedRange {
  /** The first holder's parent, and the last holder: the range that stands for the task's start..end. */
  start: string;
  end: string;
  /** Oldest first: each holder and the task's commits whose changes it holds. */
  pairs: { attached: string; holds: string[] }[];
  holders: { attached: string; entry: ReadTaskNote }[];
}

/**
 * Where the task's record was carried onto commits that hold exactly its commits' changes (their
 * entries' `carried.commits` together are the task's commits, no more, no fewer) and that follow
 * one another on the branch's first-parent line; null otherwise (a rewrite's copy, a squash of
 * others' work with it, a conflict resolved: those are checked by their line ranges alone).
 */
async function carriedRange(branch: Branch, workflowId: string | null, taskId: string): Promise<CarriedRange | null> {
  const holders: { attached: string; entry: ReadTaskNote }[] = [];
  for (const held of branch.entriesOf(workflowId, taskId)) if (held.entry.carried && (await branch.has(held.attached))) holders.push(held);
  const holds = new Map<string, string[]>();
  for (const { attached, entry } of holders) {
    const commits = entry.carried?.commits;
    if (!commits) return null;
    holds.set(attached, [...new Set([...(holds.get(attached) ?? []), ...commits])]);
  }
  const task = holders[0]?.entry.task;
  if (!task) return null;
  const covered = [...holds.values()].flat();
  const wanted = new Set(task.commits);
  if (covered.length !== wanted.size || !covered.every((commit) => wanted.has(commit))) return null;
  for (const candidate of holds.keys()) {
    const chain = (await runGit(branch.context, ["rev-list", "--first-parent", `--max-count=${holds.size}`, candidate, "--"]))
      .toString("utf8")
      .split("\n")
      .filter(Boolean);
    if (chain.length !== holds.size || !chain.every((commit) => holds.has(commit))) continue;
    const oldest = chain.at(-1) as string;
    const start = await gitCommitOf(branch.context, `${oldest}^`);
    if (start === null) return null;
    const pairs = chain.reverse().map((attached) => ({ attached, holds: holds.get(attached) as string[] }));
    return { start, end: candidate, pairs, holders };
  }
  return null;
}

/** How the carried range maps the task's commits, a line each holder. */
function carriedMapping(range: CarriedRange): string[] {
  return range.pairs.map(({ attached, holds }) => {
    const from =
      holds.length <= 3
        ? holds.map(short).join(", ")
        : `${short(holds[0] as string)} … ${short(holds.at(-1) as string)} (${holds.length} commits)`;
    return `${from} → ${short(attached)} (carried by waymark notes carry${holds.length > 1 ? ": one commit holding their changes" : ""})`;
  });
}

/**
 * The record's commits against the commits holding them: each replayed one (a holder of one commit)
 * under the same subject; those a holder squashed together counted as held. Returns how many agree.
 */
async function compareCarriedCommits(context: GitContext, files: JsonObject, range: CarriedRange, out: string[]): Promise<number> {
  if (!Array.isArray(files.commits)) return 0;
  const recorded = files.commits.filter(isObject);
  const log = await commitsSince(context, range.start, range.end);
  let agreeing = 0;
  for (const commit of recorded) {
    const sha = String(commit.sha);
    const pair = range.pairs.find((p) => p.holds.some((held) => held.startsWith(sha)));
    if (!pair) {
      out.push(`commit ${sha} ${show(commit.subject)}: in the record, not among the commits the merge's commits hold`);
      continue;
    }
    if (pair.holds.length > 1) {
      agreeing++;
      continue;
    }
    const replayed = log.commits.find((c) => pair.attached.startsWith(c.sha));
    if (replayed?.subject !== commit.subject)
      out.push(
        `commit ${sha}: the record's subject is ${show(commit.subject)}, ${short(pair.attached)} that replays it has ${show(replayed?.subject)}`,
      );
    else agreeing++;
  }
  return agreeing;
}

const STATUS_WORD: Record<string, string> = { A: "added", M: "modified", D: "deleted" };

type Explain = (paths: readonly string[], text: string) => void;

/** Exact-content renames: git's pairing of its own diff against the record's, where both sides were committed. */
function compareRenames(
  files: JsonObject,
  gitRenames: readonly { from: string; to: string }[],
  uncommitted: ReadonlySet<string>,
  explain: Explain,
) {
  const pair = (from: string, to: string) => `${from} → ${to}`;
  const recorded = new Map<string, [string, string]>();
  for (const rename of Array.isArray(files.renamed) ? files.renamed : []) {
    if (!isObject(rename) || typeof rename.from !== "string" || typeof rename.to !== "string") continue;
    if (uncommitted.has(rename.from) || uncommitted.has(rename.to)) continue;
    recorded.set(pair(rename.from, rename.to), [rename.from, rename.to]);
  }
  const found = new Map(
    gitRenames
      .filter((r) => !uncommitted.has(r.from) && !uncommitted.has(r.to))
      .map((r) => [pair(r.from, r.to), [r.from, r.to] as [string, string]]),
  );
  for (const [rename, paths] of recorded) if (!found.has(rename)) explain(paths, `renamed ${rename}: in the record, not in git's diff`);
  for (const [rename, paths] of found) if (!recorded.has(rename)) explain(paths, `renamed ${rename}: in git's diff, not in the record`);
  return [...recorded.keys()].filter((rename) => found.has(rename)).length;
}

/** Lines added and removed per committed file, counted from the two commits as the helper counts them. */
async function compareLines(
  context: GitContext,
  root: string,
  files: JsonObject,
  changes: readonly PathChange[],
  gitRenames: readonly { from: string; to: string }[],
  uncommitted: ReadonlySet<string>,
  explain: Explain,
): Promise<number> {
  if (!Array.isArray(files.lines)) return 0;
  const recorded = new Map<string, JsonObject>();
  for (const line of files.lines) if (isObject(line) && typeof line.path === "string") recorded.set(line.path, line);
  const counted = changes.filter((change) => recorded.has(change.path) && !uncommitted.has(change.path));
  // Both sides of a rename count 0/0, as the record counts them (docs/attribution.md, "Review data").
  const moved = new Set(gitRenames.flatMap((r) => [r.from, r.to]));
  const measured = new Map((await countLines(context, root, counted, undefined)).map((line) => [line.path, line]));
  let agreeing = 0;
  for (const change of counted) {
    const mine = recorded.get(change.path) as JsonObject;
    const theirs = moved.has(change.path) ? { path: change.path, added: 0, removed: 0 } : measured.get(change.path);
    if (!theirs) continue;
    const said = (line: JsonObject) => (line.binary === true ? "binary" : `+${String(line.added)} −${String(line.removed)}`);
    const gitSays = "binary" in theirs ? "binary" : `+${theirs.added} −${theirs.removed}`;
    if (said(mine) === gitSays) agreeing++;
    else explain([change.path], `${change.path}: the record counts ${said(mine)} lines, git counts ${gitSays} between the commits`);
  }
  return agreeing;
}

/** The commits made during the task: git's log from the start commit to the end commit against the record's list. */
async function compareCommits(context: GitContext, files: JsonObject, start: string | null, end: string, out: string[]): Promise<number> {
  if (!Array.isArray(files.commits)) return 0;
  const recorded = files.commits.filter(isObject);
  const log = await commitsSince(context, start, end);
  const sameSha = (left: string, right: string) => left.startsWith(right) || right.startsWith(left);
  let agreeing = 0;
  for (const commit of recorded) {
    const sha = String(commit.sha);
    const found = log.commits.find((c) => sameSha(c.sha, sha));
    if (!found) out.push(`commit ${sha} ${show(commit.subject)}: in the record, not among git's commits between the two`);
    else if (found.subject !== commit.subject)
      out.push(`commit ${sha}: the record's subject is ${show(commit.subject)}, git's ${show(found.subject)}`);
    else agreeing++;
  }
  for (const commit of log.commits) {
    if (!recorded.some((c) => sameSha(String(c.sha), commit.sha)))
      out.push(`commit ${commit.sha} ${show(commit.subject)}: in git's log, not in the record`);
  }
  const omitted = typeof files.commits_omitted === "number" ? files.commits_omitted : 0;
  if (omitted !== log.omitted) out.push(`commits: the record leaves out ${omitted} older commit(s), git's log ${log.omitted}`);
  return agreeing;
}

const show = (value: Json | undefined) => JSON.stringify(value ?? null);
