/**
 * @module domain/view
 * The read model of one workflow: what get_workflow, pages, exports, events and the account
 * index are made of. It is defined once, as zod schemas in @waymark/protocol/views/* (the export's
 * JSON Schema is generated from them); the Worker builds these types and never parses them on
 * its write path. Both the workflow object and the account index speak it, so it sits below both.
 */

export { roundCost } from "@waymark/protocol/cost";
export type { WorkflowRepository } from "@waymark/protocol/views/common";
export type { EventType, WorkflowEvent } from "@waymark/protocol/views/events";
export type {
  FeedbackAuthor,
  FeedbackChannel,
  FeedbackLocation,
  FeedbackTarget,
  FeedbackVerdict,
  FeedbackView,
} from "@waymark/protocol/views/feedback";
export type { DecisionView, IssueView, JsonObject, MilestoneView } from "@waymark/protocol/views/logs";
export type { TaskEntry, TaskPage, WorkflowHead, WorkflowSummary, WorkflowView } from "@waymark/protocol/views/reads";
export type { CommandRunView, TaskCommandsView, TaskMetrics, TaskView, Verification } from "@waymark/protocol/views/task";
export type { Totals } from "@waymark/protocol/views/totals";
export type { PlanStep, WorkflowHeader, WorkflowOutcome, WorkflowStatus } from "@waymark/protocol/views/workflow";

/** Who reads through the paged reads: an account (must own the workflow) or a share link's reader (the object re-checks the token). */
export type Reader = string | { share_token: string };
