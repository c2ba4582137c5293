/**
 * @module domain/github-review
 * What a GitHub webhook delivery says, for the account's GitHub receiver (account/github-receiver):
 * its signature checked as GitHub documents it (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of
 * the raw body with the webhook's secret>`, compared in constant time), and a `pull_request_review`
 * (submitted) or `pull_request_review_comment` (created) payload read into the review it carries:
 * who wrote it (a person's account, or a bot), its verdict, its text, the commits and (for a line
 * comment) the file and line it is on. Pure: the receiver maps it to a task and records it.
 */
import { constantTimeEqual, hex, hmacSha256 } from "../crypto";
import type { FeedbackVerdict } from "./view";

/** The events the receiver reads; GitHub's `ping` (sent when the webhook is created) is answered too. */
export const GITHUB_EVENTS = ["pull_request_review", "pull_request_review_comment"] as const;

/** Whether `header` is GitHub's signature of `body` with `secret`, compared in constant time. */
export async function githubSignatureValid(secret: string, header: string | null, body: Uint8Array): Promise<boolean> {
  const match = /^sha256=([0-9a-f]{64})$/i.exec(header ?? "");
  if (!match?.[1]) return false;
  return constantTimeEqual(hex(await hmacSha256(secret, body)), match[1].toLowerCase());
}

/** A GitHub account: a person's (`User`), or a bot's or an app's (whose verdict is not a person's). */
export interface GithubUser {
  login: string;
  id: number;
  person: boolean;
}

export type GithubReview =
  | { kind: "ping" }
  | { kind: "ignored"; reason: string }
  | {
      kind: "review" | "comment";
      user: GithubUser;
      verdict: FeedbackVerdict;
      body: string;
      /** The commits it was made on, newest first: the comment's or review's own, then the pull request's head. */
      commits: string[];
      pull: number;
      repository: string;
      url: string | null;
      /** A line comment's file and line (null: the whole file); absent for a review. */
      location?: { path: string; line: number | null; commit: string | null };
    };

type Json = { [key: string]: unknown };
const object = (value: unknown): Json | null =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : null;
const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/** A payload that is not what GitHub sends for the event: `field: rule`. */
export class PayloadProblem extends Error {}

function userOf(value: unknown, field: string): GithubUser {
  const user = object(value);
  if (!user || typeof user.login !== "string" || typeof user.id !== "number")
    throw new PayloadProblem(`${field}: must be a GitHub user (login, id)`);
  return { login: user.login.slice(0, 100), id: user.id, person: user.type === "User" };
}

function commitsOf(...values: unknown[]): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === "string" && COMMIT.test(v)))];
}

/** The pull request's number, repository and head, shared by both events. */
function pullOf(payload: Json): { pull: number; repository: string; head: unknown } {
  const pr = object(payload.pull_request);
  const repository = object(payload.repository);
  if (!pr || typeof pr.number !== "number") throw new PayloadProblem("pull_request.number: must be the pull request's number");
  return {
    pull: pr.number,
    repository: typeof repository?.full_name === "string" ? repository.full_name : "",
    head: object(pr.head)?.sha,
  };
}

const VERDICTS: Record<string, FeedbackVerdict> = { approved: "approved", changes_requested: "changes_requested", commented: "comment" };

/**
 * The review a delivery carries. A bot's verdict, and a review's state other than approved or
 * changes requested, read as a comment; a review with neither verdict nor text (GitHub sends one
 * around every batch of line comments, which arrive as their own events) and actions other than
 * a submitted review or a created comment are ignored.
 */
export function readGithubReview(event: string, payload: unknown): GithubReview {
  if (event === "ping") return { kind: "ping" };
  const root = object(payload);
  if (!root) throw new PayloadProblem("body: must be a JSON object");
  if (event === "pull_request_review") {
    if (root.action !== "submitted")
      return { kind: "ignored", reason: `pull_request_review ${String(root.action)}: only submitted reviews are read` };
    const review = object(root.review);
    if (!review) throw new PayloadProblem("review: is required");
    const user = userOf(review.user ?? root.sender, "review.user");
    const state = typeof review.state === "string" ? review.state.toLowerCase() : "";
    const stated = VERDICTS[state] ?? "comment";
    const body = typeof review.body === "string" ? review.body.trim() : "";
    if (stated === "comment" && body === "")
      return { kind: "ignored", reason: "a review without a verdict or text (its line comments arrive as their own events)" };
    const { pull, repository, head } = pullOf(root);
    return {
      kind: "review",
      user,
      verdict: user.person ? stated : "comment",
      body,
      commits: commitsOf(review.commit_id, head),
      pull,
      repository,
      url: typeof review.html_url === "string" ? review.html_url : null,
    };
  }
  if (event === "pull_request_review_comment") {
    if (root.action !== "created")
      return { kind: "ignored", reason: `pull_request_review_comment ${String(root.action)}: only new comments are read` };
    const comment = object(root.comment);
    if (!comment || typeof comment.path !== "string" || comment.path === "")
      throw new PayloadProblem("comment.path: must be the file the comment is on");
    const line = typeof comment.line === "number" && comment.line > 0 ? comment.line : null;
    const { pull, repository, head } = pullOf(root);
    const commit = typeof comment.commit_id === "string" && COMMIT.test(comment.commit_id) ? comment.commit_id : null;
    return {
      kind: "comment",
      user: userOf(comment.user ?? root.sender, "comment.user"),
      verdict: "comment",
      body: typeof comment.body === "string" ? comment.body.trim() : "",
      commits: commitsOf(comment.commit_id, comment.original_commit_id, head),
      pull,
      repository,
      url: typeof comment.html_url === "string" ? comment.html_url : null,
      location: { path: comment.path, line, commit },
    };
  }
  return { kind: "ignored", reason: `${event}: not an event the receiver reads (${GITHUB_EVENTS.join(", ")})` };
}
