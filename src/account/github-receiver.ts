/**
 * @module account/github-receiver
 * The account's GitHub webhook receiver: pull-request reviews and review comments reach the agent
 * as reviewer feedback, the way feedback from the page does (docs/pull-requests.md).
 *
 * The owner configures it (an admin action of the access matrix, `github.configure`): one receiver
 * per account, its URL (`/hooks/github/<account>/<id>`) and its secret shown once, for the GitHub
 * webhook's settings. It delivers while the credential that configured it holds. A delivery is
 * taken only when its `X-Hub-Signature-256` is the HMAC-SHA256 of the body with the secret
 * (domain/github-review, constant-time); its `X-GitHub-Delivery` id makes it idempotent (a
 * redelivery is answered with the first answer and adds nothing), kept GITHUB_DELIVERIES_KEPT_MS.
 *
 * Each review is mapped to a task through the account's commit index (the commits it was made on)
 * and, for a line comment, the workflow's record of who changed that file and which lines
 * (workflow/task-files `taskForLine`); a review is feedback on the workflow, a line comment on the
 * task, with its file and line. Who wrote it (the GitHub user) and where (`pull_request`) are
 * recorded with it; only a person's account gives a verdict, a bot's is a comment.
 */
import { type GithubReview, githubSignatureValid, PayloadProblem, readGithubReview } from "../domain/github-review";
import type { FeedbackAuthor, FeedbackChannel, FeedbackView } from "../domain/view";
import { randomToken } from "../ids";
import { isoTime, isoTimeOrNull } from "../iso-time";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import type { CommitIndex } from "./commit-index";

export interface ReceiverStatus {
  id: string;
  created_at: string;
  last_delivery_at: string | null;
  last_result: string | null;
}

export interface ConfiguredReceiver extends ReceiverStatus {
  /** Shown once: GitHub's webhook settings take it as the secret. */
  secret: string;
}

/** One delivery as the route read it: headers and the raw body. */
export interface GithubDelivery {
  receiver: string;
  event: string | null;
  id: string | null;
  signature: string | null;
  body: Uint8Array;
}

/** The answer GitHub receives (its webhook settings show it per delivery). */
export interface DeliveryAnswer {
  status: number;
  body: { [key: string]: string | number | boolean | null | string[] };
}

/** What the receiver needs of the rest of the account: its credential check and the workflows. */
export interface ReceiverPorts {
  /** Whether the credential that configured the receiver still may configure it. */
  holds(credential: string): Promise<boolean>;
  /** The author a delivery's feedback names: the receiver's credential, presented through GitHub. */
  author(credential: string): FeedbackAuthor;
  reviewTarget(workflowId: string, input: { path: string; line: number | null; made: string[] }): Promise<string | null>;
  addFeedback(
    workflowId: string,
    input: ReviewFeedback,
  ): Promise<{ ok: true; value: FeedbackView } | { ok: false; code: string; message: string }>;
}

/** The feedback a review becomes (the workflow object's add_feedback input). */
export type ReviewFeedback = Pick<FeedbackView, "target" | "target_id" | "verdict" | "body" | "location"> & {
  author: FeedbackAuthor;
  channel: FeedbackChannel;
  idempotency_key: string;
};

type ReceiverRow = {
  id: string;
  secret: string;
  created_at: number;
  credential: string;
  last_delivery_at: number | null;
  last_result: string | null;
};

const REFUSED: DeliveryAnswer = {
  status: 401,
  body: { code: "UNAUTHORIZED", message: "X-Hub-Signature-256: does not verify for this receiver" },
};
const DELIVERY_ID = /^[0-9A-Za-z-]{1,64}$/;

export class GithubReceiver {
  constructor(
    private readonly sql: Sql,
    private readonly commits: CommitIndex,
  ) {}

  /** A new receiver (replacing any: its old URL and secret stop at once), delivering while `credential` holds. */
  configure(credential: string, now = Date.now()): ConfiguredReceiver {
    const id = `ghr_${randomToken(16)}`;
    const secret = `ghsec_${randomToken(40)}`;
    this.sql`DELETE FROM github_receiver`;
    this.sql`INSERT INTO github_receiver (id, secret, created_at, credential) VALUES (${id}, ${secret}, ${now}, ${credential})`;
    return { id, secret, created_at: isoTime(now), last_delivery_at: null, last_result: null };
  }

  status(): ReceiverStatus | null {
    const row = this.sql<ReceiverRow>`SELECT * FROM github_receiver LIMIT 1`[0];
    return row
      ? {
          id: row.id,
          created_at: isoTime(row.created_at),
          last_delivery_at: isoTimeOrNull(row.last_delivery_at),
          last_result: row.last_result,
        }
      : null;
  }

  remove(): boolean {
    return this.sql<{ id: string }>`DELETE FROM github_receiver RETURNING id`.length > 0;
  }

  /** A credential was revoked: a receiver it configured stops. */
  endCredential(credential: string): void {
    this.sql`DELETE FROM github_receiver WHERE credential = ${credential}`;
  }

  /** Checks, maps and records one delivery; the answer says what became of it. */
  async receive(delivery: GithubDelivery, ports: ReceiverPorts, now = Date.now()): Promise<DeliveryAnswer> {
    const row = this.sql<ReceiverRow>`SELECT * FROM github_receiver LIMIT 1`[0];
    // Unknown receiver, ended credential, missing or wrong signature: one answer, so none of them is told apart.
    if (!row || row.id !== delivery.receiver || !(await githubSignatureValid(row.secret, delivery.signature, delivery.body)))
      return REFUSED;
    if (!(await ports.holds(row.credential))) return REFUSED;
    if (!delivery.id || !DELIVERY_ID.test(delivery.id)) {
      return { status: 400, body: { code: "INPUT_VALIDATION_ERROR", message: "X-GitHub-Delivery: must be the delivery's id" } };
    }
    this.sql`DELETE FROM github_deliveries WHERE received_at < ${now - LIMITS.GITHUB_DELIVERIES_KEPT_MS}`;
    const seen = this.sql<{ result: string }>`SELECT result FROM github_deliveries WHERE delivery_id = ${delivery.id}`[0];
    if (seen) {
      const earlier = JSON.parse(seen.result) as DeliveryAnswer;
      return { status: earlier.status, body: { ...earlier.body, duplicate: true } };
    }
    const answer = await this.handle(delivery, row, ports);
    this.sql`INSERT INTO github_deliveries (delivery_id, received_at, result) VALUES (${delivery.id}, ${now}, ${JSON.stringify(answer)})
      ON CONFLICT (delivery_id) DO NOTHING`;
    const summary = `${answer.status} ${String(answer.body.delivered ?? answer.body.message ?? answer.body.ignored ?? "")}`.slice(0, 200);
    this.sql`UPDATE github_receiver SET last_delivery_at = ${now}, last_result = ${summary} WHERE id = ${row.id}`;
    return answer;
  }

  private async handle(delivery: GithubDelivery, row: ReceiverRow, ports: ReceiverPorts): Promise<DeliveryAnswer> {
    let review: GithubReview;
    try {
      const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(delivery.body);
      review = readGithubReview(delivery.event ?? "", JSON.parse(text));
    } catch (error) {
      const message = error instanceof PayloadProblem ? error.message : "body: must be GitHub's JSON payload";
      return { status: 400, body: { code: "INPUT_VALIDATION_ERROR", message } };
    }
    if (review.kind === "ping") return { status: 200, body: { ok: true, events: ["pull_request_review", "pull_request_review_comment"] } };
    if (review.kind === "ignored") return { status: 202, body: { delivered: false, ignored: review.reason } };
    const hits = this.commits.find(review.commits, 20);
    const first = hits[0];
    if (!first) {
      return {
        status: 202,
        body: {
          delivered: false,
          ignored: `no task of this account recorded the commits ${review.commits.map((c) => c.slice(0, 12)).join(", ")}`,
        },
      };
    }
    const workflowId = first.workflow_id;
    const made = hits.filter((hit) => hit.workflow_id === workflowId).map((hit) => hit.task_id);
    let target: { target: "workflow" | "task"; target_id: string } = { target: "workflow", target_id: workflowId };
    if (review.location) {
      const task = (await ports.reviewTarget(workflowId, { path: review.location.path, line: review.location.line, made })) ?? made[0];
      if (task) target = { target: "task", target_id: task };
    }
    const fallback = review.kind === "review" ? `${review.verdict.replace("_", " ")} in pull request #${review.pull}` : "";
    const body = (review.body || fallback).slice(0, LIMITS.FEEDBACK_TEXT);
    const added = await ports.addFeedback(workflowId, {
      ...target,
      verdict: review.verdict,
      body,
      author: { ...ports.author(row.credential), github_user: { login: review.user.login, id: review.user.id } },
      channel: "pull_request",
      ...(review.location ? { location: review.location } : {}),
      idempotency_key: `github:${delivery.id}`,
    });
    if (!added.ok)
      return { status: added.code === "NOT_FOUND" ? 202 : 422, body: { delivered: false, code: added.code, message: added.message } };
    return {
      status: 200,
      body: { delivered: true, workflow_id: workflowId, ...target, feedback_id: added.value.id, verdict: added.value.verdict },
    };
  }
}
