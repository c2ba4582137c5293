/**
 * @module ci/platform
 * Where `waymark ci` runs and what it reviews, from the CI's own environment: on GitHub Actions the
 * event the workflow was triggered by (GITHUB_EVENT_PATH: a `pull_request` event's base and head
 * commits and number; a push's before and after), on GitLab CI a merge request pipeline's predefined
 * variables (CI_MERGE_REQUEST_DIFF_BASE_SHA and the source branch's commit), elsewhere `--base` and
 * `--head`. Flags given override what the environment says. Nothing here runs git or the network.
 */
import { readFile, stat } from "node:fs/promises";

export type Platform = "github" | "gitlab" | "local";

export interface CiTarget {
  platform: Platform;
  /** The commit the pull request starts from (its merge base, or the base branch's commit), and its last commit (a flag may name a revision: git resolves it). */
  base: string;
  head: string;
  /** GitHub: "owner/repo" and the pull request's number (null: not a pull request, no comment). */
  repository: string | null;
  pull_request: number | null;
  /** Where each side's values came from, for the report. */
  source: string;
}

/** A problem with what the CI or the flags said; the message names the variable or flag and the rule. */
export class CiSetupError extends Error {}

/** GitHub's event payloads reach 25 MB; a pull_request event is tens of KiB. */
const EVENT_MAX_BYTES = 8 * 1024 * 1024;
const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

function commitOf(value: unknown, where: string): string {
  if (typeof value !== "string" || !COMMIT.test(value)) {
    throw new CiSetupError(`${where}: must be a full commit id (40 or 64 lowercase hex digits), got ${JSON.stringify(value ?? null)}`);
  }
  return value;
}

type Json = { [key: string]: unknown };
const objectAt = (value: unknown, key: string): Json | null => {
  const inner = value !== null && typeof value === "object" ? (value as Json)[key] : undefined;
  return inner !== null && typeof inner === "object" && !Array.isArray(inner) ? (inner as Json) : null;
};

/** The event GitHub Actions wrote for this run, bounded. */
async function readEvent(path: string): Promise<Json> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    throw new CiSetupError(`GITHUB_EVENT_PATH: cannot read ${path}: ${(error as Error).message}`);
  }
  if (size > EVENT_MAX_BYTES)
    throw new CiSetupError(`GITHUB_EVENT_PATH: ${path} is ${size} bytes, more than an event (${EVENT_MAX_BYTES})`);
  try {
    const value: unknown = JSON.parse(await readFile(path, "utf8"));
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Json;
  } catch {
    // reported below
  }
  throw new CiSetupError(`GITHUB_EVENT_PATH: ${path} is not a JSON event object`);
}

async function github(env: NodeJS.ProcessEnv): Promise<Omit<CiTarget, "platform">> {
  const path = env.GITHUB_EVENT_PATH;
  if (!path) throw new CiSetupError("GITHUB_EVENT_PATH: not set (GitHub Actions sets it; elsewhere pass --base and --head)");
  const event = await readEvent(path);
  const name = env.GITHUB_EVENT_NAME ?? "";
  const repository =
    typeof env.GITHUB_REPOSITORY === "string" && /^[\w.-]+\/[\w.-]+$/.test(env.GITHUB_REPOSITORY) ? env.GITHUB_REPOSITORY : null;
  const pr = objectAt(event, "pull_request");
  if (pr) {
    const number = pr.number;
    return {
      base: commitOf(objectAt(pr, "base")?.sha, `${name || "pull_request"} event: pull_request.base.sha`),
      head: commitOf(objectAt(pr, "head")?.sha, `${name || "pull_request"} event: pull_request.head.sha`),
      repository,
      pull_request: typeof number === "number" && Number.isInteger(number) && number > 0 ? number : null,
      source: `the ${name || "pull_request"} event of pull request #${String(number)}`,
    };
  }
  if (typeof event.before === "string" && typeof event.after === "string") {
    return {
      base: commitOf(event.before, "push event: before"),
      head: commitOf(event.after, "push event: after"),
      repository,
      pull_request: null,
      source: `the ${name || "push"} event`,
    };
  }
  throw new CiSetupError(
    `GITHUB_EVENT_PATH: the ${name || "triggering"} event names no pull request and no push range (run the job on pull_request, or pass --base and --head)`,
  );
}

function gitlab(env: NodeJS.ProcessEnv): Omit<CiTarget, "platform"> {
  const iid = Number(env.CI_MERGE_REQUEST_IID ?? "");
  if (env.CI_MERGE_REQUEST_DIFF_BASE_SHA) {
    // A merged results pipeline's CI_COMMIT_SHA is the merge result: the source branch's head is the pull request's last commit.
    const head = env.CI_MERGE_REQUEST_SOURCE_BRANCH_SHA || env.CI_COMMIT_SHA;
    return {
      base: commitOf(env.CI_MERGE_REQUEST_DIFF_BASE_SHA, "CI_MERGE_REQUEST_DIFF_BASE_SHA"),
      head: commitOf(head, env.CI_MERGE_REQUEST_SOURCE_BRANCH_SHA ? "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA" : "CI_COMMIT_SHA"),
      repository: null,
      pull_request: Number.isInteger(iid) && iid > 0 ? iid : null,
      source: `merge request !${env.CI_MERGE_REQUEST_IID ?? "?"}`,
    };
  }
  if (env.CI_COMMIT_BEFORE_SHA && !/^0+$/.test(env.CI_COMMIT_BEFORE_SHA)) {
    return {
      base: commitOf(env.CI_COMMIT_BEFORE_SHA, "CI_COMMIT_BEFORE_SHA"),
      head: commitOf(env.CI_COMMIT_SHA, "CI_COMMIT_SHA"),
      repository: null,
      pull_request: null,
      source: "the pushed commits",
    };
  }
  throw new CiSetupError(
    'CI_MERGE_REQUEST_DIFF_BASE_SHA: not set: run the job in merge request pipelines (rules: if: $CI_PIPELINE_SOURCE == "merge_request_event"), or pass --base and --head',
  );
}

/** What this run reviews: the flags, else the CI's environment. */
export async function ciTarget(flags: { base?: string; head?: string }, env: NodeJS.ProcessEnv = process.env): Promise<CiTarget> {
  const platform: Platform = env.GITHUB_ACTIONS === "true" ? "github" : env.GITLAB_CI === "true" ? "gitlab" : "local";
  if (flags.base !== undefined && flags.head !== undefined) {
    return {
      platform,
      base: flags.base,
      head: flags.head,
      repository: platform === "github" ? (env.GITHUB_REPOSITORY ?? null) : null,
      pull_request: null,
      source: "--base and --head",
    };
  }
  if (platform === "local") throw new CiSetupError("--base and --head: both are needed outside GitHub Actions and GitLab CI");
  const found = platform === "github" ? await github(env) : gitlab(env);
  return {
    platform,
    ...found,
    ...(flags.base !== undefined ? { base: flags.base } : {}),
    ...(flags.head !== undefined ? { head: flags.head } : {}),
  };
}
