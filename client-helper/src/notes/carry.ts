/**
 * @module notes/carry
 * `waymark notes carry --from <branch head> --onto <merge result>`: the one step, run in CI after a
 * merge, that carries the branch's records onto the commits the merge made. A platform's squash
 * merge and rebase merge (GitHub, GitLab) make new commits on the server, where no hook runs and
 * git copies no note; without this step `waymark blame` on the target branch finds no record for
 * them.
 *
 * For each commit the merge made, each line it introduced (against its first parent) is carried
 * back to the branch head through git's diff between the two; the line there is attributed as
 * `waymark blame` attributes it (the branch's notes, copies by rewrite included), and a line of a
 * task's change gets that task's writer on the new commit. A line the diff cannot carry back (a
 * conflict resolved in the merge, a line the branch changed later) gets nothing: it stays nobody's.
 * The new commit's entries are ordinary note entries (@waymark/protocol/git-note) at that commit,
 * with `carried` naming where they came from, and the task's own checkable fields (workflow,
 * checkpoint, statement) copied from its note on the branch.
 *
 * Which commits the merge made: `--since <target before the merge>` names them exactly (the range
 * since..onto); without it, a rebase merge is recognised by its commits' subjects (the branch's,
 * in order, on top of onto), anything else is taken as one commit (a squash, a cherry-pick). A
 * merge that kept the branch's history (a merge commit, a fast-forward) needs nothing: its notes
 * are on its commits already. Each new commit's entries also say which of the branch's commits it
 * holds the changes of, where git's patch ids tell (`carried.commits`): the one whose change it
 * replays, or all of them when its change is the branch's whole change (a squash); `waymark verify
 * --repo` then checks a task whose commits those are against the new commits as against its own.
 */
import { traceRecordId } from "@waymark/protocol/agent-trace";
import { LINE_HASHES_MAX_LINES, lineHashes, lineRuns, type PathRanges, type ReadTaskNote, type TaskNote } from "@waymark/protocol/git-note";
import { carryLine, type Hunk, type LineAuthorship, TraceIndex } from "@waymark/protocol/trace-blame";
import { blameFile, type FileBlame } from "../blame-command.js";
import { pairHunks, readObjects } from "../git/blobs.js";
import { inertContext } from "../git/inert-config.js";
import { type GitContext, runGit } from "../git/process.js";
import { gitCommitOf, gitIsAncestor, gitPatchId } from "../git/queries.js";
import { lineCount } from "../lines/line-diff.js";
import { NoteAttribution } from "./attribution.js";
import { writeNotes } from "./store.js";

export interface CarryRequest {
  /** The repository (any directory in it). */
  dir: string;
  /** The branch head whose records are carried (the pull request's last commit). */
  from: string;
  /** The merge's result on the target branch (the squash commit, the last rebased commit). */
  onto: string;
  /** The target branch before the merge: the merge made exactly the commits since..onto. */
  since?: string;
  /** Where a diff of a note's line hashes runs (the helper's cache). */
  scratchRoot: string;
  /** Compute and report, write nothing. */
  dryRun?: boolean;
}

/** One commit the merge made, and what was carried onto it. */
export interface CarriedCommit {
  commit: string;
  /** The branch's commits whose changes it holds (oldest first), where git's patch ids tell. */
  holds?: string[];
  tasks: string[];
  lines: { agent: number; others: number; not_observed: number };
}

export interface CarryReport {
  from: string;
  onto: string;
  /** How the commits the merge made were found. */
  mode: "history_kept" | "since" | "rebase" | "single";
  commits: CarriedCommit[];
  /** The notes commit written (null: nothing to write, or a dry run). */
  written: string | null;
}

/** A revision that names no commit here: the message names the flag. */
export class CarryUsageError extends Error {}

async function commitOf(context: GitContext, revision: string, flag: string): Promise<string> {
  const commit = await gitCommitOf(context, revision);
  if (commit === null) throw new CarryUsageError(`--${flag} ${revision}: names no commit in this repository (fetch it first)`);
  return commit;
}

async function revList(context: GitContext, args: readonly string[]): Promise<string[]> {
  return (await runGit(context, ["rev-list", ...args, "--"])).toString("utf8").split("\n").filter(Boolean);
}

async function subjects(context: GitContext, commits: readonly string[]): Promise<string[]> {
  if (commits.length === 0) return [];
  const out = await runGit(context, ["log", "--no-walk=unsorted", "-z", "--format=%s", ...commits, "--"]);
  return out.toString("utf8").split("\0").slice(0, commits.length);
}

/** The commits the merge made, oldest first, and how they were found. */
async function mergeCommits(
  context: GitContext,
  from: string,
  onto: string,
  since: string | undefined,
): Promise<{ mode: CarryReport["mode"]; commits: string[] }> {
  if (since !== undefined) return { mode: "since", commits: await revList(context, ["--reverse", onto, `^${since}`]) };
  const base = (await runGit(context, ["merge-base", from, onto]).catch(() => Buffer.from(""))).toString("utf8").trim();
  const branch = base ? await revList(context, ["--reverse", "--no-merges", from, `^${base}`]) : [];
  if (branch.length > 1) {
    const landed = (await revList(context, ["--first-parent", `--max-count=${branch.length}`, onto])).reverse();
    if (landed.length === branch.length && (await subjects(context, landed)).join("\0") === (await subjects(context, branch)).join("\0"))
      return { mode: "rebase", commits: landed };
  }
  return { mode: "single", commits: [onto] };
}

/** Branches longer than this are not matched commit by commit (a patch id is two git processes per commit). */
const MATCHED_COMMITS_MAX = 250;

/**
 * Per commit the merge made, the branch's commits whose changes it holds, oldest first, where git's
 * patch ids tell: the branch commit whose change it makes again (a rebase merge, a cherry-pick), or
 * every commit of the branch since the merge base when it makes the branch's whole change (a squash).
 * A commit that matches neither (a conflict resolved, a change of its own) claims nothing.
 */
async function heldCommits(context: GitContext, from: string, onto: string, made: readonly string[]): Promise<Map<string, string[]>> {
  const held = new Map<string, string[]>();
  const base = (await runGit(context, ["merge-base", from, onto]).catch(() => Buffer.from(""))).toString("utf8").trim();
  if (!base) return held;
  const branch = await revList(context, ["--reverse", `--max-count=${MATCHED_COMMITS_MAX + 1}`, from, `^${base}`]);
  if (branch.length === 0 || branch.length > MATCHED_COMMITS_MAX) return held;
  const whole = await gitPatchId(context, base, from);
  const own = new Map<string, string | null>();
  const ownId = async (commit: string) => {
    if (!own.has(commit)) own.set(commit, await gitPatchId(context, `${commit}^`, commit).catch(() => null));
    return own.get(commit) ?? null;
  };
  const used = new Set<string>();
  for (const commit of made) {
    const id = await gitPatchId(context, `${commit}^`, commit).catch(() => null);
    if (id === null) continue;
    if (id === whole) {
      held.set(commit, branch);
      continue;
    }
    for (const candidate of branch) {
      if (used.has(candidate) || (await ownId(candidate)) !== id) continue;
      used.add(candidate);
      held.set(commit, [candidate]);
      break;
    }
  }
  return held;
}

/** The files a commit changed against its first parent that it still has. */
async function changedFiles(context: GitContext, commit: string): Promise<string[]> {
  const out = await runGit(context, [
    "diff-tree",
    "-r",
    "-z",
    "--root",
    "--no-renames",
    "--no-ext-diff",
    "--no-commit-id",
    "--name-status",
    `${commit}`,
  ]);
  const fields = out.toString("utf8").split("\0");
  const paths: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] !== "D") paths.push(fields[i + 1] as string);
  return paths;
}

const taskKey = (who: LineAuthorship) => `${who.workflow_id}\0${who.task_id}`;

/** The task's own note on the branch, whose checkable fields a carried entry repeats: its end commit's entry if there is one. */
function sourceEntry(notes: NoteAttribution, workflowId: string, taskId: string): ReadTaskNote | undefined {
  let any: ReadTaskNote | undefined;
  for (const [, entries] of notes.entries()) {
    for (const entry of entries) {
      if (entry.workflow_id !== workflowId || entry.task_id !== taskId || entry.carried) continue;
      if (entry.commit === entry.task.end_commit) return entry;
      any ??= entry;
    }
  }
  return any;
}

type Writer = LineAuthorship & { who: "agent" | "others" | "not_observed" };

/** The entry of one task on a commit the merge made: its lines there by writer. */
function carriedEntry(
  source: ReadTaskNote,
  commit: string,
  from: string,
  files: Map<string, { writers: (Writer | null)[]; content: Buffer }>,
  at: string,
  holds: string[] | undefined,
): { entry: TaskNote; lines: CarriedCommit["lines"] } {
  const lines = { agent: 0, others: 0, not_observed: 0 };
  const recordFiles: unknown[] = [];
  const notObserved: PathRanges[] = [];
  const hashes: { path: string; hashes: string }[] = [];
  for (const [path, { writers, content }] of files) {
    const kinds = writers.map((w) => w?.who ?? null);
    for (const kind of kinds) if (kind) lines[kind]++;
    const runs = lineRuns(kinds, content);
    const agentSample = writers.find((w) => w?.who === "agent");
    const ranges = runs
      .filter((run) => run.who !== "not_observed")
      .map((run) => ({
        start_line: run.start,
        end_line: run.end,
        content_hash: `sha256:${run.hash}`,
        ...(run.who === "others" ? { contributor: { type: "unknown" } } : {}),
      }));
    if (ranges.length > 0) {
      const url = agentSample?.url ?? writers.find((w) => w?.url)?.url;
      recordFiles.push({
        path,
        conversations: [
          {
            ...(url ? { url } : {}),
            contributor: { type: "ai", ...(agentSample?.model_id ? { model_id: agentSample.model_id } : {}) },
            ranges,
            ...(url ? { related: [{ type: "waymark-task", url }] } : {}),
          },
        ],
      });
    }
    const unobserved = runs
      .filter((run) => run.who === "not_observed")
      .map((run) => ({ start_line: run.start, end_line: run.end, content_hash: `sha256:${run.hash}` }));
    if (unobserved.length > 0) notObserved.push({ path, ranges: unobserved });
    if (lineCount(content) <= LINE_HASHES_MAX_LINES) hashes.push({ path, hashes: lineHashes(content) });
  }
  const original = source.record as { timestamp?: unknown; tool?: unknown; metadata?: Record<string, unknown> };
  const meta = (original.metadata?.["dev.waymark"] ?? {}) as Record<string, unknown>;
  const record = {
    version: "0.1.0",
    id: traceRecordId(source.workflow_id, source.task_id, commit),
    timestamp: original.timestamp,
    vcs: { type: "git", revision: commit },
    ...(original.tool ? { tool: original.tool } : {}),
    files: recordFiles,
    metadata: { "dev.waymark": { ...meta, carried_from: from } },
  };
  const { trace: _trace, ...fields } = source;
  const entry: TaskNote = {
    ...fields,
    commit,
    record,
    not_observed: notObserved,
    line_hashes: hashes,
    carried: { from, at, ...(holds ? { commits: holds } : {}) },
  };
  return { entry, lines };
}

/** Carries the records of `from`'s lines onto the commits the merge made (module comment). */
export async function carryNotes(request: CarryRequest): Promise<CarryReport> {
  const context = await inertContext(request.dir);
  const root = (await runGit(context, ["rev-parse", "--show-toplevel"])).toString("utf8").trim();
  const rooted: GitContext = { ...context, cwd: root };
  const from = await commitOf(rooted, request.from, "from");
  const onto = await commitOf(rooted, request.onto, "onto");
  const since = request.since === undefined ? undefined : await commitOf(rooted, request.since, "since");
  if (await gitIsAncestor(rooted, from, onto)) return { from, onto, mode: "history_kept", commits: [], written: null };
  const { mode, commits } = await mergeCommits(rooted, from, onto, since);
  const notes = await NoteAttribution.load(rooted, request.scratchRoot);
  const none = new TraceIndex([]);
  const atFrom = new Map<string, FileBlame | null>();
  const blameAtFrom = async (path: string) => {
    if (!atFrom.has(path)) atFrom.set(path, await blameFile(rooted, from, path, none, notes).catch(() => null));
    return atFrom.get(path) ?? null;
  };
  const now = new Date().toISOString();
  const held = await heldCommits(rooted, from, onto, commits);
  const entries: TaskNote[] = [];
  const carried: CarriedCommit[] = [];
  for (const commit of commits) {
    const parent = `${commit}^`;
    // Per task on this commit: per path, each line's writer (null: not the task's).
    const byTask = new Map<string, Map<string, { writers: (Writer | null)[]; content: Buffer }>>();
    const sample = new Map<string, LineAuthorship>();
    const paths = await changedFiles(rooted, commit);
    const contents = await readObjects(
      rooted,
      paths.map((path) => `${commit}:${path}`),
    );
    for (const [i, path] of paths.entries()) {
      const content = contents[i];
      if (!content) continue;
      const blamed = await blameAtFrom(path);
      if (!blamed) continue;
      const [own, back] = await Promise.all([pairHunks(rooted, path, [[parent, commit]]), pairHunks(rooted, path, [[commit, from]])]);
      const added: Hunk[] | undefined = own.get(`${parent}\0${commit}`);
      const toFrom = back.get(`${commit}\0${from}`);
      if (!toFrom) continue;
      const count = lineCount(content);
      for (let line = 1; line <= count; line++) {
        if (added && !added.some(([, , start, n]) => line >= start && line < start + n)) continue;
        const there = carryLine(toFrom, line);
        const who = there === null ? undefined : blamed.authors[there - 1];
        if (!who || who.who === "not_recorded" || !who.task_id || !who.workflow_id) continue;
        const key = taskKey(who);
        sample.set(key, who);
        const files = byTask.get(key) ?? new Map<string, { writers: (Writer | null)[]; content: Buffer }>();
        const file = files.get(path) ?? { writers: new Array<Writer | null>(count).fill(null), content };
        file.writers[line - 1] = who as Writer;
        files.set(path, file);
        byTask.set(key, files);
      }
    }
    const holds = held.get(commit);
    const done: CarriedCommit = { commit, ...(holds ? { holds } : {}), tasks: [], lines: { agent: 0, others: 0, not_observed: 0 } };
    for (const [key, files] of byTask) {
      const who = sample.get(key) as LineAuthorship;
      const source = sourceEntry(notes, who.workflow_id as string, who.task_id as string);
      if (!source) continue;
      const { entry, lines } = carriedEntry(source, commit, from, files, now, holds);
      entries.push(entry);
      done.tasks.push(`${source.workflow_id} ${source.task_id}`);
      for (const kind of ["agent", "others", "not_observed"] as const) done.lines[kind] += lines[kind];
    }
    if (done.tasks.length > 0) carried.push(done);
  }
  const written =
    entries.length === 0 || request.dryRun ? null : await writeNotes(rooted, entries, `waymark: carried from ${from} onto ${onto}`);
  return { from, onto, mode, commits: carried, written };
}

const short = (commit: string) => commit.slice(0, 12);

/** The report `waymark notes carry` prints. */
export function carryReport(report: CarryReport): string {
  if (report.mode === "history_kept")
    return `${short(report.from)} is on ${short(report.onto)}: the merge kept the branch's commits and their notes, nothing to carry.\n`;
  const how = {
    since: "the commits since --since",
    rebase: "a rebase merge: the branch's commits, by their subjects, on top of --onto",
    single: "one commit: a squash merge or a cherry-pick",
  }[report.mode];
  const lines = [`${short(report.from)} → ${short(report.onto)} (${how}):`];
  if (report.commits.length === 0) lines.push("  no line of a recorded task to carry");
  for (const commit of report.commits) {
    const l = commit.lines;
    const holds = commit.holds;
    const of = !holds
      ? ""
      : holds.length === 1
        ? `; the changes of ${short(holds[0] as string)}`
        : `; the changes of the branch's ${holds.length} commits`;
    lines.push(
      `  ${short(commit.commit)}: ${commit.tasks.length} task(s), agent ${l.agent} · others ${l.others} · not observed ${l.not_observed} line(s)${of}`,
    );
  }
  if (report.written)
    lines.push(`written to refs/notes/waymark (${short(report.written)}); share them: git push origin refs/notes/waymark`);
  else if (report.commits.length > 0) lines.push("dry run: nothing written");
  return `${lines.join("\n")}\n`;
}
