/**
 * @module insight-members
 * The plain values (no zod) the Insights are made of (./views/insights.ts, docs/insights.md): the
 * figures, the dimensions a period's tasks are grouped by, the sources a figure's evidence comes
 * from, the trend's buckets and a comparison's verdicts. Read at run time by the Worker and the
 * helper, which import the views as types only.
 */

/** Every figure, in the order the pages show them. */
export const INSIGHT_FIGURES = [
  "tasks",
  "claimed_success",
  "tests_passed",
  "success_unbacked",
  "outside_areas",
  "reviewed",
  "approved",
  "changes_requested",
  "time_to_verdict",
  "line_share",
  "durability",
  "durability_days",
  "cost_per_task",
  "cost_per_accepted",
  "tokens_per_task",
  "tokens_per_accepted",
] as const;
export type InsightFigureId = (typeof INSIGHT_FIGURES)[number];

/** The figures a trend can follow (each a share or a mean per task). */
export const TREND_FIGURES = INSIGHT_FIGURES.filter((id) => id !== "tasks");

export const INSIGHT_DIMENSIONS = ["agent", "model", "repository"] as const;
export type InsightDimension = (typeof INSIGHT_DIMENSIONS)[number];

/**
 * Who vouches for what a figure rests on, counted in tasks: observed by Waymark itself (a
 * person's verdict), computed and signed by an approved device's helper, claimed (by the agent, or
 * by a client without an approved device's signature), not observed.
 */
export const INSIGHT_SOURCES = ["observed", "signed", "claimed", "not_observed"] as const;
export type InsightSource = (typeof INSIGHT_SOURCES)[number];

export const INSIGHT_UNITS = ["count", "share", "seconds", "usd", "tokens"] as const;

export const TREND_BUCKETS = ["day", "week", "month"] as const;

export const COMPARISON_VERDICTS = ["a_higher", "b_higher", "cannot_tell_apart", "too_few_tasks", "no_interval"] as const;
export type ComparisonVerdict = (typeof COMPARISON_VERDICTS)[number];
