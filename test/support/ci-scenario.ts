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
  // actions/checkout with fetch-depth: 0, at the pull request's head.
  const workspace = tempDir("waymark-workspace-");
  spawnSync("git", ["clone", "-q", "--no-tags", origin, workspace]);
  spawnSync("git", ["-C", workspace, "checkout", "-q", "--detach", head]);
  // GitHub's documented pull_request payload, for this pull request.
  const event = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/github/pull_request.synchronize.json"), "utf8"));
  event.number = options.pull;
  event.pull_request.number = options.pull;
  event.pull_request.base.sha = base;
  event.pull_request.head.sha = head;
  event.repository.full_name = options.repository;
  const eventFile = join(tempDir("waymark-event-"), "event.json");
  writeFileSync(eventFile, JSON.stringify(event));
  return { base, head, workspace, event: eventFile, parser, tests, docs, workflow: workflow_id };
}
