/**
 * @module insights-wording
 * The Insights figures (./views/insights.ts, docs/insights.md) in words, one wording for every
 * rendering: the dashboard's Insights page, the CSV export and `waymark ci`'s per-repository line.
 * Each figure says what it counts, where its evidence came from (observed by Waymark, computed and
 * signed, claimed, not observed) and how many tasks it rests on; a withheld figure says why; a
 * comparison says whether the data can tell the two groups apart.
 */
import { formatSeconds } from "./pr-summary";
import type { ComparisonVerdict, InsightComparison, InsightFigure, InsightFigureId, InsightGroup, InsightSource } from "./views/insights";

/** What each figure counts, as a heading (`label`) and in a few words for tight places (`short`). */
export const FIGURE_WORDS: Record<InsightFigureId, { label: string; short: string }> = {
  tasks: { label: "Tasks completed", short: "tasks" },
  claimed_success: { label: "Called successful by the agent", short: "called successful" },
  tests_passed: { label: "A test run passed after the last edit", short: "tests passed after the last edit" },
  success_unbacked: {
    label: "Called successful without a test run passing after the last edit",
    short: "successful without a passing test",
  },
  outside_areas: { label: "Changed files outside the declared areas", short: "outside their areas" },
  reviewed: { label: "Given a verdict by a person", short: "reviewed" },
  approved: { label: "Approved (the latest verdict)", short: "approved" },
  changes_requested: { label: "Changes requested (the latest verdict)", short: "changes requested" },
  time_to_verdict: { label: "Time from completion to a person's first verdict", short: "time to first verdict" },
  line_share: { label: "Added lines written by the agent's own edit tools", short: "agent's line share" },
  durability: { label: "The agent's lines still present at the latest observation", short: "lines still present" },
  durability_days: { label: "The agent's lines still present N days later", short: "lines still present N days later" },
  cost_per_task: { label: "Cost per task", short: "cost per task" },
  cost_per_accepted: { label: "Cost per approved task", short: "cost per approved task" },
  tokens_per_task: { label: "Tokens per task", short: "tokens per task" },
  tokens_per_accepted: { label: "Tokens per approved task", short: "tokens per approved task" },
};

/** The figure's label with its number of days filled in. */
export const figureLabel = (id: InsightFigureId, durabilityDays: number) =>
  FIGURE_WORDS[id].label.replace("N days", `${durabilityDays} days`);

export const SOURCE_WORDS: Record<InsightSource, string> = {
  observed: "observed by Waymark",
  signed: "computed and signed",
  claimed: "claimed",
  not_observed: "not observed",
};

const counted = (n: number, one: string, many: string) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** Thousands and more as 12.3k / 4.5M. */
function compact(n: number): string {
  const units: [number, string][] = [
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "k"],
  ];
  for (const [size, unit] of units) if (Math.abs(n) >= size) return `${Math.round((n / size) * 10) / 10}${unit}`;
  return String(Math.round(n));
}

/** A figure's value in its unit: 83%, $1.37, 12.3k tokens, 2h 05m, 12 tasks. */
export function formatFigureValue(unit: InsightFigure["unit"], value: number): string {
  switch (unit) {
    case "share":
      return `${Math.round(value * 100)}%`;
    case "usd":
      return value >= 100 ? `$${Math.round(value).toLocaleString("en-US")}` : `$${value.toFixed(2)}`;
    case "tokens":
      return `${compact(value)} tokens`;
    case "seconds":
      return formatSeconds(value);
    default:
      return Math.round(value).toLocaleString("en-US");
  }
}

/** "signed 10 · claimed 2 · not observed 3": each source that counts tasks, in a fixed order. */
export function sourcesText(sources: InsightFigure["sources"]): string {
  return (Object.keys(SOURCE_WORDS) as InsightSource[])
    .filter((source) => (sources[source] ?? 0) > 0)
    .map((source) => `${SOURCE_WORDS[source]} ${(sources[source] ?? 0).toLocaleString("en-US")}`)
    .join(" · ");
}

/** What a shown figure is computed from: "10 of 12 tasks", "340 lines of 400, 12 tasks", "12 tasks, 5 approved". */
export function basisText(figure: InsightFigure): string {
  const tasks = counted(figure.rests_on, "task", "tasks");
  if (figure.id === "line_share" || figure.id === "durability" || figure.id === "durability_days")
    return `${counted(figure.part ?? 0, "line", "lines")} of ${(figure.whole ?? 0).toLocaleString("en-US")}, ${tasks}`;
  if (figure.unit === "share") return `${(figure.part ?? 0).toLocaleString("en-US")} of ${tasks}`;
  if (figure.id === "cost_per_accepted" || figure.id === "tokens_per_accepted")
    return `${tasks}, ${(figure.whole ?? 0).toLocaleString("en-US")} approved`;
  return tasks;
}

/** The value with what it counts: "83% (10 of 12 tasks)", "$1.37 (12 tasks)", or why it is not shown. */
export function figureText(figure: InsightFigure): string {
  if (figure.value === null) return `not shown: ${figure.withheld ?? "nothing to compute it from"}`;
  if (figure.unit === "count") return counted(figure.value, "task", "tasks");
  return `${formatFigureValue(figure.unit, figure.value)} (${basisText(figure)})`;
}

export const VERDICT_WORDS: Record<ComparisonVerdict, string> = {
  a_higher: "higher for the first",
  b_higher: "higher for the second",
  cannot_tell_apart: "the data cannot tell them apart",
  too_few_tasks: "too few tasks to compare",
  no_interval: "no interval: too little spread to estimate one",
};

/** A comparison row in words: "+25 points (95% CI +4 to +46): higher for claude-code". */
export function comparisonText(row: InsightComparison["rows"][number], unit: InsightFigure["unit"], a: string, b: string): string {
  if (row.difference === null) return VERDICT_WORDS[row.verdict];
  const signed = (value: number) => {
    if (unit === "share") return `${value >= 0 ? "+" : "−"}${Math.abs(Math.round(value * 100))} points`;
    return `${value >= 0 ? "+" : "−"}${formatFigureValue(unit, Math.abs(value))}`;
  };
  const interval = row.interval ? ` (95% CI ${signed(row.interval.low)} to ${signed(row.interval.high)})` : "";
  const verdict =
    row.verdict === "a_higher" ? `higher for ${a}` : row.verdict === "b_higher" ? `higher for ${b}` : VERDICT_WORDS[row.verdict];
  return `${signed(row.difference)}${interval}: ${verdict}`;
}

const find = (group: InsightGroup, id: InsightFigureId) => group.figures.find((f) => f.id === id);

/** The figures `waymark ci`'s per-repository line names, in its order. */
const LINE_FIGURES: readonly InsightFigureId[] = [
  "claimed_success",
  "tests_passed",
  "outside_areas",
  "approved",
  "line_share",
  "durability",
  "cost_per_task",
];

/**
 * One group in one line (`waymark ci`'s per-repository summary): its tasks, then each figure that
 * is shown, with the tasks it rests on and its sources; withheld ones are named as such. `label`
 * escapes the group's name for where the line goes (it is the agents' and clients' own words).
 */
export function groupLine(group: InsightGroup, label: (text: string) => string = (text) => text): string {
  const parts = [counted(group.tasks, "task", "tasks")];
  for (const id of LINE_FIGURES) {
    const figure = find(group, id);
    if (!figure) continue;
    if (figure.value === null) parts.push(`${FIGURE_WORDS[id].short}: not shown (${figure.withheld ?? "no data"})`);
    else {
      const sources = sourcesText(figure.sources);
      parts.push(`${FIGURE_WORDS[id].short} ${figureText(figure)}${sources ? ` [${sources}]` : ""}`);
    }
  }
  return `${label(group.label)}: ${parts.join("; ")}`;
}
