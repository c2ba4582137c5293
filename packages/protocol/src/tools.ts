/**
 * @module tools — the input contract of Waymark's MCP tools: one zod schema per tool, with the
 * input types inferred from them (the Worker validates with these; the WorkflowObject's RPC
 * methods take the inferred types). Text rules (bounded, well-formed, not blank) are declared
 * once here. The helper-only inputs (`snapshot`, `changes`) come from the wire contract.
 */
import { z } from "zod";
import { globProblem } from "./glob";
import { TOOL_LIMITS as LIMITS } from "./tool-limits";
import type { JsonObject } from "./views/logs";
import {
  changesSchema,
  metricsSchema,
  repositorySchema,
  snapshotSchema,
  READABLE_TEXT_RULE as TEXT_RULE,
  isReadableText as wellFormedText,
} from "./wire";

/** Agent-written text: bounded, well-formed. */
export const text = (max: number) => z.string().max(max).refine(wellFormedText, TEXT_RULE);
/** Text that must say something: not empty and not only whitespace. */
export const requiredText = (max: number, description?: string) => {
  const schema = z
    .string()
    .min(1)
    .max(max)
    .refine(wellFormedText, TEXT_RULE)
    .refine((s) => s === "" || s.trim() !== "", "must not be blank");
  return description ? schema.describe(description) : schema;
};
export const textList = () => z.array(text(LIMITS.LIST_ITEM)).max(LIMITS.LIST_ITEMS);

export const idempotencyKey = z
  .string()
  .min(1)
  .max(LIMITS.IDEMPOTENCY_KEY)
  .regex(/^[A-Za-z0-9._:-]+$/, "must use only letters, digits and . _ : -")
  .optional();

export const workflowId = z.string().min(1).max(64);
export const taskId = z.string().min(1).max(64);

/** A JSON object of bounded serialized size (metadata bags). */
export const boundedObject = () =>
  z
    .record(z.string(), z.unknown())
    .refine(
      (value) => JSON.stringify(value).length <= LIMITS.METADATA_JSON_BYTES,
      `must serialize to at most ${LIMITS.METADATA_JSON_BYTES} bytes of JSON`,
    )
    // Arguments arrive as parsed JSON, so the values are JSON values.
    .transform((value) => value as JsonObject);

/**
 * Inputs carry a description only where their name cannot say it (areas drive the scope check;
 * get_workflow's query also finds files): tools/list costs each agent context in every session.
 * docs/tools.md describes every input; the server's instructions say what idempotency_key does.
 */
export const AREAS_DESCRIPTION = "Words (auth) or path globs (src/api/**)";

const taskStatus = z.enum(["success", "partial_success", "failed"]);

export const startWorkflowInput = z.strictObject({
  name: requiredText(LIMITS.NAME),
  description: text(LIMITS.DESCRIPTION).optional(),
  plan: z
    .array(z.strictObject({ step: requiredText(LIMITS.NAME), goal: requiredText(LIMITS.SHORT_TEXT) }))
    .max(LIMITS.PLAN_STEPS)
    .optional(),
  force_new: z.boolean().optional(),
  /** Repository identity, helper-only: resume by name stays within one repository. */
  repository: repositorySchema.optional(),
  idempotency_key: idempotencyKey,
});

export const startTaskInput = z.strictObject({
  workflow_id: workflowId,
  parent_task_id: taskId.optional(),
  name: requiredText(LIMITS.NAME),
  goal: requiredText(LIMITS.LONG_TEXT),
  areas: z
    .array(
      requiredText(LIMITS.AREA).superRefine((area, ctx) => {
        const problem = globProblem(area);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      }),
    )
    .max(LIMITS.AREAS)
    .describe(AREAS_DESCRIPTION)
    .optional(),
  snapshot: snapshotSchema.optional(),
  idempotency_key: idempotencyKey,
});

export const logDecisionInput = z.strictObject({
  task_id: taskId,
  category: z.enum(["architecture", "library_choice", "trade_off", "workaround", "other"]),
  question: requiredText(LIMITS.SHORT_TEXT),
  options_considered: z.array(requiredText(LIMITS.SHORT_TEXT)).max(LIMITS.OPTIONS).optional(),
  chosen: requiredText(LIMITS.SHORT_TEXT),
  reasoning: requiredText(LIMITS.LONG_TEXT),
  trade_offs: text(LIMITS.LONG_TEXT).optional(),
  idempotency_key: idempotencyKey,
});

export const logIssueInput = z.strictObject({
  task_id: taskId,
  type: z.enum(["documentation_gap", "bug_encountered", "dependency_conflict", "unclear_requirement", "other"]),
  description: requiredText(LIMITS.LONG_TEXT),
  resolution: requiredText(LIMITS.LONG_TEXT),
  requires_human_review: z.boolean().optional(),
  idempotency_key: idempotencyKey,
});

export const logMilestoneInput = z.strictObject({
  task_id: taskId,
  message: requiredText(LIMITS.SHORT_TEXT),
  progress: z.number().min(0).max(100).optional(),
  metadata: boundedObject().optional(),
  idempotency_key: idempotencyKey,
});

const shortTextList = z.array(requiredText(LIMITS.NAME)).max(LIMITS.LIST_ITEMS * 2);

export const completeTaskInput = z.strictObject({
  task_id: taskId,
  status: taskStatus,
  outcome: z.strictObject({
    summary: requiredText(LIMITS.LONG_TEXT),
    achievements: textList().optional(),
    limitations: textList().optional(),
    manual_review_needed: z.boolean().optional(),
    manual_review_reason: text(LIMITS.SHORT_TEXT).optional(),
    next_steps: textList().optional(),
  }),
  metadata: z
    .strictObject({
      packages_added: shortTextList.optional(),
      packages_removed: shortTextList.optional(),
      commands_executed: z
        .array(requiredText(LIMITS.SHORT_TEXT))
        .max(LIMITS.LIST_ITEMS * 2)
        .optional(),
      tests_status: z.enum(["passed", "failed", "not_run"]).optional(),
    })
    .optional(),
  metrics: metricsSchema.optional(),
  changes: changesSchema.optional(),
  idempotency_key: idempotencyKey,
});

export const completeWorkflowInput = z.strictObject({
  workflow_id: workflowId,
  status: taskStatus,
  summary: requiredText(LIMITS.LONG_TEXT),
  achievements: textList().optional(),
  limitations: textList().optional(),
  idempotency_key: idempotencyKey,
});

const SELECTORS = ["workflow_id", "task_id", "query"] as const;

/** One mode per call: resume a workflow, one task, a search, or (nothing given) the open workflows. */
export const getWorkflowInput = z
  .strictObject({
    workflow_id: workflowId.optional(),
    task_id: taskId.optional(),
    query: requiredText(LIMITS.SEARCH_QUERY, "Words, or a file path").optional(),
    limit: z.number().int().min(1).max(LIMITS.SEARCH_RESULTS).optional(),
  })
  .superRefine((input, ctx) => {
    const given = SELECTORS.filter((field) => input[field] !== undefined);
    if (given.length > 1) {
      ctx.addIssue({ code: "custom", path: [], message: `give at most one of workflow_id, task_id, query (got ${given.join(", ")})` });
    }
    if (input.limit !== undefined && input.query === undefined) {
      ctx.addIssue({ code: "custom", path: ["limit"], message: "only applies with query" });
    }
  });

export type StartWorkflowInput = z.infer<typeof startWorkflowInput>;
export type StartTaskInput = z.infer<typeof startTaskInput>;
export type LogDecisionInput = z.infer<typeof logDecisionInput>;
export type LogIssueInput = z.infer<typeof logIssueInput>;
export type LogMilestoneInput = z.infer<typeof logMilestoneInput>;
export type CompleteTaskInput = z.infer<typeof completeTaskInput>;
export type CompleteWorkflowInput = z.infer<typeof completeWorkflowInput>;
