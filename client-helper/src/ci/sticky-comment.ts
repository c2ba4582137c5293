/**
 * @module ci/sticky-comment
 * One pull-request comment that `waymark ci` keeps up to date, through GitHub's REST API with the
 * token the job already has (GITHUB_TOKEN, `pull-requests: write` or `issues: write`): it lists the
 * pull request's comments (`GET /repos/{owner}/{repo}/issues/{issue_number}/comments`, 100 a page,
 * following the `Link: rel="next"` header), finds the one carrying its marker, and updates it
 * (`PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}`) or creates it
 * (`POST /repos/{owner}/{repo}/issues/{issue_number}/comments`). The marker is an HTML comment, which
 * GitHub does not render. Bodies are cut to GitHub's 65,536 characters.
 */
import { boundedMarkdown } from "./workflow-commands.js";

/** Invisible in the rendered comment; what finds the comment again on the next run. */
export const COMMENT_MARKER = "<!-- waymark-ci: sticky comment, updated in place -->";
/** GitHub refuses a comment body longer than 65,536 characters; the marker and a note must fit too. */
const BODY_MAX_CHARS = 65_536 - 512;
/** Pages of 100 comments read at most (a pull request with more keeps a comment further back than this). */
const PAGES = 30;
const TIMEOUT_MS = 30_000;

export interface CommentTarget {
  /** GITHUB_API_URL (https://api.github.com, or a GitHub Enterprise Server's). */
  api: string;
  repository: string;
  pull_request: number;
  token: string;
}

export class CommentError extends Error {}

/** The comment's body: the marker, then the report cut to fit. */
export function commentBody(markdown: string, runUrl: string | null): string {
  const rest = runUrl ? `the job summary has everything: ${runUrl}` : "the job summary has everything";
  // Characters and bytes differ, but a body within 65,024 bytes is within 65,536 characters.
  return `${COMMENT_MARKER}\n${boundedMarkdown(markdown, BODY_MAX_CHARS, rest)}`;
}

type IssueComment = { id: number; body?: string | null; html_url: string };

async function call(target: CommentTarget, method: string, url: string, body?: unknown): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        Accept: "application/vnd.github+json",
        Authorization: `Bearer ${target.token}`,
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "waymark-ci",
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new CommentError(`${method} ${url}: ${(error as Error).message}`);
  }
  if (!response.ok) {
    const text = (await response.text()).slice(0, 300);
    const hint = response.status === 403 || response.status === 404 ? " (give the job `permissions: pull-requests: write`)" : "";
    throw new CommentError(`${method} ${url}: HTTP ${response.status}${hint}: ${text}`);
  }
  return response;
}

/** The URL of the next page, from GitHub's Link header. */
function nextPage(link: string | null): string | null {
  for (const part of (link ?? "").split(",")) {
    const match = /^\s*<([^>]+)>\s*;\s*rel="next"/.exec(part);
    if (match?.[1]) return match[1];
  }
  return null;
}

/** Creates the comment or updates the one carrying the marker; returns what was done and the comment's URL. */
export async function upsertComment(target: CommentTarget, body: string): Promise<{ action: "created" | "updated"; url: string }> {
  const base = target.api.replace(/\/+$/, "");
  const [owner, repo] = target.repository.split("/").map(encodeURIComponent);
  const list = `${base}/repos/${owner}/${repo}/issues/${target.pull_request}/comments`;
  let found: IssueComment | null = null;
  let url: string | null = `${list}?per_page=100`;
  for (let page = 0; url !== null && page < PAGES && found === null; page++) {
    const response = await call(target, "GET", url);
    const comments = (await response.json()) as IssueComment[];
    if (!Array.isArray(comments)) throw new CommentError(`GET ${url}: not a list of comments`);
    found = comments.find((comment) => typeof comment.body === "string" && comment.body.startsWith(COMMENT_MARKER)) ?? null;
    // Only GitHub's own pages are followed: a Link header naming another host is not.
    const next = nextPage(response.headers.get("Link"));
    url = next !== null && new URL(next).origin === new URL(base).origin ? next : null;
  }
  if (found) {
    const response = await call(target, "PATCH", `${base}/repos/${owner}/${repo}/issues/comments/${found.id}`, { body });
    return { action: "updated", url: ((await response.json()) as IssueComment).html_url };
  }
  const response = await call(target, "POST", list, { body });
  return { action: "created", url: ((await response.json()) as IssueComment).html_url };
}
