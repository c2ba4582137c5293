/**
 * @module views/insights
 * The account's Insights (docs/insights.md): per agent, model and repository over a period, what
 * the agents claimed next to what was observed, each figure with where it came from and how many
 * tasks it rests on; a trend over time; a comparison of two groups with the uncertainty of each
 * difference. Served by `GET /api/insights` (a read token), rendered by the dashboard's Insights
 * page and `GET /api/insights.csv`, and read by `waymark ci` for its per-repository line.
 */
import { z } from "zod";
import {
  COMPARISON_VERDICTS,
  INSIGHT_DIMENSIONS,
  INSIGHT_FIGURES,
  INSIGHT_SOURCES,
  INSIGHT_UNITS,
  TREND_BUCKETS,
} from "../insight-members";
import { countSchema, sha256Schema } from "./common";

export type { ComparisonVerdict, InsightFigureId, InsightSource } from "../insight-members";

const intervalSchema = z
  .strictObject({ low: z.number(), high: z.number() })
  .describe("The 95% confidence interval (docs/insights.md: Wilson for a share, Welch for a mean, delta method for a line ratio).");

export const insightFigureSchema = z.strictObject({
  id: z.enum(INSIGHT_FIGURES),
  unit: z.enum(INSIGHT_UNITS),
  /** null: withheld (fewer tasks than the minimum) or nothing to compute it from. */
  value: z.number().nullable(),
  rests_on: countSchema.describe("How many tasks the value is computed from."),
  /** A share's numerator (the tasks or lines it counts). */
  part: z.number().min(0).optional(),
  /** A share's or mean's denominator when it is not `rests_on` (lines, accepted tasks). */
  whole: z.number().min(0).optional(),
  sources: z.partialRecord(z.enum(INSIGHT_SOURCES), countSchema).describe("The group's tasks by where this figure's evidence came from."),
  withheld: z.string().describe("Why no value is shown.").optional(),
  interval: intervalSchema.optional(),
});
export type InsightFigure = z.infer<typeof insightFigureSchema>;

export const insightKeySchema = z.strictObject({
  /** Absent: not grouped by it; null: not reported. */
  agent: z.string().nullable().optional(),
  model: z.string().nullable().optional(),
  repository: sha256Schema.nullable().optional(),
});
export type InsightKey = z.infer<typeof insightKeySchema>;

export const insightGroupSchema = z.strictObject({
  /** What `?a=` and `?b=` name to compare it: its grouped dimensions and values, e.g. `agent=codex|model=gpt-5.5`. */
  id: z.string(),
  key: insightKeySchema,
  /** Past the account's bound on distinct groups, later ones are counted together here. */
  other: z.literal(true).optional(),
  label: z.string(),
  tasks: countSchema,
  figures: z.array(insightFigureSchema),
});
export type InsightGroup = z.infer<typeof insightGroupSchema>;

export const insightTrendSchema = z.strictObject({
  figure: z.enum(INSIGHT_FIGURES),
  bucket: z.enum(TREND_BUCKETS),
  points: z.array(
    z.strictObject({
      start: z.iso.date(),
      end: z.iso.date(),
      /** One per group, in `groups` order. */
      values: z.array(z.strictObject({ value: z.number().nullable(), rests_on: countSchema })),
    }),
  ),
});
export type InsightTrend = z.infer<typeof insightTrendSchema>;

export const insightComparisonSchema = z.strictObject({
  /** Indexes into `groups`. */
  a: countSchema,
  b: countSchema,
  rows: z.array(
    z.strictObject({
      figure: z.enum(INSIGHT_FIGURES),
      a: z.number().nullable(),
      b: z.number().nullable(),
      difference: z.number().nullable().describe("a − b"),
      interval: intervalSchema.optional(),
      method: z.enum(["newcombe", "welch", "delta"]).optional(),
      verdict: z.enum(COMPARISON_VERDICTS),
    }),
  ),
});
export type InsightComparison = z.infer<typeof insightComparisonSchema>;

export const insightsSchema = z
  .strictObject({
    period: z.strictObject({ from: z.iso.date(), to: z.iso.date(), days: countSchema }),
    by: z.array(z.enum(INSIGHT_DIMENSIONS)),
    filters: insightKeySchema,
    minimum_tasks: countSchema.describe("No figure is shown from fewer tasks than this."),
    durability_days: countSchema.describe(
      "The `durability_days` figure: lines still present at the first observation this many days or more after the task.",
    ),
    groups: z.array(insightGroupSchema),
    /** Every task of the period that passes the filters, as one group. */
    total: insightGroupSchema,
    trend: insightTrendSchema,
    comparison: insightComparisonSchema.nullable(),
    /** The repositories named by the groups and filters: their remotes, as last reported. */
    repositories: z.array(z.strictObject({ fingerprint: sha256Schema, remote: z.string().nullable() })),
  })
  .meta({ id: "insights" });
export type Insights = z.infer<typeof insightsSchema>;
