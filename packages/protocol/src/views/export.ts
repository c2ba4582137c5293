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
import {
  DEVICE_KEY_PATTERN,
  DEVICE_SIGNATURE_VERSION,
  DEVICE_SIGNED_TYPE,
  type DeviceSigned,
  NONCE_PATTERN,
  SIGNATURE_PATTERN,
} from "../device-signature";
import { EXPORT_MEMBERS, EXPORT_SCHEMA_PATH, type ExportMember, STATEMENT_TYPE, STATEMENT_VERSIONS_READ } from "../export-members";
import { countSchema, isoTimeSchema, sha256Schema, taskIdSchema, workflowIdSchema } from "./common";
import { chainHeadSchema, exportedEventSchema } from "./events";
import { feedbackViewSchema } from "./feedback";
import { decisionViewSchema, issueViewSchema, milestoneViewSchema } from "./logs";
import { reviewCountsSchema } from "./review";
import { taskViewSchema } from "./task";
import { totalsSchema } from "./totals";
import { workflowHeaderSchema } from "./workflow";

export const statementPayloadSchema = z.strictObject({
  type: z.literal(STATEMENT_TYPE),
  version: z.literal(STATEMENT_VERSIONS_READ).describe("3 names the account and the origin; 2 did not."),
  workflow_id: workflowIdSchema,
  events: countSchema.describe("How many events the export carries."),
  head: sha256Schema.describe("The chain's hash after the last of them."),
  /** The repository fingerprint the helper reported at start_workflow; null when none was. */
  repository_fingerprint: sha256Schema.nullable(),
  account: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, "must be sha256: and 64 lowercase hex digits")
    .describe('Whose record (version 3): `sha256:` and the SHA-256 (hex) of "waymark-account\\n" and the account\'s name.')
    .optional(),
  origin: z
    .string()
    .regex(/^https?:\/\/[^/]+$/, "must be an origin (scheme and host, no path)")
    .describe("The deployment that issued the export: the origin it was served from (version 3).")
    .optional(),
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

const base64Url = (pattern: RegExp, bytes: number) => z.string().regex(pattern, `must be ${bytes} bytes, base64url without padding`);

/** One payload a device signed and the edge accepted, kept whole (@waymark/protocol/device-signature DeviceSigned). */
export const deviceSignedSchema = z
  .strictObject({
    data: z
      .record(z.string(), z.unknown())
      .describe(
        "What the device signed: start_task {snapshot}, complete_task {changes, metrics}, the helper's wire data (docs/attribution.md) without the signature.",
      ),
    fingerprint: z
      .string()
      .regex(/^SHA256:[A-Za-z0-9+/]{43}$/, "must be an SSH-style SHA256: fingerprint")
      .describe("The device key's id: SHA256: and the unpadded base64 of the SHA-256 of its 32-byte public key."),
    message: z.strictObject({
      digest: sha256Schema.describe("SHA-256 (hex) of the canonical JSON of data."),
      key: base64Url(DEVICE_KEY_PATTERN, 32).describe("The device's Ed25519 public key, base64url without padding."),
      nonce: base64Url(NONCE_PATTERN, 16),
      signed_at: z.number().int().min(0).describe("When the device signed, ms since the epoch (its clock)."),
      start_nonce: base64Url(NONCE_PATTERN, 16).nullable().describe("complete_task: the nonce of the task's signed start."),
      subject: z.string().min(1),
      tool: z.enum(["start_task", "complete_task"]),
      version: z.literal(DEVICE_SIGNATURE_VERSION),
    }),
    signature: base64Url(SIGNATURE_PATTERN, 64).describe("Ed25519, base64url without padding."),
    task_id: taskIdSchema,
    type: z.literal(DEVICE_SIGNED_TYPE),
    workflow_id: workflowIdSchema,
  })
  .meta({
    id: "deviceSigned",
    description:
      "One device-signed payload (@waymark/protocol/device-signature DeviceSigned): the device's Ed25519 signature over the canonical JSON (keys sorted, no whitespace) of `message`, which names the SHA-256 of the canonical JSON of `data`. `workflow_id` and `task_id` say where it belongs and are not signed; the message's `subject` is (the workflow for start_task, the task for complete_task).",
  }) satisfies z.ZodType<DeviceSigned>;

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
  review: reviewCountsSchema
    .describe(
      "What needs a reviewer, as of chain.events (the page's head and the Markdown export show the same numbers); `waymark verify` counts it again from the records. Absent from exports written before it was.",
    )
    .optional(),
  device_signed: z
    .array(deviceSignedSchema)
    .describe(
      "Each payload a device the owner approved signed and the edge accepted (a task's start snapshot, its completion's changes and usage), kept whole so that `waymark verify` checks it against the repository's allowed signers without trusting the deployment; in the order they were recorded. Absent from exports written before they were kept.",
    )
    .optional(),
  statement: signedStatementSchema,
} satisfies Record<ExportMember | "statement", z.ZodType>;

export const exportSchema = z.strictObject(exportMembers).meta({
  title: "Waymark workflow export, version 1",
  description:
    "A workflow's JSON export (GET /s/<token>/export.json, /w/<id>/export.json, /api/workflows/<id>/export.json). Every endpoint serves this file at /schemas/export-v1.json; docs/verification.md says what each member means and how `waymark verify` checks it. Version 1 changes only by adding optional members; a change of meaning is a new version at a new path.",
});

/** A JSON export as its schema reads it. */
export type ExportView = z.infer<typeof exportSchema>;

/** The export's JSON Schema (2020-12), as docs/schemas/export-v1.json holds it. */
export function exportJsonSchema(): Record<string, unknown> {
  const { $schema, title, description, ...rest } = z.toJSONSchema(exportSchema, { target: "draft-2020-12" });
  return { $schema, $id: "urn:waymark:schema:export:1", title, description, ...rest };
}
