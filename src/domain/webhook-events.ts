/**
 * @module domain/webhook-events
 * What a webhook can subscribe to, and which of a workflow's events raise a notification: an
 * issue that needs human review, a task that asks for review or failed, a completed workflow,
 * a reviewer's feedback. Run by the workflow object on each push (a notification's `key` makes
 * a replayed push deliver nothing twice); the account object queues the deliveries.
 */
import type { FeedbackView, IssueView, TaskView, WorkflowEvent, WorkflowHeader } from "./view";

export const WEBHOOK_EVENTS = [
  "issue.needs_review",
  "task.failed",
  "workflow.completed",
  "task.review_requested",
  "feedback.created",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What happened, as the workflow object reports it; `key` makes a replayed push deliver nothing twice. */
export interface Notification {
  key: string;
  event: WebhookEvent;
  workflow: { id: string; name: string; status: string };
  task?: { id: string; name: string; status: string; summary: string | null };
  issue?: { id: string; task_id: string; type: string; description: string; resolution: string };
  /** task.review_requested: why the task or issue asks for a human. */
  review?: { reason: string };
  feedback?: Pick<FeedbackView, "id" | "target" | "target_id" | "verdict" | "body" | "author" | "channel">;
}

export function notificationsFromEvents(events: readonly WorkflowEvent[], workflow: WorkflowHeader): Notification[] {
  const about = { id: workflow.id, name: workflow.name, status: workflow.status };
  const out: Notification[] = [];
  for (const event of events) {
    const key = `${workflow.id}:${event.seq}`;
    if (event.type === "issue.logged") {
      const issue = event.data as IssueView;
      if (!issue.requires_human_review) continue;
      const about_issue = {
        id: issue.id,
        task_id: issue.task_id,
        type: issue.type,
        description: issue.description,
        resolution: issue.resolution,
      };
      out.push({ key, event: "issue.needs_review", workflow: about, issue: about_issue });
      // One event raises two notifications: each needs its own key (deliveries are unique per webhook and key).
      out.push({
        key: `${key}:review`,
        event: "task.review_requested",
        workflow: about,
        issue: about_issue,
        review: { reason: issue.description },
      });
    } else if (event.type === "task.completed") {
      const task = event.data as TaskView;
      const aboutTask = { id: task.id, name: task.name, status: task.status, summary: task.outcome?.summary ?? null };
      if (task.status === "failed") out.push({ key, event: "task.failed", workflow: about, task: aboutTask });
      if (task.outcome?.manual_review_needed) {
        const reason = task.outcome.manual_review_reason || "manual review requested";
        out.push({ key: `${key}:review`, event: "task.review_requested", workflow: about, task: aboutTask, review: { reason } });
      }
    } else if (event.type === "feedback.created") {
      const f = event.data as FeedbackView;
      out.push({
        key,
        event: "feedback.created",
        workflow: about,
        feedback: {
          id: f.id,
          target: f.target,
          target_id: f.target_id,
          verdict: f.verdict,
          body: f.body,
          author: f.author,
          channel: f.channel,
        },
      });
    } else if (event.type === "workflow.completed") {
      out.push({ key, event: "workflow.completed", workflow: about });
    }
  }
  return out;
}

export function webhookEventsProblem(events: unknown): string | null {
  if (events === undefined || events === null) return null;
  if (!Array.isArray(events) || events.length === 0) return `events: must be a non-empty array of: ${WEBHOOK_EVENTS.join(", ")}`;
  const unknown = events.filter((e) => !(WEBHOOK_EVENTS as readonly unknown[]).includes(e));
  return unknown.length > 0 ? `events: unknown event(s) ${unknown.map(String).join(", ")}; accepted: ${WEBHOOK_EVENTS.join(", ")}` : null;
}
