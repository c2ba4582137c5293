/**
 * `waymark ci` as GitLab CI runs the documented job: the job is read from docs/pull-requests.md (what
 * a team copies), its `script:` lines run as the runner runs them (one bash script, `set -eo
 * pipefail`) in CI_PROJECT_DIR with a merge request pipeline's predefined variables and the job's
 * CI/CD variables; the helper comes from the endpoint through npx. The Code Quality artifact is
 * checked against GitLab's documented format (test/fixtures/gitlab), byte order mark included.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import schema from "../fixtures/gitlab/code-quality-report.schema.json";
import { runBash } from "../support/actions-runner";
import { type AgentPullRequest, agentPullRequest } from "../support/ci-scenario";
import type { DevServer } from "../support/dev-server";
import { sharedDevServer } from "../support/shared-server";

const DOCS = join(import.meta.dirname, "../../docs/pull-requests.md");
const OUTSIDE = "docs/outside.md";

let server: DevServer;
let pr: AgentPullRequest;
let readToken: string;

/** The GitLab job of the docs page (the YAML block that defines `waymark:`). */
function documentedJob(): {
  script: string[];
  variables: Record<string, string | number>;
  artifacts: { reports: { codequality: string }; paths: string[] };
} {
  const blocks = [...readFileSync(DOCS, "utf8").matchAll(/```yaml\n([\s\S]*?)```/g)].map(
    (m) => parse(m[1] ?? "") as Record<string, unknown>,
  );
  const job = blocks.find((block) => block && typeof block === "object" && "waymark" in block)?.waymark;
  if (!job) throw new Error("docs/pull-requests.md has no GitLab job named waymark");
  return job as ReturnType<typeof documentedJob>;
}

beforeAll(async () => {
  ensureBuilt();
  server = sharedDevServer();
  const response = await fetch(`${server.url}/api/tokens`, {
    method: "POST",
    headers: { Authorization: `Bearer ${server.token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "gitlab", scopes: ["read"] }),
  });
  readToken = String(((await response.json()) as { token: string }).token);
  pr = await agentPullRequest(server, { pull: 3, repository: "acme/shop", outside: OUTSIDE });
}, 180_000);
afterAll(() => cleanupTempDirs());

describe("waymark ci in GitLab CI, as the documented job", () => {
  it("reviews the merge request's range, writes a Code Quality report in GitLab's format and the summary, and fails on the policy", async () => {
    const job = documentedJob();
    expect(job.variables.GIT_DEPTH).toBe(0);
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !key.startsWith("npm_") && !key.startsWith("WAYMARK_") && !key.startsWith("GITHUB_")) env[key] = value;
    }
    // The job's script as the runner runs it: its lines in one bash script, failing on the first that fails.
    const run = await runBash(["-c", job.script.join("\n")], pr.workspace, {
      ...env,
      // GitLab's predefined variables of a merge request pipeline (not a merged results one).
      CI: "true",
      GITLAB_CI: "true",
      CI_PIPELINE_SOURCE: "merge_request_event",
      CI_PROJECT_DIR: pr.workspace,
      CI_PROJECT_PATH: "acme/shop",
      CI_COMMIT_SHA: pr.head,
      CI_MERGE_REQUEST_IID: "3",
      CI_MERGE_REQUEST_DIFF_BASE_SHA: pr.base,
      CI_MERGE_REQUEST_TARGET_BRANCH_NAME: "main",
      CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature",
      // The job's CI/CD variables.
      WAYMARK_URL: `${server.url}/mcp`,
      WAYMARK_TOKEN: readToken,
      GIT_DEPTH: String(job.variables.GIT_DEPTH),
      npm_config_cache: tempDir("waymark-npm-cache-"),
      npm_config_update_notifier: "false",
    });
    expect(run.stderr).not.toMatch(/ERR!/);
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(1);
    expect(run.stdout).not.toContain("origin has no Waymark notes");
    expect(run.stdout).toContain("waymark ci: 4 commit(s) from merge request !3; 3 task(s) in the record");
    expect(run.stdout).toContain("policy FAILED: 6 failure(s)");
    // The summary in the job's log and as the artifact.
    expect(run.stdout).toContain("## Waymark: the record of this pull request");
    const summary = join(pr.workspace, job.artifacts.paths[0] ?? "");
    expect(readFileSync(summary, "utf8")).toContain("| Records verified | 3 of 3 |");

    const reportFile = join(pr.workspace, job.artifacts.reports.codequality);
    expect(existsSync(reportFile)).toBe(true);
    const bytes = readFileSync(reportFile);
    expect([...bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    const report = JSON.parse(bytes.toString("utf8")) as {
      check_name: string;
      severity: string;
      location: { path: string; lines: { begin: number } };
      fingerprint: string;
    }[];
    const validate = new Ajv2020({ strict: false }).compile(schema);
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.find((issue) => issue.location.path === OUTSIDE)).toMatchObject({
      check_name: "waymark/within_areas",
      severity: "major",
      location: { path: OUTSIDE, lines: { begin: 1 } },
    });
    expect(
      report
        .filter((issue) => issue.check_name === "waymark/tests_after_last_edit")
        .map((issue) => issue.location.path)
        .sort(),
    ).toEqual(["docs/guide.md", "src/parse.ts", "test/parse.test.ts"]);
    // A fingerprint per finding: GitLab shows findings with one fingerprint as one.
    expect(new Set(report.map((issue) => issue.fingerprint)).size).toBe(report.length);
  }, 240_000);
});
