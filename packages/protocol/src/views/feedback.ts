/**
 * @module views/feedback
 * A reviewer's feedback, written in the owner view and delivered to the agent once: a comment or a
 * verdict on the workflow, a task, a decision or an issue.
 */
import { z } from "zod";
import { isoTimeSchema, rowIdSchema } from "./common";

export const FEEDBACK_TARGETS = ["workflow", "task", "decision", "issue"] as const;
export const FEEDBACK_VERDICTS = ["comment", "approved", "changes_requested"] as const;

export const feedbackViewSchema = z
  .strictObject({
    id: rowIdSchema,
    target: z.enum(FEEDBACK_TARGETS),
    /** The id of the workflow, task, decision or issue it is about. */
    target_id: z.string(),
    verdict: z.enum(FEEDBACK_VERDICTS),
    body: z.string(),
    created_at: isoTimeSchema,
    delivered_at: isoTimeSchema.nullable().describe("When an agent's tool result carried it (recorded without an event)."),
  })
  .meta({ id: "feedback" });
export type FeedbackView = z.infer<typeof feedbackViewSchema>;
/** What a reviewer's feedback is about. */
export type FeedbackTarget = FeedbackView["target"];
/** A plain comment, or a verdict on a review item. */
export type FeedbackVerdict = FeedbackView["verdict"];
