/**
 * @module domain/insight-figures
 * The Insights figures (docs/insights.md) computed from a group's summed MEASURES
 * (./insight-measures.ts): each with its unit, the tasks it rests on, where its evidence came
 * from, and its 95% interval; withheld below LIMITS.INSIGHT_MIN_TASKS. And the comparison of two
 * groups: each figure's difference with its interval (./intervals.ts) and whether the data can
 * tell the two apart. Pure.
 */
import type { ComparisonVerdict, InsightComparison, InsightFigure, InsightFigureId, InsightSource } from "@waymark/protocol/views/insights";
import { LIMITS } from "../limits";
import { type Measure, type Sums, sumOf } from "./insight-measures";
import {
  holdsZero,
  type Interval,
  meanInterval,
  newcombe,
  type RatioSums,
  ratioDifference,
  ratioInterval,
  welch,
  wilson,
} from "./intervals";

type Unit = InsightFigure["unit"];
type Sources = Partial<Record<InsightSource, number>>;

/** How a figure is computed: a share of tasks (or lines), a mean per task, or a ratio of sums over tasks. */
type Definition =
  | { kind: "count" }
  | { kind: "share"; part: Measure; of: readonly Measure[]; sources: (s: Sums) => Sources }
  | { kind: "mean"; unit: Unit; n: readonly Measure[]; sum: Measure; squares: Measure; sources: (s: Sums) => Sources }
  | { kind: "ratio"; unit: Unit; n: readonly Measure[]; ratio: (s: Sums) => RatioSums; bounded: boolean; sources: (s: Sums) => Sources };

const total = (s: Sums, measures: readonly Measure[]) => measures.reduce((sum, m) => sum + sumOf(s, m), 0);

/** Signed and claimed from two measures; the group's other tasks not observed. */
const bySource =
  (signed: Measure, claimed: Measure) =>
  (s: Sums): Sources => ({
    signed: sumOf(s, signed),
    claimed: sumOf(s, claimed),
    not_observed: sumOf(s, "tasks") - sumOf(s, signed) - sumOf(s, claimed),
  });

const CMD = ["cmd_signed", "cmd_claimed"] as const;
const SCOPE = ["scope_signed", "scope_claimed"] as const;
const LINES = ["lines_signed", "lines_claimed"] as const;
const COST = ["cost_signed", "cost_claimed"] as const;
const TOKENS = ["tokens_signed", "tokens_claimed"] as const;
const DURABLE = ["dur_signed", "dur_claimed"] as const;
const DURABLE_DAYS = ["durn_signed", "durn_claimed"] as const;

const claimedByAgent = (s: Sums): Sources => ({ claimed: sumOf(s, "tasks") });
const observedByWaymark = (s: Sums): Sources => ({ observed: sumOf(s, "tasks") });

/** Σ over tasks of (x, y): per task x = the base, y = the part. */
const ratioSums =
  (n: readonly Measure[], x: Measure, y: Measure, xx: Measure, yy: Measure, xy: Measure) =>
  (s: Sums): RatioSums => ({
    n: total(s, n),
    x: sumOf(s, x),
    y: sumOf(s, y),
    xx: sumOf(s, xx),
    yy: sumOf(s, yy),
    xy: sumOf(s, xy),
  });

/** Per accepted task: y = the task's cost (tokens), x = 1 when it was accepted. */
const perAccepted =
  (n: readonly Measure[], accepted: Measure, sum: Measure, squares: Measure, acceptedSum: Measure) =>
  (s: Sums): RatioSums => ({
    n: total(s, n),
    x: sumOf(s, accepted),
    y: sumOf(s, sum),
    xx: sumOf(s, accepted),
    yy: sumOf(s, squares),
    xy: sumOf(s, acceptedSum),
  });

export const FIGURES: Record<InsightFigureId, Definition> = {
  tasks: { kind: "count" },
  claimed_success: { kind: "share", part: "success", of: ["tasks"], sources: claimedByAgent },
  tests_passed: { kind: "share", part: "passed", of: CMD, sources: bySource(...CMD) },
  success_unbacked: { kind: "share", part: "success_unbacked", of: CMD, sources: bySource(...CMD) },
  outside_areas: { kind: "share", part: "outside", of: SCOPE, sources: bySource(...SCOPE) },
  reviewed: { kind: "share", part: "reviewed", of: ["tasks"], sources: observedByWaymark },
  approved: { kind: "share", part: "approved", of: ["tasks"], sources: observedByWaymark },
  changes_requested: { kind: "share", part: "changes_requested", of: ["tasks"], sources: observedByWaymark },
  time_to_verdict: {
    kind: "mean",
    unit: "seconds",
    n: ["wait_n"],
    sum: "wait_sum",
    squares: "wait_sq",
    sources: (s) => ({ observed: sumOf(s, "wait_n") }),
  },
  line_share: {
    kind: "ratio",
    unit: "share",
    n: LINES,
    ratio: ratioSums(LINES, "l_agent", "l_agent", "l_xx", "l_yy", "l_xy"),
    bounded: true,
    sources: bySource(...LINES),
  },
  durability: {
    kind: "ratio",
    unit: "share",
    n: DURABLE,
    ratio: ratioSums(DURABLE, "d_x", "d_y", "d_xx", "d_yy", "d_xy"),
    bounded: true,
    sources: bySource(...DURABLE),
  },
  durability_days: {
    kind: "ratio",
    unit: "share",
    n: DURABLE_DAYS,
    ratio: ratioSums(DURABLE_DAYS, "dn_x", "dn_y", "dn_xx", "dn_yy", "dn_xy"),
    bounded: true,
    sources: bySource(...DURABLE_DAYS),
  },
  cost_per_task: { kind: "mean", unit: "usd", n: COST, sum: "cost_sum", squares: "cost_sq", sources: bySource(...COST) },
  cost_per_accepted: {
    kind: "ratio",
    unit: "usd",
    n: COST,
    ratio: perAccepted(COST, "accepted_cost_n", "cost_sum", "cost_sq", "accepted_cost_sum"),
    bounded: false,
    sources: bySource(...COST),
  },
  tokens_per_task: { kind: "mean", unit: "tokens", n: TOKENS, sum: "tokens_sum", squares: "tokens_sq", sources: bySource(...TOKENS) },
  tokens_per_accepted: {
    kind: "ratio",
    unit: "tokens",
    n: TOKENS,
    ratio: perAccepted(TOKENS, "accepted_tokens_n", "tokens_sum", "tokens_sq", "accepted_tokens_sum"),
    bounded: false,
    sources: bySource(...TOKENS),
  },
};

/** The line share's x is agent + others per task, not a measure of its own: Σx is l_agent + l_others. */
function ratioOf(id: InsightFigureId, definition: Extract<Definition, { kind: "ratio" }>, s: Sums): RatioSums {
  const sums = definition.ratio(s);
  return id === "line_share" ? { ...sums, x: sumOf(s, "l_agent") + sumOf(s, "l_others") } : sums;
}

const withheld = (n: number) => `fewer than ${LIMITS.INSIGHT_MIN_TASKS} tasks (${n})`;

/** A figure of one group's sums. */
export function figure(id: InsightFigureId, s: Sums): InsightFigure {
  const definition = FIGURES[id];
  const tasks = sumOf(s, "tasks");
  if (definition.kind === "count") return { id, unit: "count", value: tasks, rests_on: tasks, sources: {} };
  const n = definition.kind === "share" ? total(s, definition.of) : total(s, definition.n);
  const base = {
    id,
    unit: definition.kind === "share" ? ("share" as const) : definition.unit,
    rests_on: n,
    sources: definition.sources(s),
  };
  if (n < LIMITS.INSIGHT_MIN_TASKS) return { ...base, value: null, withheld: withheld(n) };
  if (definition.kind === "share") {
    const part = sumOf(s, definition.part);
    return { ...base, value: part / n, part, interval: wilson(part, n) };
  }
  if (definition.kind === "mean") {
    const sum = sumOf(s, definition.sum);
    const interval = meanInterval({ n, sum, squares: sumOf(s, definition.squares) });
    return { ...base, value: sum / n, ...(interval ? { interval } : {}) };
  }
  const r = ratioOf(id, definition, s);
  if (r.x <= 0) return { ...base, value: null, whole: 0, withheld: id.endsWith("accepted") ? "no accepted task" : "no lines" };
  const interval = ratioInterval(r, definition.bounded);
  return { ...base, value: r.y / r.x, part: r.y, whole: r.x, ...(interval ? { interval } : {}) };
}

export const figures = (ids: readonly InsightFigureId[], s: Sums): InsightFigure[] => ids.map((id) => figure(id, s));

type Row = InsightComparison["rows"][number];

function verdictOf(interval: Interval | null): ComparisonVerdict {
  if (!interval) return "no_interval";
  if (holdsZero(interval)) return "cannot_tell_apart";
  return interval.low > 0 ? "a_higher" : "b_higher";
}

/** Figure `id` of group a against group b: the difference a − b, its 95% interval, and what it lets one say. */
export function compareFigure(id: InsightFigureId, a: Sums, b: Sums): Row {
  const fa = figure(id, a);
  const fb = figure(id, b);
  const row: Row = { figure: id, a: fa.value, b: fb.value, difference: null, verdict: "too_few_tasks" };
  if (fa.value === null || fb.value === null) return row;
  row.difference = fa.value - fb.value;
  const definition = FIGURES[id];
  let interval: Interval | null = null;
  if (definition.kind === "share") {
    interval = newcombe(fa.part ?? 0, fa.rests_on, fb.part ?? 0, fb.rests_on);
    row.method = "newcombe";
  } else if (definition.kind === "mean") {
    interval = welch(
      { n: fa.rests_on, sum: sumOf(a, definition.sum), squares: sumOf(a, definition.squares) },
      { n: fb.rests_on, sum: sumOf(b, definition.sum), squares: sumOf(b, definition.squares) },
    );
    row.method = "welch";
  } else if (definition.kind === "ratio") {
    interval = ratioDifference(ratioOf(id, definition, a), ratioOf(id, definition, b), definition.bounded);
    row.method = "delta";
  } else {
    row.verdict = "no_interval";
    return row;
  }
  if (interval) row.interval = { low: interval.low, high: interval.high };
  row.verdict = verdictOf(interval);
  return row;
}
