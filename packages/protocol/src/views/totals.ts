/**
 * @module views/totals
 * A workflow's running totals (src/workflow/totals.ts keeps them; `waymark verify` rebuilds them
 * from the events, ../export-rebuild.ts): tasks, time, files, logs, reviews still needed, usage
 * (its cost rounded by ../cost.ts).
 */
import { z } from "zod";
import { countSchema } from "./common";

export const totalsSchema = z
  .strictObject({
    tasks: countSchema,
    open_tasks: countSchema,
    duration_seconds: countSchema.describe("Summed over top-level tasks."),
    files_changed: countSchema.describe("Distinct paths changed by any task."),
    decisions: countSchema,
    issues: countSchema,
    reviews_needed: countSchema,
    /** Sums over the tasks that reported metrics (0 when none did). */
    input_tokens: countSchema,
    output_tokens: countSchema,
    cost_usd: z.number().min(0),
  })
  .meta({ id: "totals" });
export type Totals = z.infer<typeof totalsSchema>;
