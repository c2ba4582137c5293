/**
 * @module views/export
 * A workflow's JSON export (GET /s/<token>/export.json, /w/<id>/export.json,
 * /api/workflows/<id>/export.json) and the deployment's signed statement about it
 * (@waymark/protocol/statement). docs/schemas/export-v1.json is generated from `exportSchema`
 * (`npm run schemas`; CI checks it is current) and every endpoint serves it at
 * /schemas/export-v1.json. Version 1 changes only by adding optional members: a new member goes
 * in `exportSchema` (and EXPORT_MEMBERS, so the statement covers it), then `npm run schemas`.
 */
import { z } from "zod";
import { EXPORT_MEMBERS, EXPORT_SCHEMA_PATH, type ExportMember, STATEMENT_TYPE, STATEMENT_VERSION } from "../export-members";
import { countSchema, isoTimeSchema, sha256Schema, workflowIdSchema } from "./common";
import { chainHeadSchema, exportedEventSchema } from "./events";
import { feedbackViewSchema } from "./feedback";
import { decisionViewSchema, issueViewSchema, milestoneViewSchema } from "./logs";
import { taskViewSchema } from "./task";
import { totalsSchema } from "./totals";
import { workflowHeaderSchema } from "./workflow";

export const statementPayloadSchema = z.strictObject({
  type: z.literal(STATEMENT_TYPE),
  version: z.literal(STATEMENT_VERSION),
  workflow_id: workflowIdSchema,
  events: countSchema.describe("How many events the export carries."),
  head: sha256Schema.describe("The chain's hash after the last of them."),
  /** The repository fingerprint the helper reported at start_workflow; null when none was. */
  repository_fingerprint: sha256Schema.nullable(),
  /** When the edge signed. */
  issued_at: isoTimeSchema,
  content: z
    .partialRecord(z.enum(EXPORT_MEMBERS), sha256Schema)
    .describe("SHA-256 (hex) of each other member as compact JSON (JSON.stringify, the export's key order)."),
});
export type StatementPayload = z.infer<typeof statementPayloadSchema>;

export const signedStatementSchema = z
  .strictObject({
    payload: statementPayloadSchema,
    alg: z.literal("EdDSA"),
    kid: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, "must be an RFC 7638 thumbprint")
      .describe("The key's RFC 7638 thumbprint."),
    signature: z
      .string()
      .regex(/^[A-Za-z0-9_-]{86}$/, "must be a 64-byte signature, base64url without padding")
      .describe("Ed25519, base64url without padding."),
  })
  .meta({
    id: "statement",
    description:
      "Signed by the deployment over canonical JSON of `payload` (keys sorted, no whitespace), Ed25519; its public keys are at /.well-known/waymark-signing-keys.json.",
  });
export type SignedStatement = z.infer<typeof signedStatementSchema>;

/** The export's members: exactly EXPORT_MEMBERS (what the statement covers) and the statement (`satisfies` fails on one more or one less). */
const exportMembers = {
  $schema: z
    .string()
    .regex(/\/schemas\/export-v1\.json$/, `must end with ${EXPORT_SCHEMA_PATH}`)
    .describe("The URL of this schema on the endpoint that wrote the export."),
  workflow: workflowHeaderSchema,
  tasks: z.array(taskViewSchema).describe("Every task, by start time then id; each lists all its files."),
  decisions: z.array(decisionViewSchema).describe("By creation time, then id."),
  issues: z.array(issueViewSchema).describe("By creation time, then id."),
  milestones: z.array(milestoneViewSchema).describe("By creation time, then id."),
  totals: totalsSchema,
  last_seq: countSchema.describe("The event the workflow, totals and feedback were read at (equal to chain.events)."),
  chain: chainHeadSchema,
  events: z
    .array(exportedEventSchema)
    .describe(
      "The whole event log from event 1, hash-chained; it may run past chain.events when the workflow changed while the export was written.",
    ),
  feedback: z.array(feedbackViewSchema).describe("Reviewers' feedback, oldest first.").optional(),
  statement: signedStatementSchema,
} satisfies Record<ExportMember | "statement", z.ZodType>;

export const exportSchema = z.strictObject(exportMembers).meta({
  title: "Waymark workflow export, version 1",
  description:
    "A workflow's JSON export (GET /s/<token>/export.json, /w/<id>/export.json, /api/workflows/<id>/export.json). Every endpoint serves this file at /schemas/export-v1.json; docs/verification.md says what each member means and how `waymark verify` checks it. Version 1 changes only by adding optional members; a change of meaning is a new version at a new path.",
});

/** The export's JSON Schema (2020-12), as docs/schemas/export-v1.json holds it. */
export function exportJsonSchema(): Record<string, unknown> {
  const { $schema, title, description, ...rest } = z.toJSONSchema(exportSchema, { target: "draft-2020-12" });
  return { $schema, $id: "urn:waymark:schema:export:1", title, description, ...rest };
}
