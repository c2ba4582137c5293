import { z } from "zod";
import { LIMITS } from "../limits";
import type { JsonObject } from "../workflow/view";

// C0 controls other than tab, newline and carriage return; they have no place in a record meant to be read.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const wellFormedText = (s: string) => s.isWellFormed() && !CONTROL_CHARACTERS.test(s);
const TEXT_RULE = "must be valid Unicode text without control characters";

/** Agent-written text: bounded, well-formed. */
export const text = (max: number, description?: string) => {
  const schema = z.string().max(max).refine(wellFormedText, TEXT_RULE);
  return description ? schema.describe(description) : schema;
};
export const requiredText = (max: number, description?: string) => {
  const schema = z.string().min(1).max(max).refine(wellFormedText, TEXT_RULE);
  return description ? schema.describe(description) : schema;
};
export const textList = (description?: string) => {
  const schema = z.array(text(LIMITS.LIST_ITEM)).max(LIMITS.LIST_ITEMS);
  return description ? schema.describe(description) : schema;
};

export const idempotencyKey = z
  .string()
  .min(1)
  .max(LIMITS.IDEMPOTENCY_KEY)
  .regex(/^[A-Za-z0-9._:-]+$/, "must use only letters, digits and . _ : -")
  .optional();

export const workflowId = z.string().min(1).max(64);
export const taskId = z.string().min(1).max(64);

/** A JSON object of bounded serialized size (metadata bags). */
export const boundedObject = (description: string) =>
  z
    .record(z.string(), z.unknown())
    .refine(
      (value) => JSON.stringify(value).length <= LIMITS.METADATA_JSON_BYTES,
      `must serialize to at most ${LIMITS.METADATA_JSON_BYTES} bytes of JSON`,
    )
    // Arguments arrive as parsed JSON, so the values are JSON values.
    .transform((value) => value as JsonObject)
    .describe(description);

// ── Helper data (docs/attribution.md): declared once, in the shared wire contract ──

export { changesSchema, HELPER_ONLY, METRICS_DESCRIPTION, metricsSchema, snapshotSchema } from "@waymark/protocol/wire";
