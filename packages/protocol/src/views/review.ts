/**
 * @module views/review
 * What needs a reviewer in a workflow, counted once (../review-counts.ts): the page's head and its
 * "needs you" box, the JSON export's `review` member, the Markdown export and `waymark summary` all
 * show these numbers. `waymark verify` counts them again from the export's own records.
 */
import { z } from "zod";
import { COMMAND_KINDS } from "../command-kind";
import { countSchema } from "./common";

/** What was observed of one kind of check after a task's last edit: its last run passed, failed or exited unseen; none ran; nothing was observed. */
export const OBSERVED_CHECKS = ["passed", "failed", "exit_unknown", "not_run", "not_observed"] as const;

/** An object of counts, one per key. */
const countsOf = <K extends string>(keys: readonly K[]) =>
  z.strictObject(Object.fromEntries(keys.map((key) => [key, countSchema])) as Record<K, typeof countSchema>);

export const checkCountsSchema = z.strictObject({
  observed: countsOf(OBSERVED_CHECKS).describe(
    "Completed tasks showing this kind of check, by what was observed after each one's last edit.",
  ),
  claimed: countsOf(["passed", "failed", "not_run", "ran", "none"] as const).describe(
    "The same tasks by what the agent claimed: its tests_status, that it ran a command of the kind, or nothing.",
  ),
});
export type CheckCounts = z.infer<typeof checkCountsSchema>;

export const reviewCountsSchema = z
  .strictObject({
    tasks: countSchema,
    open_tasks: countSchema,
    failed_tasks: countSchema.describe("Tasks the agent completed as failed (its claim)."),
    review: z
      .strictObject({
        items: countSchema,
        open: countSchema,
        approved: countSchema,
        changes_requested: countSchema.describe("Open items whose latest verdict asks for changes."),
      })
      .describe(
        "Review items: completed tasks that failed, asked for manual review or changed files outside their declared areas (one each), and issues that require human review. An item is open until a person's latest verdict on it (since the task completed) approves it.",
      ),
    outside_areas: z
      .strictObject({ tasks: countSchema, files: countSchema })
      .describe("Tasks that changed files outside their declared areas, and how many such files (summed over the tasks)."),
    checks: z
      .strictObject(
        Object.fromEntries(COMMAND_KINDS.map((kind) => [kind, checkCountsSchema])) as Record<
          (typeof COMMAND_KINDS)[number],
          typeof checkCountsSchema
        >,
      )
      .describe("Per kind of check (test, build, lint, typecheck), over the completed tasks that show it."),
    figures: z
      .strictObject({ files_claimed: countSchema, files_not_observed: countSchema, usage_claimed: countSchema })
      .describe("Completed tasks whose figures are not computed and signed: files claimed by the client or not observed, usage claimed."),
  })
  .meta({ id: "reviewCounts" });
export type ReviewCounts = z.infer<typeof reviewCountsSchema>;
