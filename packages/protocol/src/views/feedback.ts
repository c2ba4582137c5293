/**
 * @module views/feedback
 * A reviewer's feedback, written in the owner view and delivered to the agent once: a comment or a
 * verdict on the workflow, a task, a decision or an issue.
 */
import { z } from "zod";
import { isoTimeSchema, rowIdSchema } from "./common";

export const FEEDBACK_TARGETS = ["workflow", "task", "decision", "issue"] as const;
export const FEEDBACK_VERDICTS = ["comment", "approved", "changes_requested"] as const;

/**
 * Where feedback was posted: the owner's page (a person signed in to the dashboard), or the review
 * app inside an MCP client (`mcp_app`), where the server cannot tell a person from the agent that
 * holds the same credential: a verdict sent there is recorded as a comment (src/workflow/feedback.ts).
 */
export const FEEDBACK_CHANNELS = ["page", "mcp_app"] as const;

/** Who posted feedback: the credential behind the request and how it was presented. */
export const feedbackAuthorSchema = z
  .strictObject({
    /** A managed token (named by its id) or a bootstrap token of the deployment's configuration (not named). */
    kind: z.enum(["managed_token", "bootstrap_token"]),
    /** The managed token's id; null for a bootstrap token (its digest would let anyone test guesses of a weak one). */
    credential: z.string().nullable(),
    /** A dashboard session signed in with it, the token itself as a bearer, or an OAuth client approved with it. */
    via: z.enum(["session", "token", "oauth"]),
    client: z.string().describe("An OAuth client's id.").optional(),
  })
  .describe(
    "Who posted it: the credential behind the request (a managed token by its id; a bootstrap token unnamed) and how it was presented. Absent for feedback recorded before authors were.",
  );
export type FeedbackAuthor = z.infer<typeof feedbackAuthorSchema>;

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
    author: feedbackAuthorSchema.optional(),
    channel: z
      .enum(FEEDBACK_CHANNELS)
      .describe(
        "Where it was posted: the owner's page (a person signed in; the only channel whose verdicts count) or the review app in an MCP client (a verdict sent there is recorded as a comment). Absent as author is.",
      )
      .optional(),
    requested_verdict: z
      .enum(["approved", "changes_requested"])
      .describe(
        "The verdict the sender asked for, when the edge recorded it as a comment: sent from an MCP client, or from a page session signed in with the credential that recorded the task or issue under review (the server cannot tell a person from the agent holding it).",
      )
      .optional(),
  })
  .meta({ id: "feedback" });
export type FeedbackView = z.infer<typeof feedbackViewSchema>;
/** What a reviewer's feedback is about. */
export type FeedbackTarget = FeedbackView["target"];
/** A plain comment, or a verdict on a review item. */
export type FeedbackVerdict = FeedbackView["verdict"];
export type FeedbackChannel = (typeof FEEDBACK_CHANNELS)[number];
