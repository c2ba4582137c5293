/**
 * @module fields — the helper-only tool inputs (docs/attribution.md): the snapshot sent with
 * start_task and the changes sent with complete_task. Agent-facing inputs are in @waymark/protocol/tools.
 */
import { z } from "zod";
import { repoPathProblem } from "../domain/paths";
import { LIMITS } from "../limits";

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
