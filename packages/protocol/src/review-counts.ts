/**
 * @module review-counts
 * What a reviewer must look at in a workflow, counted once for every rendering: the page's head and
 * its "needs you" box, the JSON export's `review` member, the Markdown export and `waymark summary`
 * all show these numbers, so they never disagree.
 *
 * A **review item** is a completed task that failed, asked for manual review or changed files
 * outside its declared areas (one item however many of these it did), or an issue that requires
 * human review. It stays open until a person approves it: the latest verdict on it (comments do not
 * change it; for a task, only verdicts given once it completed) is "approved". A verdict that the
 * edge recorded as a comment (it could not tell a person from the agent) is a comment here too.
 *
 * A task's part is read once from its view into `TaskReviewFacts` (what it claimed, what was
 * observed, where its figures came from), which the workflow object keeps beside the task when it
 * completes: the counts of a workflow of any size read those small facts, never the tasks again.
 */
import { checkLines } from "./check-evidence";
import { COMMAND_KINDS, type CommandKind } from "./command-kind";
import { filesKind, type ProvenanceKind } from "./provenance-wording";
import type { FeedbackView } from "./views/feedback";
import type { IssueView } from "./views/logs";
import type { CheckCounts, OBSERVED_CHECKS, ReviewCounts } from "./views/review";
import type { TaskView, Verification } from "./views/task";

export type { CheckCounts, ReviewCounts };

/** What was observed of one kind of check after the task's last edit. */
export type ObservedCheck = (typeof OBSERVED_CHECKS)[number];
/** What the agent claimed of it: its `tests_status`, or that it ran a command of the kind (`ran`). */
export type ClaimedCheck = "passed" | "failed" | "not_run" | "ran" | null;

export interface CheckFact {
  observed: ObservedCheck;
  claimed: ClaimedCheck;
}

/** A task's part in the counts, read from its view (`taskReviewFacts`). */
export interface TaskReviewFacts {
  /** The agent completed it as failed (its claim: a reviewer looks at every failure). */
  failed: boolean;
  /** It asked for manual review. */
  asked: boolean;
  /** Files it changed outside its declared areas, listed or beyond the list. */
  outside: number;
  /** Where its changed files came from; null when it recorded none. */
  files: ProvenanceKind | null;
  /** Where its usage figures came from; null when it reported none. */
  usage: ProvenanceKind | null;
  /** Each kind of check the task shows (./check-evidence.ts): observed after its last edit, and claimed. */
  checks: Partial<Record<CommandKind, CheckFact>>;
}

/** The parts of a task (./views/task.ts) the facts are read from. */
export type FactsTask = Pick<TaskView, "status" | "outcome" | "metadata"> &
  Partial<Pick<TaskView, "metrics" | "commands">> & {
    verification: Pick<Verification, "unexpected_files" | "more"> | null;
    files_changed: Pick<NonNullable<TaskView["files_changed"]>, "source"> | null;
  };

function observedOf(line: ReturnType<typeof checkLines>[number]): ObservedCheck {
  const seen = line.observation;
  if (!seen) return "not_observed";
  if (!seen.last) return "not_run";
  if (seen.last.exit_code === null) return "exit_unknown";
  return seen.last.exit_code === 0 ? "passed" : "failed";
}

function claimedOf(line: ReturnType<typeof checkLines>[number]): ClaimedCheck {
  const claim = line.claim;
  if (!claim) return null;
  return claim.status ?? "ran";
}

/** Usage figures are signed only when a device's signature covered a transcript's sums (./provenance-wording.ts usageLine). */
function usageKind(metrics: FactsTask["metrics"]): ProvenanceKind | null {
  if (!metrics?.source) return null;
  return metrics.source === "transcript" && metrics.device ? "signed" : "claimed";
}

/** A task's part in the counts, from its view. */
export function taskReviewFacts(task: FactsTask): TaskReviewFacts {
  const checks: Partial<Record<CommandKind, CheckFact>> = {};
  for (const line of checkLines(task)) checks[line.kind] = { observed: observedOf(line), claimed: claimedOf(line) };
  const v = task.verification;
  return {
    failed: task.status === "failed",
    asked: task.outcome?.manual_review_needed === true,
    outside: v ? v.unexpected_files.length + (v.more?.unexpected_files ?? 0) : 0,
    files: task.files_changed?.source ? filesKind(task.files_changed.source) : null,
    usage: usageKind(task.metrics),
    checks,
  };
}

/** Whether a task is a review item: completed, and it failed, asked for review or changed files outside its areas. */
export function isReviewItem(status: string, facts: TaskReviewFacts | null): boolean {
  return status !== "in_progress" && facts !== null && (facts.failed || facts.asked || facts.outside > 0);
}

/** A verdict as the counts read it (./views/feedback.ts). */
export type VerdictLike = Pick<FeedbackView, "target_id" | "verdict" | "created_at">;

export type ReviewState = "open" | "approved" | "changes_requested";

/**
 * The latest verdicts per reviewed id, in the order they were given; `stateOf` answers for one
 * review item (a task's verdicts count from its completion, `since`).
 */
export class Verdicts {
  private readonly byTarget = new Map<string, { verdict: string; at: string }[]>();

  constructor(feedback: readonly VerdictLike[]) {
    for (const f of feedback) {
      if (f.verdict !== "approved" && f.verdict !== "changes_requested") continue;
      const list = this.byTarget.get(f.target_id) ?? [];
      list.push({ verdict: f.verdict, at: f.created_at });
      this.byTarget.set(f.target_id, list);
    }
  }

  stateOf(id: string, since = ""): ReviewState {
    let state: ReviewState = "open";
    let latest = "";
    for (const v of this.byTarget.get(id) ?? []) {
      // Given before the item asked, or before a later verdict: it does not decide.
      if (v.at < since || v.at < latest) continue;
      latest = v.at;
      state = v.verdict === "approved" ? "approved" : "changes_requested";
    }
    return state;
  }
}

const noChecks = (): CheckCounts => ({
  observed: { passed: 0, failed: 0, exit_unknown: 0, not_run: 0, not_observed: 0 },
  claimed: { passed: 0, failed: 0, not_run: 0, ran: 0, none: 0 },
});

/** A review item as the tally keeps it: its id and the time verdicts on it count from. */
interface Item {
  id: string;
  since: string;
}

/**
 * The counts, gathered one task and one issue at a time (a streamed export feeds it as it writes
 * them; the workflow object feeds it the facts it keeps), then read against the feedback.
 */
export class ReviewTally {
  private readonly items: Item[] = [];
  private readonly partial: Omit<ReviewCounts, "review"> = {
    tasks: 0,
    open_tasks: 0,
    failed_tasks: 0,
    outside_areas: { tasks: 0, files: 0 },
    checks: Object.fromEntries(COMMAND_KINDS.map((kind) => [kind, noChecks()])) as Record<CommandKind, CheckCounts>,
    figures: { files_claimed: 0, files_not_observed: 0, usage_claimed: 0 },
  };

  /**
   * A task: `facts` null for one still open. Verdicts on it count from its completion
   * (`completed_at`; absent from a reader that does not have it: every verdict counts).
   */
  addTask(task: Pick<TaskView, "id" | "status"> & Partial<Pick<TaskView, "completed_at">>, facts: TaskReviewFacts | null): void {
    const p = this.partial;
    p.tasks++;
    if (task.status === "in_progress") {
      p.open_tasks++;
      return;
    }
    if (!facts) return;
    if (facts.failed) p.failed_tasks++;
    if (facts.outside > 0) {
      p.outside_areas.tasks++;
      p.outside_areas.files += facts.outside;
    }
    if (facts.files === "claimed") p.figures.files_claimed++;
    if (facts.files === "not_observed") p.figures.files_not_observed++;
    if (facts.usage === "claimed") p.figures.usage_claimed++;
    for (const kind of COMMAND_KINDS) {
      const check = facts.checks[kind];
      if (!check) continue;
      p.checks[kind].observed[check.observed]++;
      p.checks[kind].claimed[check.claimed ?? "none"]++;
    }
    if (isReviewItem(task.status, facts)) this.items.push({ id: task.id, since: task.completed_at ?? "" });
  }

  addIssue(issue: Pick<IssueView, "id" | "requires_human_review">): void {
    if (issue.requires_human_review) this.items.push({ id: issue.id, since: "" });
  }

  counts(feedback: readonly VerdictLike[]): ReviewCounts {
    const verdicts = new Verdicts(feedback);
    const review = { items: this.items.length, open: 0, approved: 0, changes_requested: 0 };
    for (const item of this.items) {
      const state = verdicts.stateOf(item.id, item.since);
      if (state === "approved") review.approved++;
      else {
        review.open++;
        if (state === "changes_requested") review.changes_requested++;
      }
    }
    return { ...structuredClone(this.partial), review };
  }
}

/** The counts of a whole view: its tasks, its issues, its feedback. */
export function reviewCounts(
  view: {
    tasks: readonly (FactsTask & Pick<TaskView, "id"> & Partial<Pick<TaskView, "completed_at">>)[];
    issues: readonly Pick<IssueView, "id" | "requires_human_review">[];
  },
  feedback: readonly VerdictLike[],
): ReviewCounts {
  const tally = new ReviewTally();
  for (const task of view.tasks) tally.addTask(task, task.status === "in_progress" ? null : taskReviewFacts(task));
  for (const issue of view.issues) tally.addIssue(issue);
  return tally.counts(feedback);
}
