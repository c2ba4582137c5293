/**
 * @module views/reads
 * How the views are read together: the whole view of a workflow, the paged reads a reader gets it
 * in (the head first, then the timeline a page of tasks at a time; each record array a page at a
 * time), the MCP resource `waymark://workflows/{id}`, and what the account index keeps per
 * workflow (the dashboard, /api/workflows).
 */
import { z } from "zod";
import type { RecordKind } from "../export-members";
import { countSchema, isoTimeSchema, stringsSchema, workflowIdSchema, workflowRepositorySchema } from "./common";
import { chainHeadSchema, type WorkflowEvent, workflowEventSchema } from "./events";
import { feedbackViewSchema } from "./feedback";
import { decisionViewSchema, issueViewSchema, milestoneViewSchema } from "./logs";
import { reviewCountsSchema } from "./review";
import { lineTotalsSchema, taskViewSchema } from "./task";
import { totalsSchema } from "./totals";
import { workflowHeaderSchema, workflowStatusSchema } from "./workflow";

/** Each array of records (RECORD_KINDS: the whole view's, the export's, the resource's) and the view of its rows. */
export const recordSchemas = {
  tasks: taskViewSchema,
  decisions: decisionViewSchema,
  issues: issueViewSchema,
  milestones: milestoneViewSchema,
} as const satisfies Record<RecordKind, z.ZodType>;
export type RecordView = z.infer<(typeof recordSchemas)[RecordKind]>;

export const workflowViewSchema = z.strictObject({
  workflow: workflowHeaderSchema,
  tasks: z.array(taskViewSchema),
  decisions: z.array(decisionViewSchema),
  issues: z.array(issueViewSchema),
  milestones: z.array(milestoneViewSchema),
  totals: totalsSchema,
  last_seq: countSchema,
  chain: chainHeadSchema.optional(),
  /** The whole event log, in JSON exports only (with each event's hash). */
  events: z.array(workflowEventSchema).optional(),
});
/** The whole view; its events typed as the code that writes the log handles them (./events.ts WorkflowEvent). */
export type WorkflowView = Omit<z.infer<typeof workflowViewSchema>, "events"> & { events?: WorkflowEvent[] };

const pageLinkSchema = z.strictObject({ next_cursor: z.string(), next: z.string() });
/**
 * `waymark://workflows/{id}`: the whole view without its events, each array holding its first page;
 * `truncated` names the next page of each array that has more.
 */
export const workflowResourceSchema = workflowViewSchema.omit({ events: true }).extend({
  truncated: z
    .strictObject({
      tasks: pageLinkSchema.optional(),
      decisions: pageLinkSchema.optional(),
      issues: pageLinkSchema.optional(),
      milestones: pageLinkSchema.optional(),
      how: z.string(),
    })
    .optional(),
});

/** `waymark://workflows/{id}/{kind}{?cursor}`: the next page of one array; `next` null on the last. */
export function recordPageSchema(kind: RecordKind) {
  return z.strictObject({ [kind]: z.array(recordSchemas[kind]), next_cursor: z.string().nullable(), next: z.string().nullable() });
}

export const SHARE_STATUSES = ["active", "revoked", "expired", "none"] as const;
/** What the owner sees of a share link; `token` is null when it cannot be re-derived (secret changed) or the link is not active. */
export const shareInfoSchema = z.strictObject({
  status: z.enum(SHARE_STATUSES),
  token: z.string().nullable(),
  created_at: isoTimeSchema.nullable(),
  expires_at: isoTimeSchema.nullable(),
  revoked_at: isoTimeSchema.nullable(),
});
export type ShareInfo = z.infer<typeof shareInfoSchema>;
export type ShareStatus = ShareInfo["status"];

/**
 * What a reader gets before the tasks (every figure is a running total or one row, so it costs the
 * same for 1 task or 5,000). Tasks come after it in pages of entries.
 */
export const workflowHeadSchema = z.strictObject({
  workflow: workflowHeaderSchema,
  totals: totalsSchema,
  last_seq: countSchema,
  chain: chainHeadSchema,
  /** How many tasks the pages will yield. */
  task_count: countSchema,
  /** Lines added and removed summed over the top-level tasks that measured them; null when none did. */
  line_totals: lineTotalsSchema.nullable(),
  /** Review items as recorded (whatever reviewers answered since): tasks that asked for manual review, issues that require it. */
  review_items: z.strictObject({ tasks: countSchema, issues: countSchema }),
  /** What needs a reviewer, counted over the whole workflow at this state (../review-counts.ts). */
  review: reviewCountsSchema,
  /** The reviewers' feedback, oldest first (the owner's read and a share link's). */
  feedback: z.array(feedbackViewSchema).optional(),
  /** The share link's state: the owner's read only. */
  share: shareInfoSchema.optional(),
});
export type WorkflowHead = z.infer<typeof workflowHeadSchema>;

/** One task in timeline order, with its own logs (each oldest first). */
export const taskEntrySchema = z.strictObject({
  task: taskViewSchema,
  /** 0 for a top-level task, 1 for its subtasks, … */
  depth: countSchema,
  decisions: z.array(decisionViewSchema),
  issues: z.array(issueViewSchema),
  milestones: z.array(milestoneViewSchema),
  /** How many direct subtasks follow it (depth + 1). */
  subtasks: countSchema,
  /** Of the paths this task lists as added, modified or deleted, those a subtask (at any depth) lists too. */
  paths_in_subtasks: stringsSchema,
  /**
   * Present when the read listed only the first files of the task (a page's bound): how many of its
   * changed files it left out; the task's own read lists them.
   */
  files_unlisted: countSchema.optional(),
});
export type TaskEntry = z.infer<typeof taskEntrySchema>;

/** A page of the timeline: top-level tasks by start, each followed depth-first by its subtasks; `next_cursor` null on the last. */
export const taskPageSchema = z.strictObject({ entries: z.array(taskEntrySchema), next_cursor: z.string().nullable() });
export type TaskPage = z.infer<typeof taskPageSchema>;

/** What the account index keeps per workflow (the dashboard, /api/workflows, get_workflow without an id). */
export const workflowSummarySchema = z.strictObject({
  id: workflowIdSchema,
  name: z.string(),
  status: workflowStatusSchema,
  created_at: isoTimeSchema,
  updated_at: isoTimeSchema,
  open_tasks: countSchema,
  tasks: countSchema,
  reviews_needed: countSchema,
  input_tokens: countSchema,
  output_tokens: countSchema,
  cost_usd: z.number().min(0),
  /** Bytes of the workflow's event log and snapshots: counts toward the account's storage quota. */
  bytes_stored: countSchema,
  /**
   * The repository start_workflow reported (its fingerprint is what resume-by-name compares; its
   * remote and branch tell apart workflows of one name on the dashboard). Absent or null: none reported.
   */
  repository: workflowRepositorySchema.nullable().optional(),
  /** Distinct files changed by its tasks (absent in pushes from objects older than this field). */
  files_changed: countSchema.optional(),
});
export type WorkflowSummary = z.infer<typeof workflowSummarySchema>;

/** Why a workflow matched a dashboard search: the best memory hit and the changed paths found. */
export const dashboardMatchSchema = z.strictObject({
  text: z.string().optional(),
  paths: z.array(z.strictObject({ path: z.string(), task_id: z.string(), task_name: z.string(), status: z.string() })).optional(),
});
export type DashboardMatch = z.infer<typeof dashboardMatchSchema>;

/** A dashboard row (the owner's dashboard, /api/workflows): the summary, its share link's state without the token, why it matched. */
export const dashboardRowSchema = workflowSummarySchema.extend({
  share: shareInfoSchema.omit({ token: true }),
  match: dashboardMatchSchema.optional(),
});
export type DashboardRow = z.infer<typeof dashboardRowSchema>;

/** One page of the dashboard's rows (LIMITS.DASHBOARD_PAGE), newest activity first; `total` rows match over all pages. */
export const dashboardPageSchema = z.strictObject({
  rows: z.array(dashboardRowSchema),
  total: countSchema,
  page: countSchema,
  pages: countSchema,
  /** With a path filter: false when the path lookup stopped at its bound (the newest completions only, older ones not searched). */
  paths_searched_all: z.boolean().optional(),
});
export type DashboardPage = z.infer<typeof dashboardPageSchema>;

/** Usage over all the account's workflows. */
export const accountTotalsSchema = z.strictObject({
  workflows: countSchema,
  open_workflows: countSchema,
  tasks: countSchema,
  input_tokens: countSchema,
  output_tokens: countSchema,
  cost_usd: z.number().min(0),
  files_changed: countSchema,
  /** Review items (tasks asking for manual review, issues flagged for a human) summed over the workflows. */
  reviews_needed: countSchema,
});
export type AccountTotals = z.infer<typeof accountTotalsSchema>;
