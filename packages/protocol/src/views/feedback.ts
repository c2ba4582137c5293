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
 * holds the same credential: a verdict sent there is recorded as a comment (src/workflow/feedback.ts);
 * or a review on a pull request (`pull_request`), delivered by the account's GitHub receiver
 * (src/account/github-receiver.ts) with the GitHub user who wrote it.
 */
export const FEEDBACK_CHANNELS = ["page", "mcp_app", "pull_request"] as const;

/** Who posted feedback: the credential behind the request and how it was presented. */
export const feedbackAuthorSchema = z
  .strictObject({
    /** A managed token (named by its id) or a bootstrap token of the deployment's configuration (not named). */
    kind: z.enum(["managed_token", "bootstrap_token"]),
    /** The managed token's id; null for a bootstrap token (its digest would let anyone test guesses of a weak one). */
    credential: z.string().nullable(),
    /**
     * A dashboard session signed in with it, the token itself as a bearer, an OAuth client approved
     * with it, or the account's GitHub receiver configured with it (`github`).
     */
    via: z
      .enum(["session", "token", "oauth", "github"])
      .describe("github: delivered by the account's GitHub receiver, configured with this credential."),
    client: z.string().describe("An OAuth client's id.").optional(),
    github_user: z
      .strictObject({ login: z.string(), id: z.number().int() })
      .describe("via github: the GitHub user who wrote the review or comment, as GitHub's signed delivery names them.")
      .optional(),
  })
  .describe(
    "Who posted it: the credential behind the request (a managed token by its id; a bootstrap token unnamed) and how it was presented. Absent for feedback recorded before authors were.",
  );
export type FeedbackAuthor = z.infer<typeof feedbackAuthorSchema>;

/** Where on the code a pull-request review comment was: the file, the line (null: the whole file), the commit it was made on. */
export const feedbackLocationSchema = z
  .strictObject({
    path: z.string(),
    line: z.number().int().min(1).nullable(),
    commit: z
      .string()
      .regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, "must be a full commit id")
      .nullable(),
  })
  .describe("A pull-request review comment's file, line (null: on the whole file) and the commit it was made on.");
export type FeedbackLocation = z.infer<typeof feedbackLocationSchema>;

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
        "Where it was posted: the owner's page (a person signed in), a review on a pull request (a GitHub user; verdicts from these two count), or the review app in an MCP client (a verdict sent there is recorded as a comment). Absent as author is.",
      )
      .optional(),
    location: feedbackLocationSchema.optional(),
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
