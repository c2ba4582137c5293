/**
 * @module test/support/agent-pull-request
 * A pull request made by a real agent CLI, followed to the target branch (docs/pull-requests.md,
 * docs/evidence.md "Through merges"), for test/e2e/claude-code-pull-request.test.ts and
 * test/e2e/codex-pull-request.test.ts.
 *
 * The project is a clone of a bare origin, set up by `waymark init` (the notes' config included)
 * with `.waymark/policy.yml` on main. In one session the agent, scripted by the model server,
 * starts a workflow and a task, writes a new file with its own edit tool and commits it on a branch
 * of its own, runs the tests (failing), fixes a line of an existing file with its edit tool while a
 * person edits another line of it, runs the tests again (passing), commits, completes the task (the
 * helper it runs writes the notes) and pushes the branch and `refs/notes/waymark` as the README
 * says. Then, as the platforms do it: `waymark ci` on the pull request through the repository's
 * action.yml; the pull request merged server-side in a clone without the developer's config or
 * hooks (merge commit, squash, rebase merge, and a cherry-pick as a backport job does it); the
 * README's after-merge job run for the merge's `closed` event; and on the target branch, in a fresh
 * clone of main and the notes only, `waymark blame` and `waymark verify --repo`.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect, it } from "vitest";
import { tempDir } from "../../client-helper/test/fixtures.ts";
import { BIN, SYSTEM_NODE } from "../../client-helper/test/support.ts";
import { type ActionRun, runCompositeAction, runnerEnv, runWorkflowJob } from "./actions-runner.ts";
import { agentEnv } from "./agent-clis.ts";
import type { AgentHarness, ToolName } from "./agent-harness.ts";
import { type AgentProject, type AgentProjectOptions, agentProject } from "./agent-project.ts";
import { checkout, pullRequestEvent } from "./ci-scenario.ts";
import { approveDevice, EVIDENCE, EVIDENCE_LINES } from "./evidence-scenario.ts";
import { type GithubApi, startGithubApi } from "./github-api.ts";
import { ok } from "./mcp-client.ts";
import { Clone, copyPullRequest, git, type Mergeable, type MergeKind, merge, waymark } from "./merge-scenario.ts";
import type { ScriptedCall, Turn, Usage } from "./model-server.ts";
import { afterMergeJob, checkWorkflow } from "./readme-workflows.ts";

const REPOSITORY = "acme/sums";
const PULL = 12;
const BRANCH = "agent/sums";
const GITHUB_TOKEN = "ghs_test-token-of-the-job-0123456789";
const ACTION = join(import.meta.dirname, "../../action.yml");

/** What fails this repository's pull requests: every rule, the agents' share at most 90%. */
const POLICY = [
  "version: 1",
  "rules:",
  "  verified: true",
  "  signed_figures: true",
  "  within_areas: true",
  "  tests_after_last_edit: true",
  "  tasks_closed: true",
  "  reviews_answered: true",
  "  agent_line_share: 90",
  "",
].join("\n");

export const PULL_REQUEST = {
  /** The project's first commit: the evidence scenario's files and the policy. */
  files: { ...EVIDENCE.files, ".waymark/policy.yml": POLICY },
  /** The agent's first commit (the new file), on a branch of its own. */
  branchCommand: `git switch -q -c ${BRANCH} && git add -A && git commit -q -m 'Add mean()'`,
  /** Its push, as the README says: the branch, then the notes. */
  pushCommand: `git push -q origin ${BRANCH} && git push -q origin refs/notes/waymark`,
  pushed: "Pushed the branch and its record.",
  /** The server-side merges (and a backport job's cherry-pick), each on an origin of its own. */
  merges: ["merge-commit", "squash", "rebase", "cherry-pick"] as const satisfies readonly MergeKind[],
} as const;

/**
 * The project a team sets up for its pull requests: a clone of a bare origin with the policy on
 * main, `waymark init` run (the notes' config included), the device key init made approved by the
 * owner and pinned in `.waymark/allowed-signers` (the line `waymark device` prints), and init's
 * files committed and pushed to main with it, before any agent works there.
 */
export async function teamProject(harness: AgentHarness, options: Pick<AgentProjectOptions, "agent" | "home">): Promise<AgentProject> {
  const project = await agentProject(harness.server, { ...options, cli: harness.cli, files: PULL_REQUEST.files, origin: true });
  harness.project = project;
  expect(project.init?.code, project.init?.stderr).toBe(0);
  expect(project.init?.stdout).toContain("Notes: set in the repository's config");
  await approveDevice(harness);
  const device = spawnSync(SYSTEM_NODE, [BIN, "device"], { cwd: project.repo, env: agentEnv(project.home), encoding: "utf8" });
  expect(device.status, device.stderr).toBe(0);
  const line = device.stdout.split("\n").find((text) => text.includes(" waymark-ed25519 "));
  expect(line, device.stdout).toBeDefined();
  writeFileSync(join(project.repo, ".waymark", "allowed-signers"), `${String(line).trim()}\n`);
  project.git("add", "-A");
  project.git("commit", "-q", "-m", "Set up Waymark");
  project.git("push", "-q", "origin", "main");
  return project;
}

/** An agent's shell tool call of `command` (computed when the model answers, when a function). */
export type Shell = (command: string | (() => string)) => ScriptedCall[];

/** complete_task (claiming the tests passed), the push, a last word. */
export function pullRequestEndTurns(tools: ToolName, shell: Shell, usage: (n: number) => Usage, from: number): Turn[] {
  return [
    {
      calls: [
        {
          name: tools.name("complete_task"),
          namespace: tools.namespace,
          input: (conversation) => ({
            task_id: conversation.field(tools.name("start_task"), "task_id"),
            status: "success",
            outcome: { summary: "total() sums its values; added mean(). The tests pass." },
            metadata: { tests_status: "passed", commands_executed: ["npm test"] },
          }),
        },
      ],
      usage: usage(from),
      latencyMs: 600,
    },
    { calls: shell(PULL_REQUEST.pushCommand), usage: usage(from + 1) },
    { text: PULL_REQUEST.pushed, usage: usage(from + 2) },
  ];
}

type BlameLine = { line: number; commit: string; who: string; task_id?: string; model_id?: string; agent?: string };

/** `waymark blame <file> --json` in a clone (at its HEAD): every line's writer, without the commit git blames (a merge changes it). */
function blame(dir: string, file: string, env: NodeJS.ProcessEnv): Omit<BlameLine, "commit">[] {
  const run = waymark(dir, ["blame", file, "--json"], env);
  if (run.status !== 0) throw new Error(`waymark blame ${file} in ${dir}: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { lines: BlameLine[] }).lines.map(({ commit: _commit, ...rest }) => rest);
}

const validRecord = (() => {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  return ajv.compile(JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/agent-trace-record.json"), "utf8")));
})();

type NoteEntry = { commit: string; task_id: string; task: { end_commit: string; commits: string[] }; record: unknown; carried?: unknown };

/** Every note entry under refs/notes/waymark of a clone, parsed. */
function noteEntries(dir: string): NoteEntry[] {
  return git(dir, ["notes", "--ref=waymark", "list"])
    .split("\n")
    .filter(Boolean)
    .flatMap((line) =>
      git(dir, ["cat-file", "-p", line.split(" ")[0] as string])
        .split("\n")
        .filter(Boolean)
        .map((text) => JSON.parse(text) as NoteEntry),
    );
}

/** The pull request as the agent pushed it, and what the checks on its branch found. */
export interface PushedPullRequest extends Mergeable {
  /** The branch's commits, oldest first. */
  commits: string[];
  workflowId: string;
  taskId: string;
  /** The workflow's signed JSON export, in a file. */
  exportFile: string;
  /** Every file's lines on the branch, as `waymark blame` gives them in the developer's clone. */
  onBranch: Record<string, Omit<BlameLine, "commit">[]>;
  /** XDG_CACHE_HOME for the helper run as a reader. */
  env: Record<string, string>;
}

const FILES = ["src/mean.js", "src/sum.js"];
/** What `waymark verify --repo` says of the task where git agrees with its record. */
const AGREES = "agrees (2 committed files, 0 renames, 2 line counts, 2 commits)";

async function fetchText(url: string, token: string): Promise<string> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  expect(response.status, url).toBe(200);
  return response.text();
}

/**
 * The session's work as it reached git and the endpoint: two commits on the agent's branch, pushed
 * with the notes; the task's record (the agent's own edits, the person's line, the tests run
 * through its shell, a device's signature); the notes the helper wrote (valid Agent Trace records,
 * the end commit's equal to the export's); `waymark blame` on the branch; `waymark verify --repo`
 * on the branch agreeing.
 */
export async function expectPushed(
  harness: AgentHarness,
  ids: { workflowId: string; taskId: string },
  agent: { tool: string; modelId: string },
): Promise<PushedPullRequest> {
  const project = harness.project as AgentProject;
  const origin = project.origin as string;
  const dev = new Clone(project.repo);
  expect(readFileSync(join(project.repo, "src", "mean.js"), "utf8")).toBe(EVIDENCE.mean);
  expect(readFileSync(join(project.repo, "src", "sum.js"), "utf8")).toBe(EVIDENCE.sumEnd);
  expect(dev.git("branch", "--show-current").trim()).toBe(BRANCH);
  expect(dev.git("log", "--format=%s").trim().split("\n")).toEqual([EVIDENCE.commit, "Add mean()", "Set up Waymark", "initial"]);
  expect(dev.git("status", "--porcelain")).toBe("");
  const head = dev.git("rev-parse", "HEAD").trim();
  const base = dev.git("rev-parse", "main").trim();
  const commits = dev.git("rev-list", `${base}..${head}`).trim().split("\n");
  // The branch and the notes reached the origin: what the agent's push did.
  const remote = git(origin, ["for-each-ref", "--format=%(refname) %(objectname)"]);
  expect(remote).toContain(`refs/heads/${BRANCH} ${head}`);
  expect(remote).toContain(`refs/notes/waymark ${dev.git("rev-parse", "refs/notes/waymark").trim()}`);

  // The record: the agent's own edits, the person's line, the shell's test runs, signed by the approved device.
  const structured = await ok(harness.reader, "get_workflow", { task_id: ids.taskId });
  const task = structured.task as Record<string, unknown>;
  expect(task.status).toBe("success");
  expect(task.files_changed).toMatchObject({
    added: ["src/mean.js"],
    modified: ["src/sum.js"],
    branch: BRANCH,
    commits: commits.map((sha) => expect.objectContaining({ sha: sha.slice(0, 7) })),
    source: { kind: "signed" },
    lines: EVIDENCE_LINES,
  });
  const commands = task.commands as {
    runs: { command: string; exit_code: number | null; kinds: string[]; at: string }[];
    last_edit_at: string;
  };
  expect(commands.runs.map((run) => [run.command, run.exit_code, run.kinds])).toEqual([
    [PULL_REQUEST.branchCommand, 0, []],
    ["npm test", 1, ["test"]],
    ["npm test", 0, ["test"]],
    [EVIDENCE.commitCommand, 0, []],
  ]);
  expect(Date.parse(String(commands.runs[2]?.at))).toBeGreaterThan(Date.parse(commands.last_edit_at));

  // The notes the helper wrote at complete_task: one entry per commit of the task, each a valid Agent
  // Trace record; the end commit's is the task's record as the endpoint's Agent Trace export has it.
  const entries = noteEntries(project.repo);
  expect(entries.map((entry) => entry.commit).sort()).toEqual([...commits].sort());
  for (const entry of entries) {
    expect(entry.task_id).toBe(ids.taskId);
    expect(entry.task.commits).toEqual(commits);
    expect(validRecord(entry.record), JSON.stringify(validRecord.errors)).toBe(true);
  }
  const trace = JSON.parse(
    await fetchText(`${harness.server.url}/api/workflows/${ids.workflowId}/export.agent-trace.json`, harness.server.token),
  ) as unknown[];
  expect(entries.find((entry) => entry.commit === head)?.record).toEqual(trace[0]);

  // `waymark blame` on the branch: the agent's lines its task, agent and model; the person's line others'; the rest nobody's.
  const env = { XDG_CACHE_HOME: tempDir("waymark-reader-cache-") };
  const onBranch = Object.fromEntries(FILES.map((file) => [file, blame(project.repo, file, env)]));
  const agentLine = { who: "agent", task_id: ids.taskId, model_id: agent.modelId, agent: agent.tool };
  expect(onBranch["src/mean.js"]).toEqual([1, 2, 3].map((line) => expect.objectContaining({ line, ...agentLine })));
  expect(onBranch["src/sum.js"]?.map(({ line, who, task_id, model_id }) => ({ line, who, task_id, model_id }))).toEqual([
    { line: 1, who: "others", task_id: ids.taskId, model_id: undefined },
    { line: 2, who: "not_recorded", task_id: undefined, model_id: undefined },
    { line: 3, who: "agent", task_id: ids.taskId, model_id: agent.modelId },
    { line: 4, who: "not_recorded", task_id: undefined, model_id: undefined },
    { line: 5, who: "not_recorded", task_id: undefined, model_id: undefined },
    { line: 6, who: "not_recorded", task_id: undefined, model_id: undefined },
  ]);

  // `waymark verify --repo` on the branch: the export's task agrees with git (the device signatures checked against the pinned key).
  const exportFile = join(tempDir("waymark-export-"), "export.json");
  writeFileSync(exportFile, await fetchText(`${harness.server.url}/api/workflows/${ids.workflowId}/export.json`, harness.server.token));
  const verified = waymark(project.repo, ["verify", exportFile, "--endpoint", harness.server.url, "--repo", project.repo], env);
  expect(verified.status, `${verified.stdout}${verified.stderr}`).toBe(0);
  expect(verified.stdout).toContain(`${ids.taskId} "${EVIDENCE.task}": ${AGREES}`);
  expect(verified.stdout).toContain("checked, allowed signer");
  // init's files were committed first, as init says: the agent's `git add -A` took none of them in.
  expect(verified.stdout).not.toMatch(/undecided/i);
  return { origin, dev, branch: BRANCH, base, head, commits: [...commits].reverse(), files: FILES, ...ids, exportFile, onBranch, env };
}

/** `waymark ci` as GitHub Actions runs it on the pull request: the README's workflow, through the repository's action.yml. */
export async function ciOnPullRequest(
  harness: AgentHarness,
  pr: PushedPullRequest,
): Promise<{ run: ActionRun; api: GithubApi; readToken: string }> {
  const response = await fetch(`${harness.server.url}/api/tokens`, {
    method: "POST",
    headers: { Authorization: `Bearer ${harness.server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "ci", scopes: ["read"] }),
  });
  expect(response.status).toBe(201);
  const readToken = String(((await response.json()) as { token: string }).token);
  const api = await startGithubApi({ repository: REPOSITORY, pull: PULL, token: GITHUB_TOKEN });
  const documented = checkWorkflow({ WAYMARK_URL: harness.server.url, WAYMARK_TOKEN: readToken });
  expect(documented, "README.md has the workflow file").toBeDefined();
  const workspace = checkout(pr.origin, pr.head);
  const event = eventOf(pr.base, pr.head);
  const env = runnerEnv({ eventName: "pull_request", eventPath: event, repository: REPOSITORY, apiUrl: api.url, npmCache: npmCache() });
  const run = await runCompositeAction(ACTION, { inputs: documented?.inputs ?? {}, env, workspace, githubToken: GITHUB_TOKEN });
  return { run, api, readToken };
}

/** GitHub's pull_request event of this pull request from `head` onto `base` (its `closed` event when `mergeCommit` merged it). */
function eventOf(base: string, head: string, mergeCommit?: string): string {
  return pullRequestEvent({ pull: PULL, repository: REPOSITORY, base, head, refs: { base: "main", head: BRANCH }, mergeCommit });
}

let cache: string | undefined;
/** One npm cache for the file's npx runs (the helper from the endpoint's tarball, fetched once). */
function npmCache(): string {
  cache ??= tempDir("waymark-npm-cache-");
  return cache;
}

/** A fresh clone of the target branch and the notes, nothing else: what a reader of main has. */
function targetClone(origin: string): string {
  const dir = join(tempDir("waymark-target-"), "repo");
  git(tempDir(), ["clone", "-q", "--no-local", "--single-branch", "--branch", "main", origin, dir]);
  git(dir, ["fetch", "-q", "origin", "+refs/notes/waymark:refs/notes/waymark"]);
  return dir;
}

export interface MergedPullRequest {
  /** The README's after-merge job. */
  job: ActionRun & { ran: boolean };
  /** Before the job, `waymark blame` on main (a fresh clone): the lines the branch gave the agent. */
  agentLinesBefore: number;
  /** After it, in a fresh clone of main and the notes. */
  onMain: Record<string, Omit<BlameLine, "commit">[]>;
  verify: { status: number | null; stdout: string; stderr: string };
  fromNotes: { status: number | null; stdout: string; stderr: string };
  target: string;
}

/**
 * The pull request merged `kind` on an origin of its own (server-side, as the platform does it),
 * then the README's after-merge job for its `closed` event, then a reader's fresh clone of main.
 */
export async function mergeAndCarry(harness: AgentHarness, pr: PushedPullRequest, kind: MergeKind): Promise<MergedPullRequest> {
  const copy = copyPullRequest(pr);
  // GitHub keeps a pull request's head at refs/pull/<number>/head on the base repository.
  git(copy.origin, ["update-ref", `refs/pull/${PULL}/head`, pr.head]);
  const merged = merge(copy, kind);
  const agentLinesBefore = Object.values(
    Object.fromEntries(FILES.map((file) => [file, blame(targetClone(copy.origin), file, pr.env)])),
  ).flatMap((lines) => lines.filter((line) => line.who === "agent")).length;
  const event = eventOf(merged.before, pr.head, merged.after);
  const { job } = afterMergeJob(harness.server.url);
  const workspace = tempDir("waymark-runner-workspace-");
  const ran = await runWorkflowJob(job, {
    event: JSON.parse(readFileSync(event, "utf8")),
    env: runnerEnv(
      { eventName: "pull_request", eventPath: event, repository: REPOSITORY, apiUrl: "https://api.github.com", npmCache: npmCache() },
      pr.env,
    ),
    workspace,
    githubToken: GITHUB_TOKEN,
    actions: {
      "actions/checkout@v4": (inputs) => {
        expect(inputs["fetch-depth"]).toBe("0");
        checkout(copy.origin, String(inputs.ref), workspace);
      },
    },
  });
  const target = targetClone(copy.origin);
  const onMain = Object.fromEntries(FILES.map((file) => [file, blame(target, file, pr.env)]));
  const verify = waymark(target, ["verify", pr.exportFile, "--endpoint", harness.server.url, "--repo", target], pr.env);
  const fromNotes = waymark(target, ["verify", "--repo", target, "--allow-unsigned"], pr.env);
  return { job: ran, agentLinesBefore, onMain, verify, fromNotes, target };
}

/** What a step of a run printed, for a failure's message. */
const said = (run: ActionRun) => run.steps.map((step) => `${step.name}: ${step.status}\n${step.stdout}\n${step.stderr}`).join("\n");

/**
 * The checks after the session, as tests of the file: `waymark ci` on the pull request, then each
 * merge with the after-merge job and what a fresh clone of main says. `pushed`: the session's pull
 * request (undefined when the session's test failed: these fail with it).
 */
export function definePullRequestChecks(
  harness: AgentHarness,
  pushed: () => PushedPullRequest | undefined,
  agent: { tool: string; model: string },
): void {
  const ready = (): PushedPullRequest => {
    const pr = pushed();
    if (pr === undefined) throw new Error("the agent's session did not make its pull request");
    return pr;
  };

  it("waymark ci, run as GitHub Actions runs it on the pull request, reports the agent's task and passes the policy that requires it", async (ctx) => {
    ctx.skip(harness.cli === undefined, harness.skip);
    const pr = ready();
    const { run, api } = await ciOnPullRequest(harness, pr);
    try {
      expect(run.status, said(run)).toBe(0);
      expect(run.outputs).toMatchObject({
        result: "passed",
        tasks: "1",
        failures: "0",
        agent_share: "80",
        tests_passed: "1/1",
        outside_areas: "0",
        unverified: "0",
        endpoint: "reachable",
      });
      const summary = run.summary;
      expect(summary).toContain("**Policy passed** (`.waymark/policy.yml`).");
      expect(summary).toMatch(/Read from `http:\/\/127\.0\.0\.1:\d+` · 2 commits in the range, 2 recorded by a task\./);
      expect(summary).toContain(`| Agents and models | ${agent.tool} · ${agent.model} |`);
      expect(summary).toContain("| Added lines | agent 4 (80%) · others 1 (20%) · not observed 0 (0%) |");
      expect(summary).toContain("| Tests | 1 of 1 task that changed files had a test run observed passing after their last edit |");
      expect(summary).toContain("| Figures not computed and signed | none |");
      expect(summary).toContain("| Records verified | 1 of 1 |");
      expect(summary).toContain(
        `| ${EVIDENCE.task} (\`${pr.taskId}\`) | success | ${agent.tool} · ${agent.model} | agent 4 · others 1 | ✓ passed after the last edit | ✓ verified |`,
      );
      // The sticky comment, through the REST API as GitHub describes it.
      expect(api.invalid).toEqual([]);
      expect(api.comments.map((comment) => comment.body.includes("**Policy passed**"))).toEqual([true]);
    } finally {
      await api.close();
    }
  }, 300_000);

  for (const kind of PULL_REQUEST.merges) {
    const carries = kind !== "merge-commit";
    it(`${kind}: after the README's after-merge job, blame and verify --repo on main in a fresh clone say what they said on the branch`, async (ctx) => {
      ctx.skip(harness.cli === undefined, harness.skip);
      const pr = ready();
      const merged = await mergeAndCarry(harness, pr, kind);
      expect(merged.job.ran).toBe(true);
      expect(merged.job.status, said(merged.job)).toBe(0);
      const carried = merged.job.steps.map((step) => step.stdout).join("");
      if (carries) {
        // Before the job, the merge's new commits carry no record: on main the agent's lines are nobody's.
        expect(merged.agentLinesBefore).toBe(0);
        // What the step carried, over the commits the merge made (one for a squash, one per commit else).
        const counts = [...carried.matchAll(/: 1 task\(s\), agent (\d+) · others (\d+) · not observed (\d+) line\(s\)/g)];
        expect(counts.length, carried).toBe(kind === "squash" ? 1 : 2);
        expect([0, 1, 2].map((i) => counts.reduce((sum, match) => sum + Number(match[i + 1]), 0))).toEqual([4, 1, 0]);
      } else expect(carried).toContain("nothing to carry");
      for (const entry of noteEntries(merged.target)) expect(validRecord(entry.record), JSON.stringify(validRecord.errors)).toBe(true);
      // Every line of every file: the same writer, task, agent and model as on the branch.
      expect(merged.onMain).toEqual(pr.onBranch);

      // `waymark verify --repo` gives the task the answer it gave on the branch, re-derived from the
      // commits that now hold its changes, and says how it mapped them.
      expect(merged.verify.status, `${merged.verify.stdout}${merged.verify.stderr}`).toBe(0);
      expect(merged.verify.stdout).toContain(`${pr.taskId} "${EVIDENCE.task}": ${AGREES}`);
      expect(merged.verify.stdout).toContain("git decided every task on HEAD: 1 task agrees.");
      const [first, second] = pr.commits.map((commit) => commit.slice(0, 12));
      const mapped = (text: string) => [...text.matchAll(/on the branch: (.*)$/gm)].map((match) => match[1]);
      const mapping = {
        "merge-commit": [`its commits ${pr.base.slice(0, 12)}..${second} are on HEAD`],
        squash: [
          expect.stringMatching(
            new RegExp(`^${first}, ${second} → [0-9a-f]{12} \\(carried by waymark notes carry: one commit holding their changes\\)$`),
          ),
        ],
        rebase: [first, second].map((commit) =>
          expect.stringMatching(new RegExp(`^${commit} → [0-9a-f]{12} \\(carried by waymark notes carry\\)$`)),
        ),
      };
      expect(mapped(merged.verify.stdout)).toEqual(mapping[kind === "cherry-pick" ? "rebase" : kind]);
      expect(merged.verify.stdout).toContain("as the export's events do");
      // From the notes alone, offline: the same mapping, the task decided (its commits and line ranges).
      expect(merged.fromNotes.status, `${merged.fromNotes.stdout}${merged.fromNotes.stderr}`).toBe(0);
      expect(merged.fromNotes.stdout).toContain(`${pr.taskId} "${EVIDENCE.task}": agrees (2 commits)`);
      if (carries) expect(mapped(merged.fromNotes.stdout)).toEqual(mapped(merged.verify.stdout));
      expect(merged.fromNotes.stdout).toContain("NOT CHECKED (accepted with --allow-unsigned): the notes are not signed");
    }, 240_000);
  }
}
