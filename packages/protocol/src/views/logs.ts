/**
 * @module views/logs
 * What an agent logs during a task, as the edge shows it: decisions, issues and milestones, each
 * with its task and creation time (listed by creation time, then id).
 */
import { z } from "zod";
import { isoTimeSchema, rowIdSchema, stringsSchema, taskIdSchema } from "./common";

export const DECISION_CATEGORIES = ["architecture", "library_choice", "trade_off", "workaround", "other"] as const;
export const ISSUE_TYPES = ["documentation_gap", "bug_encountered", "dependency_conflict", "unclear_requirement", "other"] as const;

export const decisionViewSchema = z
  .strictObject({
    id: rowIdSchema,
    task_id: taskIdSchema,
    category: z.enum(DECISION_CATEGORIES),
    question: z.string(),
    options_considered: stringsSchema,
    chosen: z.string(),
    reasoning: z.string(),
    trade_offs: z.string().nullable(),
    created_at: isoTimeSchema,
  })
  .meta({ id: "decision" });
export type DecisionView = z.infer<typeof decisionViewSchema>;

export const issueViewSchema = z
  .strictObject({
    id: rowIdSchema,
    task_id: taskIdSchema,
    type: z.enum(ISSUE_TYPES),
    description: z.string(),
    resolution: z.string(),
    requires_human_review: z.boolean(),
    created_at: isoTimeSchema,
  })
  .meta({ id: "issue" });
export type IssueView = z.infer<typeof issueViewSchema>;

/**
 * A JSON object from an agent, as sent. Typed shallowly on purpose: a recursive type is too deep
 * for the Durable Objects' RPC stub types.
 */
export type JsonObject = Record<string, string | number | boolean | null | object>;
const jsonObjectSchema = z.record(z.string(), z.unknown()) as unknown as z.ZodType<JsonObject>;

export const milestoneViewSchema = z
  .strictObject({
    id: rowIdSchema,
    task_id: taskIdSchema,
    message: z.string(),
    progress: z.number().min(0).max(100).nullable(),
    metadata: jsonObjectSchema.nullable().describe("The agent's own JSON object, as sent."),
    created_at: isoTimeSchema,
  })
  .meta({ id: "milestone" });
export type MilestoneView = z.infer<typeof milestoneViewSchema>;
