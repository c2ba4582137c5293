/**
 * @module views/events
 * A workflow's event log as the edge serves it (the live feed, the events resource, the JSON
 * export): each event carries the whole entity after its change, so a follower can upsert by id,
 * and its link in the hash chain (@waymark/protocol/chain); the chain's head is what an export is
 * verified against.
 */
import { z } from "zod";
import { countSchema, isoTimeSchema, sha256Schema, taskIdSchema } from "./common";
import { feedbackViewSchema } from "./feedback";
import { decisionViewSchema, issueViewSchema, milestoneViewSchema } from "./logs";
import { taskViewSchema } from "./task";
import { workflowHeaderSchema } from "./workflow";

/** Every event type, each with the entity its data carries. */
export const EVENT_TYPES = [
  "workflow.started",
  "workflow.completed",
  "task.started",
  "task.completed",
  /** A completed task's record changed afterwards (e.g. a later task reported an overlap with it). */
  "task.updated",
  "decision.logged",
  "issue.logged",
  "milestone.logged",
  /** A reviewer answered from the owner view. */
  "feedback.created",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The events of some types, all carrying one kind of entity. */
function eventsOf<const Types extends readonly [EventType, ...EventType[]], Data extends z.ZodType, Hash extends z.ZodType>(
  types: Types,
  data: Data,
  hash: Hash,
) {
  return z.strictObject({
    seq: z.number().int().min(1),
    at: isoTimeSchema,
    type: z.enum(types),
    task_id: taskIdSchema.nullable(),
    data: data.describe("The whole entity after the change."),
    hash,
  });
}

/** One entry of the log, its data typed by its type; `hash` as given (the export requires it). */
function eventSchemaWith<Hash extends z.ZodType>(hash: Hash) {
  return z.discriminatedUnion("type", [
    eventsOf(["workflow.started", "workflow.completed"], workflowHeaderSchema, hash),
    eventsOf(["task.started", "task.completed", "task.updated"], taskViewSchema, hash),
    eventsOf(["decision.logged"], decisionViewSchema, hash),
    eventsOf(["issue.logged"], issueViewSchema, hash),
    eventsOf(["milestone.logged"], milestoneViewSchema, hash),
    eventsOf(["feedback.created"], feedbackViewSchema, hash),
  ]);
}

/** An event as the live feed and the events resource serve it (`hash`: its link in the chain, absent only while it is written). */
export const workflowEventSchema = eventSchemaWith(sha256Schema.optional());
/** An event as the JSON export carries it: always with its hash. */
export const exportedEventSchema = eventSchemaWith(sha256Schema).meta({ id: "event" });

type EventShape = z.infer<typeof workflowEventSchema>;
/** One entry of the append-only log: any type with any entity, as code that writes the log handles them. */
export type WorkflowEvent = Omit<EventShape, "type" | "data"> & { type: EventType; data: EventShape["data"] };

/**
 * A page of the log after a seq (the events resource, the pages' catch-up): at most a bounded
 * number of events and bytes; `next_seq` to continue from, `has_more` when the log goes on.
 */
export const eventsPageSchema = z.strictObject({ events: z.array(workflowEventSchema), next_seq: countSchema, has_more: z.boolean() });
export type EventsPage = Omit<z.infer<typeof eventsPageSchema>, "events"> & { events: WorkflowEvent[] };

/** The head of the event log's hash chain: what an export is verified against. */
export const chainHeadSchema = z
  .strictObject({
    algorithm: z.literal("sha256"),
    genesis: sha256Schema,
    head: sha256Schema.describe("The chain's hash after event `events`."),
    events: countSchema,
  })
  .meta({ id: "chain" });
export type ChainHead = z.infer<typeof chainHeadSchema>;
