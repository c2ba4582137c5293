/**
 * @module verify-repo
 * `waymark verify --repo <dir>`: the committed part of each task's record checked against the
 * repository itself. For a task that recorded its start and end commits, git's own diff between
 * them (files, exact-content renames, line counts as the helper counts them) and its log (the
 * commits made) are compared with the record. A commit missing from the clone (rewritten or
 * unfetched history) is reported as such, never as a mismatch; changes left uncommitted are out
 * of git's reach and counted as such.
 *
 * A file that already had uncommitted changes when the task started began from a state no commit
 * holds: its change may rightly differ from git's between the commits (another status, other line
 * counts, or a change the record rightly leaves out). The record counts those files
 * (repository.dirty_at_start), not their names, so such a difference is a contradiction only for a
 * task that started clean; otherwise it is listed as undecided. What git decides whatever the
 * start state, whether a committed file exists at the end commit and the commits made, always is.
 *
 * git runs as the helper runs it (./git/, ./review-measures.ts): no command the repository's config
 * defines, nothing written to the repository; line counts in the helper's scratch repository.
 */
import { changeStatus, type PathChange } from "@waymark/protocol/attribution";
import type { Json, JsonObject } from "@waymark/protocol/export-rebuild";
import { summarizeChanges } from "@waymark/protocol/files-changed";
import { inertContext } from "./git/inert-config.js";
import type { GitContext } from "./git/process.js";
import { gitDiffCommits, gitHasCommit, gitToplevel } from "./git/queries.js";
import { commitsSince, countLines } from "./review-measures.js";

export interface TaskAgainstGit {
  id: string;
  name: string;
  /** agrees: nothing git shows contradicts the record; differs: see `differences`. */
  verdict: "agrees" | "differs" | "missing_commit" | "not_checked";
  /** Why not checked, or which commit is missing. */
  reason?: string;
  /** What git contradicts. */
  differences: string[];
  /** Differences a start state that no commit holds could explain (the task did not start clean). */
  undecided: string[];
  /** Why they cannot be decided (set when `undecided` is not empty). */
  undecidedWhy?: string;
  /** What git confirmed, for the report: committed files, renames, line counts, commits. */
  confirmed?: { files: number; renames: number; lines: number; commits: number };
  /** Files of the record left uncommitted at the end: git cannot speak for them. */
  uncommitted: number;
}

export interface RepoCheck {
  root: string;
  tasks: TaskAgainstGit[];
}

const isObject = (value: Json | undefined): value is JsonObject => value !== null && typeof value === "object" && !Array.isArray(value);
const strings = (value: Json | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
const short = (commit: string) => commit.slice(0, 12);

/** Checks every task of a parsed export against the repository at `dir`. Throws when `dir` is not a git repository. */
export async function checkAgainstRepository(tasks: readonly Json[], dir: string): Promise<RepoCheck> {
  const context = await inertContext(dir);
  const top = await gitToplevel(context);
  if (!top) throw new Error(`--repo ${dir}: not a git repository`);
  const checked: TaskAgainstGit[] = [];
  for (const task of tasks) if (isObject(task) && typeof task.id === "string") checked.push(await checkTask(context, top.root, task));
  return { root: top.root, tasks: checked };
}

async function checkTask(context: GitContext, root: string, task: JsonObject): Promise<TaskAgainstGit> {
  const files = isObject(task.files_changed) ? task.files_changed : null;
  const uncommitted = new Set(strings(files?.uncommitted));
  const result: TaskAgainstGit = {
    id: String(task.id),
    name: typeof task.name === "string" ? task.name : "",
    verdict: "not_checked",
    differences: [],
    undecided: [],
    uncommitted: uncommitted.size,
  };
  const repository = isObject(task.repository) ? task.repository : null;
  const start = typeof repository?.start_commit === "string" ? repository.start_commit : null;
  const end = typeof repository?.end_commit === "string" ? repository.end_commit : null;
  if (task.status === "in_progress") return { ...result, reason: "still open" };
  if (!files || !repository || end === null)
    return { ...result, reason: "no end commit recorded (not a git task, or completed without the helper)" };
  for (const commit of [start, end]) {
    if (commit !== null && !(await gitHasCommit(context, commit))) {
      return {
        ...result,
        verdict: "missing_commit",
        reason: `commit ${short(commit)} is not in this repository (history rewritten, or not fetched)`,
      };
    }
  }
  const changes: PathChange[] = [];
  for (const transition of await gitDiffCommits(context, start, end)) {
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
  const dirty = repository.dirty_at_start;
  // A difference a start state outside the commits could explain contradicts the record only when the task started clean.
  const explainable = dirty === 0 ? result.differences : result.undecided;
  if (dirty !== 0 && dirty !== undefined) {
    result.undecidedWhy = `${dirty} file(s) had uncommitted changes when the task started, and the export does not say which`;
  } else if (dirty !== 0) result.undecidedWhy = "the record does not say whether the task started with uncommitted changes";
  const range = `${start === null ? "the empty tree" : short(start)} and ${short(end)}`;
  let agreeing = 0;
  for (const change of changes) {
    const status = recorded.get(change.path);
    if (status === undefined) {
      if (overlaps.has(change.path) || cut) continue;
      explainable.push(`${change.path}: git shows it ${STATUS_WORD[change.status]} between ${range}, the record does not list it`);
    } else if (uncommitted.has(change.path)) {
      // Changed again after its last commit: the record's end state is the working tree's, not a commit's.
    } else if ((status !== "D") !== (change.after !== null)) {
      result.differences.push(
        `${change.path}: the record says it was ${STATUS_WORD[status]} and committed, but the end commit ${change.after === null ? "does not have it" : "still has it"}`,
      );
    } else if (status !== change.status) {
      explainable.push(`${change.path}: the record says ${STATUS_WORD[status]}, git says ${STATUS_WORD[change.status]} between ${range}`);
    } else agreeing++;
  }
  for (const [path, status] of recorded) {
    if (!uncommitted.has(path) && !gitStatus.has(path)) {
      explainable.push(`${path}: the record lists it as committed (${STATUS_WORD[status]}), git shows no change to it between ${range}`);
    }
  }
  const renames = compareRenames(files, git.renamed, uncommitted, explainable);
  const lines = await compareLines(context, root, files, changes, git.renamed, uncommitted, explainable);
  const commits = await compareCommits(context, files, start, end, result.differences);
  result.verdict = result.differences.length === 0 ? "agrees" : "differs";
  result.confirmed = { files: agreeing, renames, lines, commits };
  return result;
}

const STATUS_WORD: Record<string, string> = { A: "added", M: "modified", D: "deleted" };

/** Exact-content renames: git's pairing of its own diff against the record's, where both sides were committed. */
function compareRenames(
  files: JsonObject,
  gitRenames: readonly { from: string; to: string }[],
  uncommitted: ReadonlySet<string>,
  out: string[],
) {
  const pair = (from: string, to: string) => `${from} → ${to}`;
  const recorded = new Set<string>();
  for (const rename of Array.isArray(files.renamed) ? files.renamed : []) {
    if (!isObject(rename) || typeof rename.from !== "string" || typeof rename.to !== "string") continue;
    if (uncommitted.has(rename.from) || uncommitted.has(rename.to)) continue;
    recorded.add(pair(rename.from, rename.to));
  }
  const found = new Set(gitRenames.filter((r) => !uncommitted.has(r.from) && !uncommitted.has(r.to)).map((r) => pair(r.from, r.to)));
  for (const rename of recorded) if (!found.has(rename)) out.push(`renamed ${rename}: in the record, not in git's diff`);
  for (const rename of found) if (!recorded.has(rename)) out.push(`renamed ${rename}: in git's diff, not in the record`);
  return [...recorded].filter((rename) => found.has(rename)).length;
}

/** Lines added and removed per committed file, counted from the two commits as the helper counts them. */
async function compareLines(
  context: GitContext,
  root: string,
  files: JsonObject,
  changes: readonly PathChange[],
  gitRenames: readonly { from: string; to: string }[],
  uncommitted: ReadonlySet<string>,
  out: string[],
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
    else {
      out.push(`${change.path}: the record counts ${said(mine)} lines, git counts ${gitSays} between the commits`);
    }
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
