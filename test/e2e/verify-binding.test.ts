/**
 * Whose record an export is: on one shared deployment (a real `wrangler dev`), team A works in its
 * repository through the real helper, and another account, B, records a workflow in a clone of it,
 * so its export names A's repository. The statement the deployment signs names the account (a
 * digest of its name) and the deployment's origin; `waymark verify` prints both, and
 * `--account`/`--origin` refuse an export that is not the record of that account on that
 * deployment, where before nothing said whose it was.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { accountDigest } from "@waymark/protocol/statement";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, Repo, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { connectThroughHelper } from "../support/agents";
import type { DevServer } from "../support/dev-server";
import { ok } from "../support/mcp-client";
import { sharedDevServer } from "../support/shared-server";

type Server = DevServer & { account: string };
let teamA: Server;
let teamB: Server;
let cacheHome: string;
let dir: string;

beforeAll(() => {
  ensureBuilt();
  teamA = sharedDevServer();
  teamB = sharedDevServer();
  cacheHome = tempDir("waymark-cache-");
  dir = tempDir("waymark-binding-");
});
afterAll(cleanupTempDirs);

const verify = (...args: string[]) => {
  const run = spawnSync(SYSTEM_NODE, [BIN, "verify", ...args], { encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
};

/** A workflow with one task through the real helper in `repo`, as `server`'s account; its JSON export saved. */
async function exportOf(server: Server, repo: string, name: string): Promise<{ file: string; fingerprint: string }> {
  const agent = await connectThroughHelper(server, repo, { cacheHome });
  const { workflow_id } = (await ok(agent, "start_workflow", { name })) as { workflow_id: string };
  const { task_id } = (await ok(agent, "start_task", { workflow_id, name: "Work", goal: "g" })) as { task_id: string };
  await ok(agent, "complete_task", { task_id, status: "success", outcome: { summary: "done" } });
  await agent.close();
  const response = await fetch(`${server.url}/api/workflows/${workflow_id}/export.json`, {
    headers: { Authorization: `Bearer ${server.token}` },
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  const file = join(dir, `${name.replace(/\W+/g, "-")}.json`);
  writeFileSync(file, text);
  return {
    file,
    fingerprint: String((JSON.parse(text) as { workflow: { repository: { fingerprint: string } } }).workflow.repository.fingerprint),
  };
}

describe("whose record an export is", () => {
  it("names the account and the deployment, and --account/--origin refuse another account's record of the same repository", async () => {
    const remote = "https://github.com/team-a/app.git";
    const repo = Repo.init().write("README.md", "team A\n").commitAll("initial");
    repo.git("remote", "add", "origin", remote);
    const ours = await exportOf(teamA, repo.dir, "Team A's work");
    const clone = tempDir("waymark-clone-");
    execFileSync("git", ["clone", "-q", repo.dir, clone]);
    execFileSync("git", ["remote", "set-url", "origin", remote], { cwd: clone });
    const theirs = await exportOf(teamB, clone, "Not team A's work");
    // Both name team A's repository: the repository alone does not say whose record it is.
    expect(theirs.fingerprint).toBe(ours.fingerprint);

    const printed = verify(theirs.file, "--endpoint", teamB.url);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(`record of: account ${accountDigest(teamB.account)}, issued by ${teamB.url}`);

    const refused = verify(theirs.file, "--endpoint", teamB.url, "--account", teamA.account);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `statement: the record of account ${accountDigest(teamB.account)}, not of --account ${teamA.account} (${accountDigest(teamA.account)}): it is another account's`,
    );
    expect(verify(ours.file, "--endpoint", teamA.url, "--account", teamA.account).code).toBe(0);
    expect(verify(ours.file, "--endpoint", teamA.url, "--account", accountDigest(teamA.account)).code).toBe(0);

    const elsewhere = verify(ours.file, "--endpoint", teamA.url, "--origin", "https://waymark.example.com");
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`statement: issued by ${teamA.url}, not by --origin https://waymark.example.com`);
    expect(verify(ours.file, "--endpoint", teamA.url, "--origin", `${teamA.url}/`).code).toBe(0);
  }, 120_000);
});
