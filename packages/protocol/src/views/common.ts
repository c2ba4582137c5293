/**
 * @module views/common
 * The pieces the read model is built of (times, counts, ids, digests, an approved device, a
 * repository), as zod schemas. Each carries the name (`.meta({ id })`) under which
 * docs/schemas/export-v1.json, generated from these schemas, lists it in `$defs`.
 *
 * The views are the contract of what the edge serves (get_workflow, the exports, the events, the
 * pages' data): the Worker builds them as TypeScript types only (no parsing on its write path);
 * tests, `waymark verify` and the helper parse with the schemas.
 */
import { z } from "zod";
import { repositorySchema } from "../wire";

/** ISO 8601 in UTC with milliseconds: `Date.prototype.toISOString`, the only way the edge writes a time. */
export const isoTimeSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "must be an ISO 8601 time in UTC with milliseconds")
  .meta({ id: "time" });

export const sha256Schema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "must be a 64-digit lowercase hex SHA-256")
  .meta({ id: "sha256" });

export const countSchema = z.number().int().min(0).meta({ id: "count" });

export const stringsSchema = z.array(z.string()).meta({ id: "strings" });

/** The ids the edge makes (src/ids.ts): base32, a prefix per kind. */
export const workflowIdSchema = z
  .string()
  .regex(/^wf_[a-z2-7]{20}$/, "must be a workflow id (wf_…)")
  .meta({ id: "workflowId" });
export const taskIdSchema = z
  .string()
  .regex(/^tk_[a-z2-7]{20}_[a-z2-7]{8}$/, "must be a task id (tk_…)")
  .meta({ id: "taskId" });
export const rowIdSchema = z
  .string()
  .regex(/^(dc|is|ms|fb)_[a-z2-7]{12}$/, "must be a decision, issue, milestone or feedback id")
  .meta({ id: "rowId" });

/** An approved device as a record names it. */
export const deviceRefSchema = z
  .strictObject({
    name: z.string(),
    fingerprint: z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, "must be an SSH-style SHA256: fingerprint"),
  })
  .meta({
    id: "device",
    description: "An approved device: the owner's name for it and its Ed25519 key's fingerprint (SHA256:…, as ssh-keygen -l prints it).",
  });
export type DeviceRef = z.infer<typeof deviceRefSchema>;

/** The repository the helper reported (@waymark/protocol/wire): what a workflow shows. */
export const workflowRepositorySchema = repositorySchema.meta({
  id: "repository",
  description: "The repository as the helper identified it: fingerprint (docs/attribution.md), remote without credentials, branch.",
});
export type WorkflowRepository = z.infer<typeof workflowRepositorySchema>;
