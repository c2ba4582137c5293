/**
 * @module workflow/feedback
 * Reviewer feedback on one workflow: comments and verdicts (approved / changes requested) that
 * the owner writes in the owner view about the workflow, a task, a decision or an issue, and
 * their delivery to the agent. Each item names who posted it (the credential and how it was
 * presented) and where (the channel). Only people review: a verdict counts only from a channel
 * where the server knows a person acted (PERSON_CHANNELS: the signed-in owner's page), and there
 * only from a session whose credential did not record the task under review (the agent's own
 * credential, signed in to the page, is still the agent as far as the server can tell). One sent
 * where it cannot tell a person from the agent (an MCP connection, whatever it declares, or such a
 * session) is recorded as a comment naming the verdict asked for, so review counts come only from
 * people.
 *
 * Delivery is "at most once, in the next result": the MCP layer asks for the undelivered
 * feedback after each successful tool call on the workflow and appends a compact digest
 * (bounded by LIMITS.FEEDBACK_RESULT_BYTES, bodies clipped) to that result; what the digest
 * carried is marked delivered in the same transaction that read it, so two concurrent calls
 * never both deliver one item. What did not fit stays undelivered for the next call, and
 * get_workflow {workflow_id} shows everything (and marks it all delivered).
 */
import { isReviewItem } from "@waymark/protocol/review-counts";
import { utf8Length } from "../domain/stored-files";
import type { FeedbackAuthor, FeedbackChannel, FeedbackLocation, FeedbackTarget, FeedbackVerdict, FeedbackView } from "../domain/view";
import { WaymarkError } from "../errors";
import { newRowId, workflowOfTask } from "../ids";
import { LIMITS } from "../limits";
import type { Sql } from "../storage/sql";
import { notFoundError } from "./ownership";
import { iso, type WorkflowRecords } from "./records";
import type { RunningTotals } from "./totals";
import type { WorkflowTables } from "./workflow-tables";
import type { WriteScope } from "./write-scope";

/**
 * Reviews needed, recounted from the records: tasks that asked for manual review and issues that
 * require it, less those whose latest verdict (since the task asked, for a task) approves them.
 * What `add` keeps up to date one verdict at a time; the migration that brought it in runs it once.
 */
/** A task `t` whose latest verdict since it completed is not an approval. */
const TASK_NOT_APPROVED = `coalesce((SELECT f.verdict FROM feedback f WHERE f.target = 'task' AND f.target_id = t.id AND f.verdict != 'comment'
      AND f.created_at >= t.completed_at ORDER BY f.created_at DESC, f.rowid DESC LIMIT 1), '') != 'approved'`;
/** Issues that require human review and whose latest verdict is not an approval. */
const OPEN_ISSUES = `(SELECT count(*) FROM issues i WHERE i.requires_human_review = 1
    AND coalesce((SELECT f.verdict FROM feedback f WHERE f.target = 'issue' AND f.target_id = i.id AND f.verdict != 'comment'
      ORDER BY f.created_at DESC, f.rowid DESC LIMIT 1), '') != 'approved')`;

export const RECOUNT_REVIEWS_NEEDED = `UPDATE totals SET reviews_needed =
  (SELECT count(*) FROM tasks t WHERE json_extract(t.outcome, '$.manual_review_needed') = 1
    AND ${TASK_NOT_APPROVED})
  + ${OPEN_ISSUES}
  WHERE id = 1`;

/**
 * Reviews needed recounted as @waymark/protocol/review-counts counts review items: completed tasks
 * that failed, asked for manual review or changed files outside their declared areas (read from
 * their rows: the migration that runs it keeps no review facts yet), and issues that require human
 * review, less those whose latest verdict (since the task completed, for a task) approves them.
 */
export const RECOUNT_REVIEW_ITEMS = `UPDATE totals SET reviews_needed =
  (SELECT count(*) FROM tasks t WHERE t.status != 'in_progress' AND (t.status = 'failed'
      OR json_extract(t.outcome, '$.manual_review_needed') = 1
      OR (CASE WHEN t.files_count IS NULL THEN coalesce(json_array_length(t.verification, '$.unexpected_files'), 0)
          ELSE (SELECT count(*) FROM file_changes c WHERE c.task_id = t.id AND c.in_scope = 0) END) > 0)
    AND ${TASK_NOT_APPROVED})
  + ${OPEN_ISSUES}
  WHERE id = 1`;

/** The index of feedback not yet delivered (migration 7's, unchanged since). */
export const FEEDBACK_UNDELIVERED = "CREATE INDEX feedback_undelivered ON feedback(delivered_at, created_at)";

export const FEEDBACK_MIGRATION_STATEMENTS = [
  `CREATE TABLE feedback (
    id TEXT PRIMARY KEY,
    target TEXT NOT NULL,
    target_id TEXT NOT NULL,
    verdict TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    delivered_at INTEGER
  )`,
  FEEDBACK_UNDELIVERED,
];

/** Columns of migration 17: who posted an item (JSON FeedbackAuthor) and where. NULL: recorded before. */
export const FEEDBACK_AUTHOR_STATEMENTS = ["ALTER TABLE feedback ADD COLUMN author TEXT", "ALTER TABLE feedback ADD COLUMN channel TEXT"];

/** Column of migration 18: a pull-request review comment's file, line and commit (JSON FeedbackLocation). */
export const FEEDBACK_LOCATION_STATEMENTS = ["ALTER TABLE feedback ADD COLUMN location TEXT"];

/** Column of migration 20: the verdict asked for, when it was recorded as a comment. NULL: none was asked, or it counted. */
export const FEEDBACK_REQUESTED_VERDICT_STATEMENT = "ALTER TABLE feedback ADD COLUMN requested_verdict TEXT";

/**
 * The channels where the server knows a person acted: only their verdicts count. A pull-request
 * review counts as the signed-in owner's page does: GitHub signed the delivery and names a user
 * account (the receiver records a bot's review as a comment).
 */
const PERSON_CHANNELS: ReadonlySet<FeedbackChannel> = new Set(["page", "pull_request"]);

/** Whether a verdict sent through `channel` is recorded as one (else it is recorded as a comment). */
export const verdictsCountFrom = (channel: FeedbackChannel): boolean => PERSON_CHANNELS.has(channel);

export interface NewFeedback {
  target: FeedbackTarget;
  target_id: string;
  verdict: FeedbackVerdict;
  body: string;
  author: FeedbackAuthor;
  channel: FeedbackChannel;
  location?: FeedbackLocation;
  /**
   * The credential behind the request (src/domain/credentials CredentialRef), compared with the
   * credentials that recorded the task under review and never stored with the item.
   */
  credential?: string;
}

/** Why a verdict was recorded as a comment: the channel cannot tell a person from the agent, or the poster's credential recorded the item. */
export type CommentOnly = "channel" | "task_credential";

/** One item of the digest appended to an agent's tool result: bodies clipped, ids kept whole. */
export interface FeedbackDigestItem {
  id: string;
  on: string;
  /** A pull-request review comment's `path:line` (or path), so the agent knows where it was left. */
  at?: string;
  verdict: FeedbackVerdict;
  body: string;
}

/** What a tool result carries as `reviewer_feedback`. */
export interface FeedbackDigest {
  items: FeedbackDigestItem[];
  /** Undelivered items that did not fit; they come with the next call. */
  more: number;
  /** Where the full text is. */
  full: string;
}

type FeedbackRow = {
  id: string;
  target: string;
  target_id: string;
  verdict: string;
  body: string;
  created_at: number;
  delivered_at: number | null;
  author: string | null;
  channel: string | null;
  location?: string | null;
  requested_verdict?: string | null;
};

const BODY_CLIP = 160;

/** An item as read and as its event carries it: items recorded before authors were have neither field (their events had none). */
const viewOf = (r: FeedbackRow): FeedbackView => ({
  id: r.id,
  target: r.target as FeedbackTarget,
  target_id: r.target_id,
  verdict: r.verdict as FeedbackVerdict,
  body: r.body,
  created_at: iso(r.created_at),
  delivered_at: r.delivered_at === null ? null : iso(r.delivered_at),
  ...(r.author !== null ? { author: JSON.parse(r.author) as FeedbackAuthor } : {}),
  ...(r.channel !== null ? { channel: r.channel as FeedbackChannel } : {}),
  ...(r.location ? { location: JSON.parse(r.location) as FeedbackLocation } : {}),
  ...(r.requested_verdict ? { requested_verdict: r.requested_verdict as NonNullable<FeedbackView["requested_verdict"]> } : {}),
});

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export class FeedbackRecords {
  /**
   * Whether undelivered feedback exists: null until read. Every agent write asks, and nearly
   * always there is none, so once known the answer costs no query; adding feedback sets it, and a
   * write that rolls back makes it unknown again (forgetUncommitted).
   */
  private undelivered: boolean | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly totals: RunningTotals,
    private readonly records: WorkflowRecords,
    /** The feedback table is created by the first item (most workflows never get one). */
    private readonly tables: WorkflowTables,
  ) {}

  /**
   * Records feedback inside a Writer.run mutation. The target must be this workflow or one of
   * its tasks, decisions or issues; the event carries the task it concerns (for the live pages).
   */
  add(workflowId: string, input: NewFeedback, w: WriteScope): FeedbackView {
    const taskId = this.taskOfTarget(workflowId, input.target, input.target_id);
    this.tables.ensure("feedback");
    const count = this.sql<{ n: number }>`SELECT count(*) AS n FROM feedback`[0]?.n ?? 0;
    if (count >= LIMITS.FEEDBACK_PER_WORKFLOW) {
      throw new WaymarkError("PAYLOAD_TOO_LARGE", `body: at most ${LIMITS.FEEDBACK_PER_WORKFLOW} feedback items per workflow`);
    }
    // Only people review: a verdict the server cannot tell from the agent's is a comment that says what was asked.
    const requested = input.verdict !== "comment" && this.commentOnly(input, taskId) !== null ? input.verdict : null;
    const { credential: _compared, ...recorded } = requested === null ? input : { ...input, verdict: "comment" as const };
    const settled = this.settles(recorded);
    const id = newRowId("fb");
    const author = JSON.stringify(recorded.author);
    const location = recorded.location ? JSON.stringify(recorded.location) : null;
    this.sql`INSERT INTO feedback (id, target, target_id, verdict, body, created_at, author, channel, location, requested_verdict)
      VALUES (${id}, ${recorded.target}, ${recorded.target_id}, ${recorded.verdict}, ${recorded.body}, ${w.now}, ${author},
        ${recorded.channel}, ${location}, ${requested})`;
    this.undelivered = true;
    const view = viewOf({ id, ...recorded, author, location, created_at: w.now, delivered_at: null, requested_verdict: requested });
    w.countBytes(utf8Length(input.body));
    if (settled !== 0) this.totals.reviewAnswered(settled);
    w.emit("feedback.created", taskId, view);
    return view;
  }

  /**
   * Why a verdict would be recorded as a comment, or null when it counts. The server knows a person
   * acted only on the signed-in owner's page (PERSON_CHANNELS), and even there not when the session
   * was signed in with a credential that recorded the task under review (the task, or the task an
   * issue was logged on): that is the agent's own credential, and whoever holds it may be the agent.
   */
  private commentOnly(input: NewFeedback, taskId: string | null): CommentOnly | null {
    if (!verdictsCountFrom(input.channel)) return "channel";
    if (taskId !== null && input.credential !== undefined && this.records.writersOf(taskId).includes(input.credential))
      return "task_credential";
    return null;
  }

  /**
   * How a verdict changes the reviews needed: -1 when it approves a review item
   * (@waymark/protocol/review-counts) that was not approved, +1 when it asks for changes on one
   * that was, 0 otherwise (comments, what is no review item, a task still running: it becomes one
   * when it completes).
   */
  private settles(input: Omit<NewFeedback, "credential">): -1 | 0 | 1 {
    if (input.verdict === "comment") return 0;
    let since: number;
    if (input.target === "task") {
      const task = this.records.task(input.target_id);
      if (!task || task.completed_at === null || !isReviewItem(task.status, this.records.reviewFacts(task))) return 0;
      since = task.completed_at;
    } else if (input.target === "issue") {
      if (!this.records.issue(input.target_id)?.requires_human_review) return 0;
      since = 0;
    } else return 0;
    const latest = this.sql<{ verdict: string }>`
      SELECT verdict FROM feedback WHERE target = ${input.target} AND target_id = ${input.target_id} AND verdict != 'comment'
        AND created_at >= ${since} ORDER BY created_at DESC, rowid DESC LIMIT 1`[0]?.verdict;
    const wasApproved = latest === "approved";
    const approves = input.verdict === "approved";
    return wasApproved === approves ? 0 : approves ? -1 : 1;
  }

  /** Everything, oldest first. */
  list(): FeedbackView[] {
    if (!this.tables.has("feedback")) return [];
    return this.sql<FeedbackRow>`SELECT * FROM feedback ORDER BY created_at, rowid`.map(viewOf);
  }

  /** Marks everything delivered (get_workflow {workflow_id} has just shown it all). */
  markAllDelivered(now: number): void {
    if (this.tables.has("feedback")) this.sql`UPDATE feedback SET delivered_at = ${now} WHERE delivered_at IS NULL`;
    this.undelivered = false;
  }

  /** The transaction that took or added feedback rolled back: whether any is undelivered is read again. */
  forgetUncommitted(): void {
    this.undelivered = null;
  }

  /**
   * The undelivered feedback that fits in one tool result, oldest first, marked delivered; null
   * when there is none. Call inside a transaction so that reading and marking are one step.
   */
  takeDigest(workflowId: () => string, now: number): FeedbackDigest | null {
    if (this.undelivered === false) return null;
    if (!this.tables.has("feedback")) {
      this.undelivered = false;
      return null;
    }
    const pending = this.sql<FeedbackRow>`SELECT * FROM feedback WHERE delivered_at IS NULL ORDER BY created_at, rowid LIMIT 50`;
    this.undelivered = pending.length > 0;
    if (pending.length === 0) return null;
    const total = this.sql<{ n: number }>`SELECT count(*) AS n FROM feedback WHERE delivered_at IS NULL`[0]?.n ?? 0;
    const items: FeedbackDigestItem[] = [];
    let bytes = 0;
    for (const row of pending) {
      const at = row.location ? locationText(JSON.parse(row.location) as FeedbackLocation) : null;
      const item: FeedbackDigestItem = {
        id: row.id,
        on: row.target_id,
        ...(at ? { at } : {}),
        verdict: row.verdict as FeedbackVerdict,
        body: clip(row.body, BODY_CLIP),
      };
      const size = JSON.stringify(item).length;
      // The first item always goes, so feedback can never be stuck behind a budget it cannot fit.
      if (items.length > 0 && bytes + size > LIMITS.FEEDBACK_RESULT_BYTES) break;
      items.push(item);
      bytes += size;
      this.sql`UPDATE feedback SET delivered_at = ${now} WHERE id = ${row.id}`;
    }
    this.undelivered = total > items.length;
    return { items, more: total - items.length, full: `get_workflow {"workflow_id": "${workflowId()}"}` };
  }

  /** The task a target belongs to (null for the workflow itself); NOT_FOUND for anything outside this workflow. */
  private taskOfTarget(workflowId: string, target: FeedbackTarget, targetId: string): string | null {
    const missing = () => notFoundError("target_id", `${target} ${targetId} in workflow ${workflowId}`);
    if (target === "workflow") {
      if (targetId !== workflowId) throw missing();
      return null;
    }
    if (target === "task") {
      if (workflowOfTask(targetId) !== workflowId || this.sql`SELECT id FROM tasks WHERE id = ${targetId}`.length === 0) throw missing();
      return targetId;
    }
    const rows =
      target === "decision"
        ? this.sql<{ task_id: string }>`SELECT task_id FROM log_entries WHERE kind = 'decisions' AND id = ${targetId}`
        : this.sql<{ task_id: string }>`SELECT task_id FROM log_entries WHERE kind = 'issues' AND id = ${targetId}`;
    const taskId = rows[0]?.task_id;
    if (!taskId) throw missing();
    return taskId;
  }
}

/** `src/api/a.ts:12`, or the path alone for a comment on the whole file: where a review comment was left. */
export const locationText = (location: FeedbackLocation) => (location.line === null ? location.path : `${location.path}:${location.line}`);

/** The digest as one short line of text appended to a tool's text result (a few hundred bytes at most). */
export function feedbackDigestText(digest: FeedbackDigest): string {
  const label: Record<FeedbackVerdict, string> = { comment: "comment", approved: "APPROVED", changes_requested: "CHANGES REQUESTED" };
  const items = digest.items.map((i) => `[${label[i.verdict]} on ${i.on}${i.at ? ` at ${i.at}` : ""}] ${i.body}`);
  const more = digest.more > 0 ? ` (+${digest.more} more)` : "";
  return `Reviewer feedback${more}: ${items.join(" | ")} — full text: ${digest.full}`;
}
