/**
 * @module ci/pr-record
 * The record of a pull request's tasks, found and verified for `waymark ci`:
 * - which tasks: every commit of the range (`git rev-list base..head`) asked of the endpoint's
 *   commit index (`GET /api/commits`, a read token), and of the repository's notes (./note-tasks.ts);
 *   and, for work a task left uncommitted that a later commit of the range holds, the range's
 *   changed files asked of its path index (`GET /api/paths`): such a task counts when it ended on a
 *   commit of the range (or its base) with that file uncommitted;
 * - their record: each workflow's signed JSON export (`GET /api/workflows/<id>/export.json`);
 * - verified as `waymark verify` verifies it (@waymark/protocol/verify: signature against the
 *   deployment's published keys or `--key`, chain, every field against its events; ../verify-repo.ts:
 *   each task's committed changes against this clone). A check that could not run is a problem,
 *   never a pass.
 * With the endpoint unreachable (or none configured) the tasks come from the notes alone, and the
 * report says so.
 */

import type { AllowedSigner } from "@waymark/protocol/allowed-signers";
import type { PolicyTask } from "@waymark/protocol/policy";
import { type FactsFeedback, type FactsIssue, type FactsTask, taskFacts } from "@waymark/protocol/pr-facts";
import type { SummaryView } from "@waymark/protocol/pr-summary";
import type { PublishedKey } from "@waymark/protocol/statement";
import { StrictJsonError, strictJsonParse, strictUtf8 } from "@waymark/protocol/strict-json";
import { checkExport } from "@waymark/protocol/verify";
import type { Endpoint } from "../endpoint.js";
import type { GitContext } from "../git/process.js";
import { gitDiffCommits, gitIsAncestor, gitRangeCommits } from "../git/queries.js";
import { keysFromEndpoint } from "../verify-inputs.js";
import { checkAgainstRepository, FAILING_VERDICTS } from "../verify-repo.js";
import { scratchRoot } from "../verify-repo-report.js";
import { type NoteTask, noteTasks } from "./note-tasks.js";

/** Commits of a range asked about at most (GitHub lists at most 250 of a pull request's). */
export const RANGE_COMMITS_MAX = 1000;
/** Commits per GET /api/commits (the endpoint's bound is 250; a URL stays well under 16 KiB). */
const COMMITS_PER_REQUEST = 100;
/** Workflows read at most: a pull request's tasks rarely span more than a few. */
const WORKFLOWS_MAX = 50;
/** Changed files asked of the path index at most, and tasks per file. */
const PATHS_ASKED = 100;
const TASKS_PER_PATH = 20;
/** Workflows the path index alone named whose exports are read at most (each is one export of the account's budget). */
const PATH_WORKFLOWS_MAX = 5;
const TIMEOUT_MS = 60_000;
/** Export problems listed per task at most (each names where; the count says how many more). */
const PROBLEMS_PER_TASK = 10;

export interface RecordRequest {
  context: GitContext;
  root: string;
  base: string;
  head: string;
  endpoint: Endpoint | null;
  token: string | undefined;
  /** Keys from `--key` (offline), else the endpoint's published keys are read. */
  keys: PublishedKey[] | null;
  /** The device keys the repository trusts (.waymark/allowed-signers, or --allowed-signers); null: none given. */
  signers: AllowedSigner[] | null;
}

export interface PrRecord {
  commits: string[];
  more_commits: boolean;
  /** Commits of the range a task recorded. */
  recorded: Set<string>;
  tasks: PolicyTask[];
  /** Per workflow read from the endpoint: its export as a summary view, for the report. */
  views: Map<string, SummaryView>;
  /** Set when the endpoint could not be used. */
  unreachable?: string;
  /** How many of `tasks` only the notes gave (every one, when the endpoint could not be used). */
  from_notes: number;
  /** Reviewers' feedback on the pull request's workflows as a whole (a pull-request review included). */
  workflow_feedback: FactsFeedback[];
}

/** The endpoint could not be used: why, in a line. */
export class Unreachable extends Error {}

type Json = { [key: string]: unknown };

/** A GET of the endpoint's JSON, read strictly; Unreachable when it cannot be used (with why). */
export async function getJson(url: string, token: string | undefined): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { Accept: "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new Unreachable(`${new URL(url).origin}: ${(error as Error).message}`);
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel();
    throw new Unreachable(`${new URL(url).pathname} answered HTTP ${response.status}: set WAYMARK_TOKEN to a token with the read scope`);
  }
  if (!response.ok) {
    const text = (await response.text()).slice(0, 200);
    throw new Unreachable(`${new URL(url).pathname} answered HTTP ${response.status}: ${text}`);
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  try {
    // As `waymark verify` reads an export: JSON whose meaning does not depend on the parser.
    return strictJsonParse(strictUtf8(bytes));
  } catch (error) {
    if (error instanceof StrictJsonError) return { refused: `${new URL(url).pathname}: ${error.message}` };
    throw new Unreachable(`${new URL(url).pathname} did not answer JSON`);
  }
}

/** `commit`: the range's commit (full id); the task recorded it as `sha` (maybe abbreviated). */
type CommitHit = { commit: string; workflow_id: string; task_id: string };

type PathHit = { path: string; workflow_id: string; task_id: string };

/** The tasks the endpoint's path index names for the range's changed files (UTF-8 names, at most PATHS_ASKED). */
async function pathHits(origin: string, token: string | undefined, paths: readonly string[]): Promise<PathHit[]> {
  const asked = paths.slice(0, PATHS_ASKED);
  const answers: PathHit[][] = [];
  // A few at a time: one request per file.
  for (let at = 0; at < asked.length; at += 8) {
    answers.push(
      ...(await Promise.all(
        asked.slice(at, at + 8).map(async (path) => {
          const url = `${origin}/api/paths?path=${encodeURIComponent(path)}&limit=${TASKS_PER_PATH}`;
          const body = (await getJson(url, token)) as { results?: unknown };
          if (!Array.isArray(body.results)) throw new Unreachable("/api/paths did not answer a list of results");
          return (body.results as Json[]).flatMap((hit) =>
            typeof hit.workflow_id === "string" && typeof hit.task_id === "string"
              ? [{ path, workflow_id: hit.workflow_id, task_id: hit.task_id }]
              : [],
          );
        }),
      )),
    );
  }
  return answers.flat();
}

/**
 * Of the tasks the path index named, those whose work the range holds without a commit of theirs:
 * the task ended on a commit of the range or its base (`end` is `base` or between them) with the
 * file left uncommitted, and a commit of the range changed that file.
 */
async function uncommittedWork(request: RecordRequest, document: unknown, candidates: readonly PathHit[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (!isObject(document) || !Array.isArray(document.tasks)) return found;
  for (const task of document.tasks as Json[]) {
    if (typeof task.id !== "string") continue;
    const paths = candidates.filter((hit) => hit.task_id === task.id).map((hit) => hit.path);
    const files = isObject(task.files_changed) ? task.files_changed : null;
    const uncommitted = new Set(Array.isArray(files?.uncommitted) ? (files.uncommitted as unknown[]) : []);
    const end = isObject(task.repository) && typeof task.repository.end_commit === "string" ? task.repository.end_commit : null;
    if (end === null || !paths.some((path) => uncommitted.has(path))) continue;
    const inRange =
      end === request.base ||
      ((await gitIsAncestor(request.context, end, request.head)) && !(await gitIsAncestor(request.context, end, request.base)));
    if (inRange) found.add(task.id);
  }
  return found;
}

/** The tasks the endpoint's commit index names for these commits. */
async function commitHits(origin: string, token: string | undefined, commits: readonly string[]): Promise<CommitHit[]> {
  const hits: CommitHit[] = [];
  for (let at = 0; at < commits.length; at += COMMITS_PER_REQUEST) {
    const batch = commits.slice(at, at + COMMITS_PER_REQUEST);
    const body = (await getJson(`${origin}/api/commits?sha=${batch.join(",")}`, token)) as { results?: unknown };
    if (!Array.isArray(body.results)) throw new Unreachable("/api/commits did not answer a list of results");
    for (const hit of body.results as Json[]) {
      if (typeof hit.commit === "string" && typeof hit.workflow_id === "string" && typeof hit.task_id === "string") {
        hits.push({ commit: hit.commit, workflow_id: hit.workflow_id, task_id: hit.task_id });
      }
    }
  }
  return hits;
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/**
 * What the export check found wrong for the whole workflow, each problem prefixed with where: as
 * `waymark verify` checks it, the deployment's origin required to be the endpoint read from. What
 * could not be checked (no keys; figures labelled signed without allowed signers) is a problem.
 */
async function exportProblems(
  document: unknown,
  options: { keys: PublishedKey[] | null; keyProblem: string | null; signers: AllowedSigner[] | null; origin: string },
): Promise<string[]> {
  if (isObject(document) && typeof document.refused === "string") return [`export: refused: ${document.refused}`];
  const check = await checkExport(document, { keys: options.keys, signers: options.signers, origin: options.origin });
  if ("not_an_export" in check) return [`export: ${check.not_an_export}`];
  const problems: string[] = [];
  if (check.signature.status === "not_checked") problems.push(`signature: not checked (${options.keyProblem ?? "no keys"})`);
  if (check.provenance.status === "not_checked") {
    problems.push(
      "devices: the figures labelled computed and signed were not checked (no allowed signers: commit .waymark/allowed-signers)",
    );
  }
  problems.push(...check.problems.slice(0, PROBLEMS_PER_TASK));
  const more = check.problems.length - PROBLEMS_PER_TASK + check.more_problems;
  if (more > 0) problems.push(`export: … and ${plural(more, "more problem")}`);
  return problems;
}

/** Finds the pull request's tasks and verifies their record. */
export async function findRecord(request: RecordRequest): Promise<PrRecord> {
  const range = await gitRangeCommits(request.context, request.base, request.head, RANGE_COMMITS_MAX);
  const notes = await noteTasks(request.context, range.commits);
  const record: PrRecord = {
    commits: range.commits,
    more_commits: range.more,
    recorded: new Set(notes.map((note) => note.commit)),
    tasks: [],
    views: new Map(),
    from_notes: 0,
    workflow_feedback: [],
  };
  const fromNotes = (list: readonly NoteTask[], why: string) => {
    record.tasks.push(...list.map((note) => noteFacts(note, why)));
    record.from_notes += list.length;
  };
  if (request.endpoint === null) {
    record.unreachable = "no endpoint configured: pass --url or set WAYMARK_URL";
    fromNotes(notes, "the report is from the repository's notes alone");
    return record;
  }
  const origin = request.endpoint.origin;
  try {
    const hits = await commitHits(origin, request.token, range.commits);
    for (const hit of hits) record.recorded.add(hit.commit);
    const changed = (await gitDiffCommits(request.context, request.base, request.head)).map((change) => change.path);
    const byPath = (
      await pathHits(
        origin,
        request.token,
        changed.filter((path) => !path.startsWith("/")),
      )
    ).filter((hit) => !hits.some((known) => known.task_id === hit.task_id));
    const wanted = new Map<string, Set<string>>();
    for (const { workflow_id, task_id } of [...hits, ...notes]) {
      if (!/^wf_[a-z2-7]{20}$/.test(workflow_id)) continue;
      if (!wanted.has(workflow_id) && wanted.size >= WORKFLOWS_MAX) continue;
      wanted.set(workflow_id, (wanted.get(workflow_id) ?? new Set()).add(task_id));
    }
    // Tasks only the path index named, in the newest workflows it named (hits come newest first).
    const maybe = new Map<string, PathHit[]>();
    for (const hit of byPath) {
      if (!/^wf_[a-z2-7]{20}$/.test(hit.workflow_id) || wanted.get(hit.workflow_id)?.has(hit.task_id)) continue;
      if (!maybe.has(hit.workflow_id) && maybe.size >= PATH_WORKFLOWS_MAX) continue;
      maybe.set(hit.workflow_id, [...(maybe.get(hit.workflow_id) ?? []), hit]);
    }
    let keys = request.keys;
    let keyProblem: string | null = null;
    if (keys === null) {
      try {
        keys = (await keysFromEndpoint(origin)).keys;
      } catch (error) {
        keyProblem = (error as Error).message;
      }
    }
    const check = async (workflowId: string, document: unknown, taskIds: ReadonlySet<string>) => {
      const problems = await exportProblems(document, { keys, keyProblem, signers: request.signers, origin });
      await addWorkflow(record, request, workflowId, taskIds, document, problems);
    };
    for (const [workflowId, taskIds] of wanted) {
      const document = await getJson(`${origin}/api/workflows/${workflowId}/export.json`, request.token);
      // A task only the path index named is the pull request's when its uncommitted work is in the range.
      const holds = await uncommittedWork(request, document, maybe.get(workflowId) ?? []);
      maybe.delete(workflowId);
      await check(workflowId, document, new Set([...taskIds, ...holds]));
    }
    // Best effort: an export of a workflow only the path index named that cannot be read leaves it out.
    for (const [workflowId, candidates] of maybe) {
      let document: unknown;
      try {
        document = await getJson(`${origin}/api/workflows/${workflowId}/export.json`, request.token);
      } catch (error) {
        if (error instanceof Unreachable) continue;
        throw error;
      }
      const holds = await uncommittedWork(request, document, candidates);
      if (holds.size > 0) await check(workflowId, document, holds);
    }
    const found = new Set(record.tasks.map((task) => `${task.workflow_id}\0${task.id}`));
    fromNotes(
      notes.filter((note) => !found.has(`${note.workflow_id}\0${note.task_id}`)),
      "the endpoint's export of its workflow does not hold it",
    );
  } catch (error) {
    if (!(error instanceof Unreachable)) throw error;
    record.unreachable = error.message;
    record.tasks = [];
    record.views.clear();
    record.from_notes = 0;
    record.workflow_feedback = [];
    fromNotes(notes, "the endpoint was not reachable: the report is from the repository's notes alone");
  }
  return record;
}

/**
 * A task as the notes alone give it: who wrote its lines, the agent and the model. Nothing there is
 * signed, and the notes hold neither its commands, its areas nor its review items: its record is
 * not verified, and what only the endpoint holds reads as not observed.
 */
function noteFacts(note: NoteTask, why: string): PolicyTask {
  return {
    workflow_id: note.workflow_id,
    id: note.task_id,
    name: note.name,
    status: "in the notes",
    agent: note.agent,
    model: note.model,
    cost_usd: null,
    files: note.files,
    outside_areas: [],
    lines: note.lines,
    file_authors: note.file_authors,
    tests: note.files.length > 0 ? "not_observed" : "no_files",
    test_run: null,
    figures: "not_observed",
    usage_signed: null,
    open_reviews: [],
    feedback: [],
    record: { problems: [`not verified: ${why}`] },
  };
}

/** One workflow's export: its pull-request tasks' facts, each with what did not verify (the export's problems and git's). */
async function addWorkflow(
  record: PrRecord,
  request: RecordRequest,
  workflowId: string,
  taskIds: ReadonlySet<string>,
  document: unknown,
  problems: string[],
): Promise<void> {
  if (!isObject(document) || !Array.isArray(document.tasks)) return;
  const tasks = (document.tasks as Json[]).filter((task) => typeof task.id === "string" && taskIds.has(task.id));
  const issues = (Array.isArray(document.issues) ? document.issues : []) as FactsIssue[];
  const feedback = (Array.isArray(document.feedback) ? document.feedback : []) as FactsFeedback[];
  record.workflow_feedback.push(...feedback.filter((item) => item.target === "workflow"));
  const events = Array.isArray(document.events) ? document.events : undefined;
  // Against the branch reviewed (the pull request's head), as `waymark verify --repo --ref <head>` checks it.
  const git = await checkAgainstRepository(tasks as never[], request.root, {
    ref: request.head,
    scratchRoot: scratchRoot(),
    workflowId,
    ...(events ? { events: events as never[] } : {}),
  });
  for (const task of tasks as unknown as FactsTask[]) {
    const facts = taskFacts(workflowId, task, issues, feedback);
    const checked = git.tasks.find((t) => t.id === task.id);
    const gitProblems: string[] = checked ? [] : ["git: not checked"];
    if (checked && FAILING_VERDICTS.has(checked.verdict)) {
      const said = [...checked.differences, ...checked.undecided];
      gitProblems.push(
        ...(said.length > 0 ? said.map((d) => `git: ${d}`) : [`git: ${checked.verdict.replace("_", " ")}: ${checked.reason ?? ""}`]),
      );
    }
    record.tasks.push({ ...facts, record: { problems: [...problems, ...gitProblems] } });
  }
  const view = document as unknown as SummaryView;
  record.views.set(workflowId, { ...view, tasks: view.tasks.filter((task) => taskIds.has(task.id)) });
}
