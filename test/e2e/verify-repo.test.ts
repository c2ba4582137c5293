/**
 * `waymark verify --repo` decides every task or fails, as a reviewer relies on it: a real `wrangler
 * dev`, real git repositories, the export downloaded with the account's token and checked with the
 * real CLI. The attacks replayed: an export that hides two committed files while claiming an
 * unrelated file was dirty at the task's start (it used to pass as "git agrees", undecided); a
 * task whose commit was amended away, still in the object store (it used to "agree"); notes that
 * name another chain head, or other bytes, than git and the export hold.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Repo, tempDir } from "../../client-helper/test/fixtures";
import { connectThroughHelper } from "../support/agents";
import { connect, ok } from "../support/mcp-client";
import { git, waymark } from "../support/merge-scenario";
import { scenarioServer } from "../support/scenario-server";

const scenario = scenarioServer();

const env = () => ({ XDG_CACHE_HOME: scenario.cacheHome() });

async function exportFile(workflowId: string): Promise<string> {
  const response = await fetch(`${scenario.server().url}/api/workflows/${workflowId}/export.json`, {
    headers: { Authorization: `Bearer ${scenario.server().token}` },
  });
  expect(response.status).toBe(200);
  const file = join(tempDir("waymark-export-"), "export.json");
  writeFileSync(file, await response.text());
  return file;
}

/** One task through the real helper: `work` changes and commits the repository while it is open. */
async function helperTask(repo: Repo, work: () => void): Promise<{ workflowId: string; taskId: string }> {
  const agent = await connectThroughHelper(scenario.server(), repo.dir, { cacheHome: scenario.cacheHome(), quiet: true });
  const { workflow_id } = await ok<{ workflow_id: string }>(agent, "start_workflow", {
    name: `Verify ${Math.random().toString(36).slice(2)}`,
  });
  const { task_id } = await ok<{ task_id: string }>(agent, "start_task", { workflow_id, name: "Work", goal: "g" });
  work();
  await ok(agent, "complete_task", { task_id, status: "success", outcome: { summary: "done" } });
  await agent.close();
  return { workflowId: workflow_id, taskId: task_id };
}

describe("verify --repo decides every task or fails", () => {
  it("refuses an export that hides two committed files while claiming an unrelated file was dirty at the start", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("initial");
    const start = repo.git("rev-parse", "HEAD").trim();
    // A client that is not the helper reports what it likes: a dirty file at the start that has
    // nothing to do with the change, and, at the end, no file at all.
    const client = await connect(scenario.server());
    const { workflow_id } = await ok<{ workflow_id: string }>(client, "start_workflow", { name: "Hidden files" });
    const repository = { fingerprint: "9".repeat(64), remote: null, branch: "main" };
    const dirty = [{ path: "unrelated.txt", head: null, worktree: { mode: "100644", blob: "e".repeat(40) } }];
    const { task_id } = await ok<{ task_id: string }>(client, "start_task", {
      workflow_id,
      name: "Innocent",
      goal: "g",
      snapshot: { type: "git", head: start, branch: "main", dirty, repository },
    });
    repo.write("secret/one.ts", "1\n").write("secret/two.ts", "2\n").commitAll("two files");
    const end = repo.git("rev-parse", "HEAD").trim();
    await ok(client, "complete_task", {
      task_id,
      status: "success",
      outcome: { summary: "changed nothing" },
      changes: { type: "git", start_head: start, head: end, committed: [], dirty },
    });
    const file = await exportFile(workflow_id);
    const run = waymark(repo.dir, ["verify", file, "--endpoint", scenario.server().url, "--repo", repo.dir], env());
    // Before the record named the dirty paths, both hidden files were "undecided" and the task "agrees".
    expect(run.status, run.stdout).toBe(1);
    expect(run.stderr).toContain(`${task_id} "Innocent": DIFFERS from git`);
    expect(run.stderr).toContain(
      `secret/one.ts: git shows it added between ${start.slice(0, 12)} and ${end.slice(0, 12)}, the record does not list it`,
    );
    expect(run.stderr).toContain("secret/two.ts: git shows it added between");
    expect(run.stdout).not.toContain("agrees");
  });

  it("a task whose commit was amended fails as rewritten without notes to follow it, and is mapped with them", async () => {
    const plain = Repo.init().write("a.txt", "a\n").commitAll("initial");
    const task = await helperTask(plain, () => {
      plain.write("a.txt", "a\nb\n").commitAll("add b");
    });
    // The commit is amended: still in the object store (the reflog holds it), no longer on HEAD.
    plain.write("a.txt", "a\nb\nc\n").git("commit", "-q", "-a", "--amend", "-m", "add b and c");
    const file = await exportFile(task.workflowId);
    const run = waymark(plain.dir, ["verify", file, "--endpoint", scenario.server().url, "--repo", plain.dir], env());
    expect(run.status, run.stdout).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `${task.taskId} "Work": FAILED: rewritten: commit [0-9a-f]{12} is in this repository but not on HEAD, and no commit on HEAD holds the task's record`,
      ),
    );
    expect(`${run.stdout}${run.stderr}`).not.toContain(": agrees");

    // With the notes set up as `waymark init` sets them, the amend copies the record to the new commit.
    const followed = Repo.init().write("a.txt", "a\n").commitAll("initial");
    expect(waymark(followed.dir, ["notes", "setup"], env()).status).toBe(0);
    const second = await helperTask(followed, () => {
      followed.write("a.txt", "a\nb\n").commitAll("add b");
    });
    followed.write("a.txt", "a\nb\nc\n").git("commit", "-q", "-a", "--amend", "-m", "add b and c");
    const mapped = waymark(
      followed.dir,
      ["verify", await exportFile(second.workflowId), "--endpoint", scenario.server().url, "--repo", followed.dir],
      env(),
    );
    expect(mapped.status, mapped.stderr).toBe(0);
    expect(mapped.stdout).toMatch(
      new RegExp(`${second.taskId} "Work": rewritten: commit [0-9a-f]{12} is in this repository but not on HEAD`),
    );
    expect(mapped.stdout).toMatch(/on the branch: [0-9a-f]{12} → [0-9a-f]{12} \(copied by git's rewrite\)/);
  });

  it("refuses notes that name another chain head than the export, or other bytes than git holds", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("initial");
    const task = await helperTask(repo, () => {
      repo.write("a.txt", "a\nb\nc\n").commitAll("add b and c");
    });
    const head = repo.git("rev-parse", "HEAD").trim();
    const file = await exportFile(task.workflowId);
    const genuine = waymark(repo.dir, ["verify", file, "--endpoint", scenario.server().url, "--repo", repo.dir], env());
    expect(genuine.status, genuine.stderr).toBe(0);
    expect(genuine.stdout).toContain("as the export's events do");
    const note = repo.git("notes", "--ref=waymark", "show", head);
    type Range = { start_line: number; end_line: number; content_hash: string };
    const entry = JSON.parse(note.trim()) as { checkpoint: { head: string }; not_observed: { path: string; ranges: Range[] }[] };
    // No hook observed this task: its lines are the ones no hook observed, named with their hashes.
    expect(entry.not_observed).toEqual([
      { path: "a.txt", ranges: [{ start_line: 2, end_line: 3, content_hash: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) }] },
    ]);
    // Another chain head: the note is not this record's.
    const forged = structuredClone(entry);
    forged.checkpoint.head = "0".repeat(64);
    git(repo.dir, ["notes", "--ref=waymark", "add", "-f", "-m", JSON.stringify(forged), head]);
    const headRun = waymark(repo.dir, ["verify", file, "--endpoint", scenario.server().url, "--repo", repo.dir], env());
    expect(headRun.status).toBe(1);
    expect(headRun.stderr).toContain(`names chain head ${"0".repeat(12)} at event`);
    expect(headRun.stderr).toContain("the note is not this record's");
    // Other bytes: a range's hash git's content does not have.
    const lying = structuredClone(entry);
    (lying.not_observed[0]?.ranges[0] as Range).content_hash = "sha256:0123456789abcdef";
    git(repo.dir, ["notes", "--ref=waymark", "add", "-f", "-m", JSON.stringify(lying), head]);
    const bytesRun = waymark(repo.dir, ["verify", "--repo", repo.dir], env());
    expect(bytesRun.status).toBe(1);
    expect(bytesRun.stderr).toContain("are not the bytes the note's range");
  });
});
