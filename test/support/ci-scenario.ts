/**
 * @module test/support/ci-scenario
 * A pull request as `waymark ci` meets it: an agent's branch made through the real helper in a real
 * repository with a bare origin (a task that also changes a file outside its areas, a task that
 * asks for review and logs an issue for a person, a task whose uncommitted work a person then
 * committed, no test run observed), the policy committed on
 * the base branch, the CI's clone checked out at the head with the whole history (actions/checkout
 * with fetch-depth: 0, GitLab's GIT_DEPTH: 0), and GitHub's documented `pull_request` payload
 * (test/fixtures/github) for it. The tasks' notes (refs/notes/waymark) are pushed to the origin.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Repo, tempDir } from "../../client-helper/test/fixtures";
import { connectThroughHelper } from "./agents";
import type { DevServer } from "./dev-server";
import { ok, type Structured } from "./mcp-client";

export interface AgentPullRequest {
  base: string;
  head: string;
  /** The CI's clone, at the head. */
  workspace: string;
  /** GitHub's pull_request event for it. */
  event: string;
  parser: string;
  tests: string;
  /** A task whose work a person committed after it (no commit of its own). */
  docs: string;
  workflow: string;
}

/** The branch an agent works on through the helper: a task that also changes a file outside its areas, and a task that asks for review. */
export async function agentPullRequest(
  server: DevServer,
  options: { pull: number; repository: string; outside: string },
): Promise<AgentPullRequest> {
  const OUTSIDE = options.outside;
  const origin = tempDir("waymark-origin-");
  spawnSync("git", ["init", "-q", "--bare", "-b", "main", origin]);
  const repo = Repo.init();
  repo
    .write("src/parse.ts", "export const parse = (s: string) => s;\n")
    .write(
      ".waymark/policy.yml",
      "# what fails this repository's pull requests\nversion: 1\nrules:\n  verified: true\n  within_areas: true\n  tests_after_last_edit: true\n  reviews_answered: true\n",
    )
    .commitAll("initial");
  repo.git("remote", "add", "origin", origin);
  repo.git("push", "-q", "origin", "main");
  const base = repo.git("rev-parse", "HEAD").trim();
  repo.git("checkout", "-q", "-b", "feature");
  const agent = await connectThroughHelper(server, repo.dir, { cacheHome: tempDir("waymark-cache-") });
  const tool = (name: string, args: Structured) => ok(agent, name, args);
  const { workflow_id } = (await tool("start_workflow", { name: "Parser rewrite" })) as { workflow_id: string };
  const parser = String((await tool("start_task", { workflow_id, name: "Parser", goal: "parse numbers", areas: ["src"] })).task_id);
  repo.write("src/parse.ts", "export const parse = (s: string) => Number(s);\nexport const ok = true;\n").commitAll("Parse numbers");
  repo.write(OUTSIDE, "notes\n").commitAll("Notes");
  await tool("complete_task", { task_id: parser, status: "success", outcome: { summary: "numbers parse" } });
  const tests = String((await tool("start_task", { workflow_id, name: "Tests", goal: "cover parse", areas: ["test"] })).task_id);
  await tool("log_issue", {
    task_id: tests,
    type: "bug_encountered",
    description: "one case skipped",
    resolution: "left for a person",
    requires_human_review: true,
  });
  repo.write("test/parse.test.ts", "test('parse', () => {});\n").commitAll("Test parse");
  await tool("complete_task", {
    task_id: tests,
    status: "success",
    outcome: { summary: "covered", manual_review_needed: true, manual_review_reason: "check the skipped case" },
  });
  // A task that leaves its work uncommitted; a person commits it afterwards (no commit of the task's own).
  const docs = String((await tool("start_task", { workflow_id, name: "Docs", goal: "document parse", areas: ["docs"] })).task_id);
  repo.write("docs/guide.md", "# parse\n");
  await tool("complete_task", { task_id: docs, status: "success", outcome: { summary: "documented" } });
  repo.commitAll("Commit the agent's docs");
  await agent.close();
  repo.git("push", "-q", "origin", "feature");
  // The helper attached each task's record to its commits as notes; they travel with a push of their ref.
  repo.git("push", "-q", "origin", "refs/notes/waymark");
  const head = repo.git("rev-parse", "HEAD").trim();
  const workspace = checkout(origin, head);
  const eventFile = pullRequestEvent({ ...options, base, head });
  return { base, head, workspace, event: eventFile, parser, tests, docs, workflow: workflow_id };
}

/**
 * actions/checkout with fetch-depth: 0: a clone of the whole history into the workspace (an empty
 * directory), at `ref`: a branch of the origin checked out as that branch, anything else detached.
 */
export function checkout(origin: string, ref: string, workspace = tempDir("waymark-workspace-")): string {
  spawnSync("git", ["clone", "-q", "--no-tags", origin, workspace]);
  const isBranch = spawnSync("git", ["-C", workspace, "rev-parse", "-q", "--verify", `refs/remotes/origin/${ref}`]).status === 0;
  const args = isBranch ? ["checkout", "-q", "-B", ref, `refs/remotes/origin/${ref}`] : ["checkout", "-q", "--detach", ref];
  const run = spawnSync("git", ["-C", workspace, ...args], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`checkout ${ref}: ${run.stderr}`);
  return workspace;
}

/**
 * GitHub's documented `pull_request` payload (test/fixtures/github) for pull request `pull` of
 * `repository` from `head` onto `base` (commits; `refs`: their branches' names), written to a file
 * as the runner writes GITHUB_EVENT_PATH; `mergeCommit`: the `closed` event of its merge, with the
 * commit the merge made (`merge_commit_sha`).
 */
export function pullRequestEvent(options: {
  pull: number;
  repository: string;
  base: string;
  head: string;
  refs?: { base: string; head: string };
  mergeCommit?: string;
}): string {
  const event = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/github/pull_request.synchronize.json"), "utf8"));
  const pr = event.pull_request;
  event.number = options.pull;
  pr.number = options.pull;
  pr.base.sha = options.base;
  pr.head.sha = options.head;
  if (options.refs) {
    pr.base.ref = options.refs.base;
    pr.head.ref = options.refs.head;
  }
  event.repository.full_name = options.repository;
  if (options.mergeCommit) {
    event.action = "closed";
    pr.state = "closed";
    pr.merged = true;
    pr.merged_at = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    pr.closed_at = pr.merged_at;
    pr.merge_commit_sha = options.mergeCommit;
  }
  const file = join(tempDir("waymark-event-"), "event.json");
  writeFileSync(file, JSON.stringify(event));
  return file;
}
