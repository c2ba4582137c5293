/**
 * @module views/workflow
 * A workflow's header as the edge shows it: name, plan, status, outcome, times and the repository
 * the helper reported. `updated_at` is when the agent last wrote (reviewer feedback does not count).
 */
import { z } from "zod";
import { isoTimeSchema, stringsSchema, workflowIdSchema, workflowRepositorySchema } from "./common";

export const WORKFLOW_STATUSES = ["active", "success", "partial_success", "failed"] as const;
export const workflowStatusSchema = z.enum(WORKFLOW_STATUSES).meta({ id: "workflowStatus" });
export type WorkflowStatus = z.infer<typeof workflowStatusSchema>;

export const planStepSchema = z.strictObject({ step: z.string(), goal: z.string() });
export type PlanStep = z.infer<typeof planStepSchema>;

export const workflowOutcomeSchema = z.strictObject({ summary: z.string(), achievements: stringsSchema, limitations: stringsSchema });
export type WorkflowOutcome = z.infer<typeof workflowOutcomeSchema>;

export const workflowHeaderSchema = z
  .strictObject({
    id: workflowIdSchema,
    name: z.string(),
    description: z.string().nullable(),
    plan: z.array(planStepSchema),
    status: workflowStatusSchema,
    outcome: workflowOutcomeSchema.nullable(),
    created_at: isoTimeSchema,
    completed_at: isoTimeSchema.nullable(),
    updated_at: isoTimeSchema.describe("When the agent last wrote (reviewer feedback does not count)."),
    /** The repository the helper reported at start_workflow (absent: none reported). */
    repository: workflowRepositorySchema.nullable().optional(),
  })
  .meta({ id: "workflow" });
export type WorkflowHeader = z.infer<typeof workflowHeaderSchema>;
