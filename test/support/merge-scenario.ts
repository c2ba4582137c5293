/**
 * A pull request whose records must survive every way it can be merged (issue: the record travels
 * with the code), shared by test/e2e/notes-merges.test.ts and the bench's merge matrix.
 *
 * A bare origin; a developer's clone set up as `waymark init` sets it (`waymark notes setup`);
 * on a branch, the real helper (`waymark mcp` through a real endpoint) records two tasks whose
 * edits its hooks observe (Claude Code's payloads), with a person editing a line during the first
 * task, a person's commit between the tasks that changes lines of the agent's and of the start,
 * and a task of two commits; the branch and its notes pushed. Every line's text says who wrote it
 * ("agent <task> …", "other …" written by a person while a hook watched, "person …", "line …"
 * from the start), so what `waymark blame` must answer for a line depends on its content alone,
 * however the branch was merged.
 *
 * The merges are made as the platforms make them: in a clone of the origin of its own, with none
 * of the developer's config or hooks (`git merge --squash`, a rebase and a fast-forward, a merge
 * commit, cherry-picks), or as a developer rewrites a branch locally (an amend, `git rebase -i`
 * scripted through GIT_SEQUENCE_EDITOR, with a person's edit in between).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Client } from "@modelcontextprotocol/client";
import { BIN, SYSTEM_NODE } from "../../client-helper/test/support.ts";
import { connectThroughHelper } from "./agents.ts";
import { callTool, type McpTarget, type Structured } from "./mcp-client.ts";

const GIT_ENV = {
  GIT_AUTHOR_NAME: "Person",
  GIT_AUTHOR_EMAIL: "person@example.com",
  GIT_COMMITTER_NAME: "Person",
  GIT_COMMITTER_EMAIL: "person@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
};

const made: string[] = [];

/** A temporary directory, removed by cleanupScenarios. */
function tempDir(prefix = "waymark-scenario-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every directory the scenarios made. */
export function cleanupScenarios(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** A clone a person works in: git there, and files written there. */
export class Clone {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
  }
  git(...args: string[]): string {
    return git(this.dir, args);
  }
  write(path: string, content: string): this {
    mkdirSync(dirname(join(this.dir, path)), { recursive: true });
    writeFileSync(join(this.dir, path), content);
    return this;
  }
  commitAll(message: string): this {
    this.git("add", "-A");
    this.git("commit", "-q", "--allow-empty", "-m", message);
    return this;
  }
}

/** git in `cwd`, as a person or a platform runs it (no config but the repository's own and the test's identity). */
export function git(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync("git", args, {
    cwd,
    env: { ...process.env, ...GIT_ENV, ...env },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** `waymark <args>` in `cwd`: status and output. */
export function waymark(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(SYSTEM_NODE, [BIN, ...args], { cwd, env: { ...process.env, ...env }, encoding: "utf8" });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

export type Who = { who: string; task_id?: string; model_id?: string };

/** `waymark blame --json` of a file at a revision: each line's writer. */
export function blameJson(cwd: string, file: string, revision: string, env: NodeJS.ProcessEnv = {}): Who[] {
  const run = waymark(cwd, ["blame", file, "--rev", revision, "--json"], env);
  if (run.status !== 0) throw new Error(`waymark blame ${file} --rev ${revision}: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { lines: Who[] }).lines.map(({ who, task_id, model_id }) => ({
    who,
    ...(task_id ? { task_id } : {}),
    ...(model_id ? { model_id } : {}),
  }));
}

const numbered = (file: number, lines: number) => Array.from({ length: lines }, (_, i) => `line ${file}.${i + 1}\n`).join("");

export interface PullRequest {
  /** The bare origin every clone pushes to and fetches from. */
  origin: string;
  /** The developer's clone (notes set up, on the branch). */
  dev: Clone;
  branch: string;
  /** main before the branch, and the branch's last commit. */
  base: string;
  head: string;
  workflowId: string;
  /** Task names to ids. */
  tasks: Record<string, string>;
  files: string[];
  /** What `waymark blame` must say of a line, from its text (the model on the agent's lines). */
  expected: (text: string) => Who;
  model: string;
}

/** What the helper's edit hook receives from Claude Code for an Edit of `file`. */
function editHook(
  env: NodeJS.ProcessEnv,
  dir: string,
  transcript: string,
  file: string,
  before: string,
  oldString: string,
  newString: string,
) {
  const payload = {
    session_id: "merge-session",
    transcript_path: transcript,
    cwd: dir,
    hook_event_name: "PostToolUse",
    tool_name: "Edit",
    tool_input: { file_path: join(dir, file), old_string: oldString, new_string: newString },
    tool_response: {
      filePath: join(dir, file),
      oldString,
      newString,
      originalFile: before,
      structuredPatch: [],
      userModified: false,
      replaceAll: false,
    },
    tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`,
  };
  const run = spawnSync(SYSTEM_NODE, [BIN, "hook", "post-tool-use", "--agent", "claude"], {
    input: JSON.stringify(payload),
    encoding: "utf8",
    env: { ...process.env, ...env },
  });
  if (run.status !== 0) throw new Error(`hook: ${run.stderr}`);
}

export interface PullRequestOptions {
  /** Files the first task edits (1…). */
  files: number;
  /** Lines the person's commit between the tasks changes: one of the agent's and one of the start's per edit. */
  personEdits: number;
  /** XDG_CACHE_HOME of the helper and its hooks. */
  cacheHome: string;
}

/** Makes the origin, the developer's clone and the pull request's branch, recorded by the real helper, pushed with its notes. */
export async function pullRequest(target: McpTarget, options: PullRequestOptions): Promise<PullRequest> {
  const env = { XDG_CACHE_HOME: options.cacheHome };
  const origin = join(tempDir("waymark-origin-"), "origin.git");
  git(tempDir(), ["init", "-q", "--bare", "-b", "main", origin]);
  const dev = new Clone(join(tempDir("waymark-dev-"), "app"));
  git(tempDir(), ["clone", "-q", origin, dev.dir]);
  dev.git("config", "user.name", "Person");
  dev.git("config", "user.email", "person@example.com");
  dev.git("config", "commit.gpgsign", "false");
  const files = Array.from({ length: options.files }, (_, i) => `src/f${i}.ts`);
  files.forEach((file, i) => {
    dev.write(file, numbered(i, 30));
  });
  dev.commitAll("initial");
  dev.git("push", "-q", "origin", "main");
  const base = dev.git("rev-parse", "HEAD").trim();
  // As `waymark init` sets a repository up: notes follow rewrites, fetches bring them.
  const setup = waymark(dev.dir, ["notes", "setup"], env);
  if (setup.status !== 0) throw new Error(setup.stderr);
  const branch = "feature";
  dev.git("checkout", "-q", "-b", branch);

  const model = "claude-sonnet-4-5-20250929";
  const transcript = join(tempDir("waymark-home-"), "session.jsonl");
  mkdirSync(join(transcript, ".."), { recursive: true });
  writeFileSync(
    transcript,
    `${JSON.stringify({ type: "assistant", version: "2.1.328", sessionId: "merge-session", timestamp: new Date().toISOString(), message: { id: "m1", model, usage: { input_tokens: 10, output_tokens: 20 } } })}\n`,
  );
  const agent: Client = await connectThroughHelper(target, dev.dir, { cacheHome: options.cacheHome, quiet: true });
  const tool = async (name: string, args: Structured) => (await callTool(agent, name, args, { mustSucceed: true })).structured;
  const edit = (file: string, oldString: string, newString: string) => {
    const before = readFileSync(join(dev.dir, file), "utf8");
    if (!before.includes(oldString)) throw new Error(`${file} has no ${JSON.stringify(oldString)}`);
    dev.write(file, before.replace(oldString, newString));
    editHook(env, dev.dir, transcript, file, before, oldString, newString);
  };
  const person = (file: string, oldString: string, newString: string) => {
    const before = readFileSync(join(dev.dir, file), "utf8");
    if (!before.includes(oldString)) throw new Error(`${file} has no ${JSON.stringify(oldString)}`);
    dev.write(file, before.replace(oldString, newString));
  };
  const wf = (await tool("start_workflow", { name: `Merges ${Math.random().toString(36).slice(2)}` })) as { workflow_id: string };
  const tasks: Record<string, string> = {};

  // Task 1, two commits: the agent replaces a line of each file with two, a person edits a line
  // of the first file while the task runs (a hook sees the file change: "others"); then a second edit.
  tasks.t1 = ((await tool("start_task", { workflow_id: wf.workflow_id, name: "t1", goal: "g" })) as { task_id: string }).task_id;
  files.forEach((file, i) => {
    edit(file, `line ${i}.5\n`, `agent t1 ${i} a\nagent t1 ${i} b\n`);
  });
  person(files[0] as string, "line 0.20\n", "other 0.20 during t1\n");
  edit(files[0] as string, "line 0.3\n", "agent t1 0 c\n");
  dev.commitAll("t1: first part");
  files.forEach((file, i) => {
    edit(file, `line ${i}.10\n`, `agent t1 ${i} d\n`);
  });
  dev.commitAll("t1: second part");
  await tool("complete_task", { task_id: tasks.t1, status: "success", outcome: { summary: "done" }, metrics: { model } });

  // A person's commit between the tasks: per edit, one of the agent's lines and one of the start's.
  for (let k = 0; k < options.personEdits; k++) {
    const i = k % files.length;
    const file = files[i] as string;
    if (k < files.length) person(file, `agent t1 ${i} b\n`, `person changed ${i} b\n`);
    person(file, `line ${i}.${25 - Math.floor(k / files.length)}\n`, `person ${i} ${k}\n`);
  }
  if (options.personEdits > 0) dev.commitAll("a person's edits");

  // Task 2, one commit.
  tasks.t2 = ((await tool("start_task", { workflow_id: wf.workflow_id, name: "t2", goal: "g" })) as { task_id: string }).task_id;
  edit(files[0] as string, "line 0.15\n", "agent t2 0 a\nagent t2 0 b\n");
  dev.commitAll("t2: refine");
  await tool("complete_task", { task_id: tasks.t2, status: "success", outcome: { summary: "done" }, metrics: { model } });
  await agent.close();

  dev.git("push", "-q", "origin", branch);
  dev.git("push", "-q", "origin", "refs/notes/waymark");
  const head = dev.git("rev-parse", "HEAD").trim();
  const modelId = `anthropic/${model}`;
  const expected = (text: string): Who => {
    const agentLine = /^agent (t\d) /.exec(text);
    if (agentLine) return { who: "agent", task_id: tasks[agentLine[1] as string] as string, model_id: modelId };
    if (text.startsWith("other ")) return { who: "others", task_id: tasks.t1 as string };
    return { who: "not_recorded" };
  };
  return { origin, dev, branch, base, head, workflowId: wf.workflow_id, tasks, files, expected, model: modelId };
}

/** What a merge needs of a pull request: where it is, its branch and commits, and the developer's clone for a local rewrite. */
export type Mergeable = Pick<PullRequest, "origin" | "dev" | "branch" | "base" | "head" | "files">;

/** The same pull request in an origin and a developer's clone of their own, to merge it another way. */
export function copyPullRequest<T extends Mergeable>(pr: T): T {
  const origin = join(tempDir("waymark-origin-"), "origin.git");
  cpSync(pr.origin, origin, { recursive: true });
  const dev = new Clone(join(tempDir("waymark-dev-"), "app"));
  cpSync(pr.dev.dir, dev.dir, { recursive: true });
  dev.git("remote", "set-url", "origin", origin);
  return { ...pr, origin, dev };
}

/** A clone of the origin as a platform's server or a CI runner has it: no config of the developer's, the notes fetched. */
export function platformClone(origin: string): string {
  const dir = join(tempDir("waymark-platform-"), "repo");
  git(tempDir(), ["clone", "-q", "--no-local", origin, dir]);
  git(dir, ["fetch", "-q", "origin", "+refs/notes/waymark:refs/notes/waymark", "+refs/heads/*:refs/remotes/origin/*"]);
  return dir;
}

/** Moves main on the origin with an unrelated commit, so a rebase or a squash lands on something new. */
export function moveMain(origin: string): void {
  const dir = platformClone(origin);
  writeFileSync(join(dir, "README.md"), "unrelated\n");
  git(dir, ["add", "README.md"]);
  git(dir, ["commit", "-q", "-m", "unrelated work on main"]);
  git(dir, ["push", "-q", "origin", "main"]);
}

export type MergeKind = "merge-commit" | "squash" | "rebase" | "cherry-pick" | "amend" | "rebase-i";
export const MERGE_KINDS: readonly MergeKind[] = ["merge-commit", "squash", "rebase", "cherry-pick", "amend", "rebase-i"];

export interface Merged {
  /** What the CI step carries: the branch head as pushed for the merge, and main before and after it. */
  from: string;
  before: string;
  after: string;
}

/**
 * Merges the pull request into main on the origin, as `kind` does it. The local rewrites (amend,
 * rebase -i, each with a person's edit) happen in the developer's clone, whose notes config copies
 * the notes; the branch and its notes are pushed again, then merged with a merge commit.
 */
export function merge(pr: Mergeable, kind: MergeKind): Merged {
  moveMain(pr.origin);
  let from = pr.head;
  if (kind === "amend" || kind === "rebase-i") {
    const dev = pr.dev;
    const first = pr.files[0] as string;
    if (kind === "amend") {
      // The person amends the branch's last commit: a line of their own, and one of the agent's rewritten.
      const text = readFileSync(join(dev.dir, first), "utf8");
      dev.write(first, text.replace("agent t2 0 b\n", "person amended t2 b\n").replace("line 0.28\n", "person amended 0.28\n"));
      dev.git("commit", "-q", "-a", "--amend", "--no-edit");
    } else {
      // `git rebase -i` stopping at the branch's first commit, where the person edits it, then goes on.
      const editor = join(tempDir("waymark-editor-"), "edit-first.sh");
      writeFileSync(editor, "#!/bin/sh\nsed -i '1s/^pick/edit/' \"$1\"\n", { mode: 0o755 });
      git(dev.dir, ["rebase", "-q", "-i", pr.base], { GIT_SEQUENCE_EDITOR: editor });
      const text = readFileSync(join(dev.dir, first), "utf8");
      dev.write(first, text.replace("agent t1 0 c\n", "person rebased t1 c\n").replace("line 0.2\n", "person rebased 0.2\n"));
      dev.git("commit", "-q", "-a", "--amend", "--no-edit");
      git(dev.dir, ["rebase", "--continue"], { GIT_EDITOR: "true" });
    }
    dev.git("push", "-q", "--force", "origin", pr.branch);
    dev.git("push", "-q", "--force", "origin", "refs/notes/waymark");
    from = dev.git("rev-parse", "HEAD").trim();
  }
  const server = platformClone(pr.origin);
  const before = git(server, ["rev-parse", "origin/main"]).trim();
  git(server, ["checkout", "-q", "-B", "main", "origin/main"]);
  const branch = `origin/${pr.branch}`;
  switch (kind) {
    case "squash":
      git(server, ["merge", "-q", "--squash", branch]);
      git(server, ["commit", "-q", "-m", "Squashed pull request"]);
      break;
    case "rebase":
      git(server, ["checkout", "-q", "-B", "landing", branch]);
      git(server, ["rebase", "-q", "main"]);
      git(server, ["checkout", "-q", "main"]);
      git(server, ["merge", "-q", "--ff-only", "landing"]);
      break;
    case "cherry-pick":
      git(server, ["cherry-pick", `${pr.base}..${branch}`]);
      break;
    default:
      git(server, ["merge", "-q", "--no-ff", "-m", "Merge pull request", branch]);
  }
  git(server, ["push", "-q", "origin", "main"]);
  return { from, before, after: git(server, ["rev-parse", "HEAD"]).trim() };
}

/** The CI step after the merge, in a runner's fresh clone: carry, then push the notes. */
export function afterMerge(origin: string, merged: Merged, env: NodeJS.ProcessEnv): { stdout: string; clone: string } {
  const ci = platformClone(origin);
  const run = waymark(ci, ["notes", "carry", "--from", merged.from, "--onto", merged.after, "--since", merged.before], env);
  if (run.status !== 0) throw new Error(`waymark notes carry: ${run.stderr}`);
  git(ci, ["push", "-q", "origin", "refs/notes/waymark"]);
  return { stdout: run.stdout, clone: ci };
}

/** Every file's lines at `revision`, each with what blame says and what the text says it must. */
export function compare(
  dir: string,
  pr: PullRequest,
  revision: string,
  env: NodeJS.ProcessEnv,
): { file: string; text: string; got: Who; want: Who }[] {
  const out: { file: string; text: string; got: Who; want: Who }[] = [];
  for (const file of pr.files) {
    const texts = git(dir, ["show", `${revision}:${file}`])
      .split("\n")
      .slice(0, -1);
    const got = blameJson(dir, file, revision, env);
    texts.forEach((text, i) => {
      out.push({ file, text, got: got[i] as Who, want: pr.expected(text) });
    });
  }
  return out;
}
