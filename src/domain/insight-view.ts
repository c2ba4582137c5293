/**
 * @module domain/insight-view
 * The Insights answer (@waymark/protocol/views/insights) built from a period's rollup rows (one
 * vector of sums per stored bucket and group, account/insights; which buckets: ./insight-buckets.ts): the rows summed per requested grouping,
 * each group's figures (./insight-figures.ts), a trend of one figure by day, week or month, and the
 * comparison of two groups. Pure: what it reads is at most days × groups rows, never the tasks.
 */
import { INSIGHT_FIGURES, type InsightDimension, type InsightFigureId } from "@waymark/protocol/insight-members";
import type { InsightGroup, InsightKey, Insights, InsightTrend } from "@waymark/protocol/views/insights";
import { LIMITS } from "../limits";
import { dayNumber, dayOf, trendBucket, trendSpans } from "./insight-buckets";
import { compareFigure, figure, figures } from "./insight-figures";
import { addSums, type Sums, sumOf, zeroSums } from "./insight-measures";

/**
 * One stored bucket's sums of one group, as the account keeps them ("" not reported, OTHER_GROUP
 * past the bound on groups): `start` is the bucket's first day, and the bucket lies within one
 * trend span of the request it was read for (./insight-buckets.ts readPlan).
 */
export interface InsightRow {
  start: string;
  agent: string;
  model: string;
  repository: string;
  sums: Sums;
}

export interface InsightRequest {
  /** Inclusive UTC days, YYYY-MM-DD. */
  from: string;
  to: string;
  by: readonly InsightDimension[];
  filters: InsightKey;
  trend: InsightFigureId;
  /** Two group ids to compare; null: the two groups with the most tasks. */
  compare: { a: string; b: string } | null;
}

/** A group's id in a URL or form: its grouped dimensions and values ("" for not reported), e.g. `agent=codex|model=gpt-5.5`. */
export function groupId(key: InsightKey, other: boolean): string {
  if (other) return "other";
  return (Object.entries(key) as [InsightDimension, string | null][])
    .map(([dimension, value]) => `${dimension}=${encodeURIComponent(value ?? "")}`)
    .join("|");
}

/** The group tasks are counted in once an account keeps LIMITS.INSIGHT_GROUPS apart (no name holds a control character). */
export const OTHER_GROUP = "\u0001";

function keyOf(row: InsightRow, by: readonly InsightDimension[]): { key: InsightKey; other: boolean } {
  const other = row.agent === OTHER_GROUP;
  const key: InsightKey = {};
  for (const dimension of by) key[dimension] = other || row[dimension] === "" ? null : row[dimension];
  return { key, other };
}

function labelOf(key: InsightKey, other: boolean, remotes: ReadonlyMap<string, string | null>): string {
  if (other) return `other groups (past the first ${LIMITS.INSIGHT_GROUPS} kept apart)`;
  const parts: string[] = [];
  if ("agent" in key) parts.push(key.agent ?? "agent not reported");
  if ("model" in key) parts.push(key.model ?? "model not reported");
  if ("repository" in key)
    parts.push(
      key.repository ? (remotes.get(key.repository) ?? `local repository ${key.repository.slice(0, 12)}`) : "repository not reported",
    );
  return parts.length > 0 ? parts.join(" · ") : "all tasks";
}

function group(key: InsightKey, other: boolean, label: string, sums: Sums): InsightGroup {
  const out: InsightGroup = {
    id: groupId(key, other),
    key,
    label,
    tasks: sumOf(sums, "tasks"),
    figures: figures(INSIGHT_FIGURES, sums),
  };
  if (other) out.other = true;
  return out;
}

/** The answer for a period's rows (already filtered by the request's filters). */
export function buildInsights(request: InsightRequest, rows: readonly InsightRow[], remotes: ReadonlyMap<string, string | null>): Insights {
  const from = dayNumber(request.from);
  const to = dayNumber(request.to);
  const bucket = trendBucket(to - from + 1);
  const spans = trendSpans(from, to, bucket);
  const spanOf = (day: number) => {
    // Spans are in order and few (at most a day each for 31 days, else weeks or months): a binary search.
    let low = 0;
    let high = spans.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if ((spans[mid] as [number, number])[0] <= day) low = mid;
      else high = mid - 1;
    }
    return low;
  };
  const byId = new Map<string, { key: InsightKey; other: boolean; sums: Sums; points: Sums[] }>();
  const total = zeroSums();
  for (const row of rows) {
    const { key, other } = keyOf(row, request.by);
    const id = groupId(key, other);
    let entry = byId.get(id);
    if (!entry) {
      entry = { key, other, sums: zeroSums(), points: spans.map(() => zeroSums()) };
      byId.set(id, entry);
    }
    addSums(entry.sums, row.sums);
    addSums(entry.points[spanOf(dayNumber(row.start))] as Sums, row.sums);
    addSums(total, row.sums);
  }
  const ordered = [...byId.entries()]
    .map(([id, entry]) => ({ id, ...entry, label: labelOf(entry.key, entry.other, remotes) }))
    .sort((a, b) => sumOf(b.sums, "tasks") - sumOf(a.sums, "tasks") || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const groups = ordered.map((entry) => group(entry.key, entry.other, entry.label, entry.sums));
  const trend: InsightTrend = {
    figure: request.trend,
    bucket,
    points: spans.map(([start, end], i) => ({
      start: dayOf(start),
      end: dayOf(end),
      values: ordered.map((entry) => {
        const f = figure(request.trend, entry.points[i] as Sums);
        return { value: f.value, rests_on: f.rests_on };
      }),
    })),
  };
  const index = (id: string | undefined) => (id === undefined ? -1 : ordered.findIndex((entry) => entry.id === id));
  let a = index(request.compare?.a);
  let b = index(request.compare?.b);
  if (a < 0 || b < 0 || a === b) [a, b] = [0, 1];
  const [first, second] = [ordered[a], ordered[b]];
  const comparison =
    first && second
      ? { a, b, rows: INSIGHT_FIGURES.filter((id) => id !== "tasks").map((id) => compareFigure(id, first.sums, second.sums)) }
      : null;
  const fingerprints = new Set<string>();
  for (const entry of ordered) if (entry.key.repository) fingerprints.add(entry.key.repository);
  if (request.filters.repository) fingerprints.add(request.filters.repository);
  return {
    period: { from: request.from, to: request.to, days: to - from + 1 },
    by: [...request.by],
    filters: request.filters,
    minimum_tasks: LIMITS.INSIGHT_MIN_TASKS,
    durability_days: LIMITS.INSIGHT_DURABILITY_DAYS,
    groups,
    total: group({}, false, "all tasks", total),
    trend,
    comparison,
    repositories: [...fingerprints].sort().map((fingerprint) => ({ fingerprint, remote: remotes.get(fingerprint) ?? null })),
  };
}
