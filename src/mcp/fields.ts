import { z } from "zod";
import { repoPathProblem } from "../domain/paths";
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

// ── Helper data (docs/attribution.md) ───────────────────────────────────────

const repoPath = z.string().superRefine((path, ctx) => {
  const problem = repoPathProblem(path);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
const objectId = z.string().regex(/^[0-9a-f]{40}$|^[0-9a-f]{64}$/, "must be a 40- or 64-digit lowercase hex object id");
const fileState = z.strictObject({ mode: z.string().regex(/^[0-7]{6}$/, "must be a 6-digit octal git mode"), blob: objectId }).nullable();
const dirtyEntry = z.strictObject({ path: repoPath, head: fileState, worktree: fileState });
const transition = z.strictObject({ path: repoPath, before: fileState, after: fileState });
const commitId = objectId.nullable();

/** One entry per path: a path listed twice would make the snapshot ambiguous. */
function uniquePaths<T extends { path: string }>(entries: T[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    if (seen.has(entry.path)) ctx.addIssue({ code: "custom", path: [index, "path"], message: `"${entry.path}" is listed more than once` });
    seen.add(entry.path);
  });
}

export const snapshotSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("git"),
    head: commitId,
    branch: z
      .string()
      .max(LIMITS.NAME * 2)
      .nullable()
      .optional(),
    dirty: z.array(dirtyEntry).max(LIMITS.CHANGE_ENTRIES).superRefine(uniquePaths),
  }),
  z.strictObject({ type: z.literal("checksum"), files: z.number().int().min(0), digest: z.string().max(128) }),
]);

export const changesSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("git"),
    start_head: commitId,
    head: commitId,
    committed: z.array(transition).max(LIMITS.CHANGE_ENTRIES),
    dirty: z.array(dirtyEntry).max(LIMITS.CHANGE_ENTRIES),
  }),
  z.strictObject({ type: z.literal("checksum"), transitions: z.array(transition).max(LIMITS.CHANGE_ENTRIES) }),
]);

export const HELPER_ONLY = "Set by the Waymark helper only";
