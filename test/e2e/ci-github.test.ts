/**
 * `waymark ci` as GitHub Actions runs it: an agent's pull request made through the real helper in a
 * real repository with a bare origin, the clone checked out as actions/checkout does (whole
 * history), a real-format `pull_request` event in GITHUB_EVENT_PATH (GitHub's documented payload,
 * its commits and number set), and the repository's action.yml run step by step as the runner runs
 * a composite action (tests/support/actions-runner.ts): the helper comes from the endpoint's
 * /helper/latest through npx. What the job leaves is read the way GitHub reads it: the step summary,
 * the workflow commands on stdout (annotations), GITHUB_OUTPUT in its delimiter syntax, and the
 * sticky comment through a local server that answers as GitHub's published REST description says.
 * The plain npx form and an unreachable endpoint are run too.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMENT_MARKER } from "../../client-helper/src/ci/sticky-comment";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { BIN, ensureBuilt, SYSTEM_NODE } from "../../client-helper/test/support";
import { type ActionRun, runnerEnv as actionsRunnerEnv, parseOutputFile, runCompositeAction } from "../support/actions-runner";
import { type AgentPullRequest, agentPullRequest } from "../support/ci-scenario";
import type { DevServer } from "../support/dev-server";
import { type GithubApi, startGithubApi } from "../support/github-api";
import { checkWorkflow } from "../support/readme-workflows";
import { sharedDevServer } from "../support/shared-server";

const ACTION = join(import.meta.dirname, "../../action.yml");
const REPOSITORY = "acme/shop";
const PULL = 7;
const GITHUB_TOKEN = "ghs_test-token-of-the-job-0123456789";
const OUTSIDE = "docs/a,b:c%.md";

let server: DevServer;
let readToken: string;
let adminOnlyToken: string;
let api: GithubApi;
let npmCache: string;
let pr: AgentPullRequest;

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as Record<string, unknown>;
}

/** The environment the runner gives a job's steps. */
function runnerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return actionsRunnerEnv({ eventName: "pull_request", eventPath: pr.event, repository: REPOSITORY, apiUrl: api.url, npmCache }, extra);
}

/**
 * The workflow file a team copies (README.md's "In your pull requests", the same block as
 * docs/pull-requests.md): its steps, and the inputs its Waymark step gives the action, with the
 * secrets it names.
 */
function documentedWorkflow(secrets: Record<string, string>) {
  const documented = checkWorkflow(secrets);
  expect(documented, "README.md has the workflow file").toBeDefined();
  expect(checkWorkflow(secrets, "docs/pull-requests.md")?.text).toBe(documented?.text);
  const { workflow, inputs } = documented as NonNullable<typeof documented>;
  return { workflow, steps: workflow.jobs.record.steps, inputs };
}

function runAction(inputs: Record<string, string>): Promise<ActionRun> {
  return runCompositeAction(ACTION, { inputs, env: runnerEnv(), workspace: pr.workspace, githubToken: GITHUB_TOKEN });
}

/** The workflow commands a step printed: ::kind properties::message, decoded as the runner decodes them. */
function annotations(stdout: string) {
  const decode = (text: string) =>
    text.replace(/%2C/g, ",").replace(/%3A/g, ":").replace(/%0A/g, "\n").replace(/%0D/g, "\r").replace(/%25/g, "%");
  return [...stdout.matchAll(/^::(error|warning|notice) ([^:]*)::(.*)$/gm)].map((match) => ({
    kind: match[1],
    raw: match[2] ?? "",
    properties: Object.fromEntries(
      (match[2] ?? "").split(",").map((p) => [p.slice(0, p.indexOf("=")), decode(p.slice(p.indexOf("=") + 1))]),
    ),
    message: decode(match[3] ?? ""),
  }));
}

beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
  readToken = String((await post("/api/tokens", { name: "ci", scopes: ["read"] })).token);
  adminOnlyToken = String((await post("/api/tokens", { name: "no-read", scopes: ["admin"] })).token);
  npmCache = tempDir("waymark-npm-cache-");
  api = await startGithubApi({ repository: REPOSITORY, pull: PULL, token: GITHUB_TOKEN, others: 150 });
  pr = await agentPullRequest(server, { pull: PULL, repository: REPOSITORY, outside: OUTSIDE });
}, 180_000);
afterAll(async () => {
  await api?.close();
  cleanupTempDirs();
});

describe("waymark ci in GitHub Actions, through the repository's action.yml", () => {
  let first: ActionRun;

  let inputs: Record<string, string>;

  beforeAll(async () => {
    inputs = documentedWorkflow({ WAYMARK_URL: server.url, WAYMARK_TOKEN: readToken }).inputs;
    first = await runAction(inputs);
  }, 300_000);

  it("is the workflow the README gives: on pull_request, the whole history checked out, this action with its inputs", () => {
    const { workflow, steps } = documentedWorkflow({});
    expect(workflow.on).toBe("pull_request");
    expect(workflow.permissions["pull-requests"]).toBe("write");
    expect(steps[0]).toMatchObject({ uses: "actions/checkout@v4", with: { "fetch-depth": 0 } });
    expect(inputs).toEqual({ endpoint: server.url, token: readToken, comment: "true" });
  });

  it("fetches the notes, then runs the helper from the endpoint and fails the job on the policy", () => {
    const [notes, ci] = first.steps;
    expect(notes?.status, notes?.stderr).toBe(0);
    expect(notes?.stdout).not.toContain("origin has no Waymark notes");
    expect(spawnSync("git", ["-C", pr.workspace, "rev-parse", "--verify", "-q", "refs/notes/waymark"]).status).toBe(0);
    expect(ci?.stderr).not.toMatch(/ERR!/);
    expect(ci?.status, `${ci?.stdout}\n${ci?.stderr}`).toBe(1);
    expect(first.status).toBe(1);
  });

  it("writes the job summary: the rollup, the policy's failures, and the workflow's pull-request summary", () => {
    const summary = first.summary;
    expect(summary).toContain("## Waymark: the record of this pull request");
    expect(summary, JSON.stringify(first.steps[1]?.stdout)).toMatch(
      /Read from `http:\/\/127\.0\.0\.1:\d+` · 4 commits in the range, 3 recorded by a task\./,
    );
    expect(summary).toContain("| Tasks | 3 |");
    // The task whose uncommitted work a person committed, found through the path index.
    expect(summary).toContain(`| Docs (\`${pr.docs}\`) | success |`);
    expect(summary).toContain("| Records verified | 3 of 3 |");
    expect(summary).toContain("| Outside declared areas | **1 file** |");
    expect(summary).toContain("| Tests | 0 of 3 tasks that changed files had a test run observed passing after their last edit |");
    expect(summary).toContain("| Open review items | **2** |");
    expect(summary).toContain("**Policy failed** (`.waymark/policy.yml`): 6 failures");
    expect(summary).toContain(
      `- **within_areas** · task Parser (\`${pr.parser}\`), \`${OUTSIDE}\`: changed outside the areas the task declared.`,
    );
    expect(summary).toContain("- **reviews_answered** · task Tests");
    expect(summary).not.toContain("**verified**");
    expect(summary).toContain(`<details><summary>Workflow Parser rewrite (<code>${pr.workflow}</code>)</summary>`);
    expect(summary).toContain("#### 1 Parser — ✅ success");
    // The repository's Insights (docs/insights.md): its three tasks, each figure withheld below the minimum and saying so.
    expect(summary).toContain("### This repository, last 30 days (Waymark Insights)");
    expect(summary).toMatch(/^All agents: 3 tasks; called successful: not shown \(fewer than 5 tasks \(3\)\); /m);
    expect(summary).toMatch(/^- agent not reported · model not reported: 3 tasks; /m);
    expect(summary).toMatch(/\[the Insights page\]\(http:\/\/127\.0\.0\.1:\d+\/dashboard\/insights\?days=30&repository=[0-9a-f]{64}\)/);
  });

  it("annotates the changed lines, escaping file names as the runner reads them", () => {
    const found = annotations(first.steps[1]?.stdout ?? "");
    const outside = found.find((a) => a.properties.title?.startsWith("Waymark policy: within_areas"));
    expect(outside?.kind).toBe("error");
    expect(outside?.raw).toContain("file=docs/a%2Cb%3Ac%25.md,line=1,");
    expect(outside?.properties.file).toBe(OUTSIDE);
    expect(outside?.message).toContain("changed outside the areas the task declared. To satisfy it:");
    const tests = found.filter((a) => a.properties.title?.startsWith("Waymark policy: tests_after_last_edit"));
    expect(tests.map((a) => a.properties.file).sort()).toEqual(["docs/guide.md", "src/parse.ts", "test/parse.test.ts"]);
    // The lines the pull request changed in that file.
    expect(tests.find((a) => a.properties.file === "src/parse.ts")?.properties).toMatchObject({ line: "1", endLine: "2" });
  });

  it("sets the job's outputs in GitHub's delimiter syntax, multiline values included", () => {
    const outputs = first.outputs;
    expect(outputs).toMatchObject({
      result: "failed",
      tasks: "3",
      failures: "6",
      tests_passed: "0/3",
      outside_areas: "1",
      unverified: "0",
      endpoint: "reachable",
    });
    expect(outputs.failure_list?.split("\n")).toHaveLength(6);
    expect(outputs.failure_list).toContain(
      `within_areas: task Parser (${pr.parser}), ${OUTSIDE}: changed outside the areas the task declared.`,
    );
    expect(first.steps[1]?.outputs.agent_share).toBe(outputs.agent_share);
  });

  it("keeps one pull-request comment: created on the first run, found on a later page and updated in place on the next", async () => {
    expect(api.invalid).toEqual([]);
    const mine = () => api.comments.filter((comment) => comment.body.startsWith(COMMENT_MARKER));
    expect(mine(), `${first.steps[1]?.stdout}\n${first.steps[1]?.stderr}`).toHaveLength(1);
    const created = mine()[0];
    expect(created?.body).toContain("## Waymark: the record of this pull request");
    expect(api.requests.map((r) => `${r.method} ${r.status}`)).toEqual(["GET 200", "GET 200", "POST 201"]);
    expect(api.requests[0]?.path).toBe(`/repos/${REPOSITORY}/issues/${PULL}/comments?per_page=100`);

    api.requests.length = 0;
    const second = await runAction(inputs);
    expect(second.status).toBe(1);
    expect(api.invalid).toEqual([]);
    expect(api.requests.map((r) => `${r.operation} ${r.status}`)).toEqual([
      "issues/list-comments 200",
      "issues/list-comments 200",
      "issues/update-comment 200",
    ]);
    expect(api.requests[2]?.path).toBe(`/repos/${REPOSITORY}/issues/comments/${created?.id}`);
    expect(mine()).toHaveLength(1);
    expect(api.comments).toHaveLength(151);
  }, 300_000);
});

describe("waymark ci as a plain step", () => {
  const plain = (args: string[], extra: Record<string, string>) => {
    const outputs = join(tempDir("waymark-gh-"), "output");
    const summary = join(tempDir("waymark-gh-"), "summary");
    writeFileSync(outputs, "");
    writeFileSync(summary, "");
    const run = spawnSync(SYSTEM_NODE, [BIN, "ci", ...args], {
      cwd: pr.workspace,
      env: runnerEnv({ GITHUB_WORKSPACE: pr.workspace, GITHUB_OUTPUT: outputs, GITHUB_STEP_SUMMARY: summary, ...extra }),
      encoding: "utf8",
    });
    return { ...run, outputs: parseOutputFile(readFileSync(outputs, "utf8")), summary: readFileSync(summary, "utf8") };
  };

  it("the npx form gives the same verdict", () => {
    const run = spawnSync("npx", ["-y", `--package=${server.url}/helper/latest`, "waymark", "ci", "--json"], {
      cwd: pr.workspace,
      env: runnerEnv({ GITHUB_WORKSPACE: pr.workspace, WAYMARK_URL: server.url, WAYMARK_TOKEN: readToken }),
      encoding: "utf8",
      timeout: 170_000,
    });
    expect(run.status, run.stderr).toBe(1);
    const json = JSON.parse(run.stdout.slice(run.stdout.indexOf("{\n"))) as {
      result: string;
      failures: unknown[];
      rollup: { tasks: number };
    };
    expect(json).toMatchObject({ result: "failed", rollup: { tasks: 3 } });
    expect(json.failures).toHaveLength(6);
  }, 180_000);

  it("with the endpoint unreachable it works from the notes alone and says so; `verified` fails, a check that did not run", () => {
    const run = plain([], { WAYMARK_URL: "http://127.0.0.1:9", WAYMARK_TOKEN: readToken });
    expect(run.status, run.stderr).toBe(1);
    expect(run.summary).toContain(
      "**The endpoint was not reachable (http:⁠//127.0.0.1:9: fetch failed): this report is from the repository's notes alone**",
    );
    // The tasks, their files and who wrote their lines, from the notes the checkout fetched.
    expect(run.outputs).toMatchObject({ result: "failed", endpoint: "unreachable", tasks: "2", unverified: "2" });
    expect(run.summary).toContain(`| Parser (\`${pr.parser}\`) | in the notes |`);
    expect(run.summary).toContain(`| Tests (\`${pr.tests}\`) | in the notes |`);
    expect(run.outputs.failure_list).toContain("verified: pull request: the record could not be read, so nothing was verified");
  });

  it("a token without the read scope is refused by the endpoint, and the report says which token to give", () => {
    const run = plain([], { WAYMARK_URL: server.url, WAYMARK_TOKEN: adminOnlyToken });
    expect(run.outputs.endpoint).toBe("unreachable");
    expect(run.summary).toContain("answered HTTP 403: set WAYMARK_TOKEN to a token with the read scope");
  });

  it("without a policy file it reports and never fails", () => {
    const run = plain(["--policy", "/dev/null"], { WAYMARK_URL: server.url, WAYMARK_TOKEN: readToken });
    expect(run.stderr).toContain("is empty");
    expect(run.status).toBe(2);
    const none = plain([], { WAYMARK_URL: server.url, WAYMARK_TOKEN: readToken });
    expect(none.status).toBe(1);
    const policy = join(pr.workspace, ".waymark/policy.yml");
    const kept = readFileSync(policy);
    rmSync(policy);
    try {
      const report = plain([], { WAYMARK_URL: server.url, WAYMARK_TOKEN: readToken });
      expect(report.status, report.stderr).toBe(0);
      expect(report.outputs.result).toBe("report");
      expect(report.summary).toContain("No policy file (`.waymark/policy.yml`): this job reports and does not fail.");
      // Findings are still shown, as warnings.
      expect(annotations(report.stdout).find((a) => a.properties.file === OUTSIDE)?.kind).toBe("warning");
    } finally {
      writeFileSync(policy, kept);
    }
  });
});
