/**
 * @module domain/insight-buckets
 * The calendar of the Insights rollups (docs/insights.md): every task's contribution is kept in
 * two buckets, its UTC day and its calendar month (STORED_KINDS), so that a period is read from few
 * rows however long it is. A period is cut into the trend's buckets (a day up to 31 days, an ISO
 * week from Monday up to 26 weeks, else a month, each clipped to the period), and each of those
 * into the largest stored buckets that fit inside it (whole months, then days): a 731-day period of
 * one group is about 44 rows, not 731. No week is stored: each would be a row written more per
 * completed task, and a week trend's point is read from its seven days instead (a period of up to
 * 26 weeks reads up to 182 day rows per group: a read is a thousandth of a write). Pure.
 */

/** The buckets a trend point may cover. */
export const ROLLUP_KINDS = ["day", "week", "month"] as const;
export type RollupKind = (typeof ROLLUP_KINDS)[number];

/** The buckets stored for every task, smallest first (v20 of the account's schema dropped the weeks). */
export const STORED_KINDS = ["day", "month"] as const satisfies readonly RollupKind[];
export type StoredKind = (typeof STORED_KINDS)[number];

const DAY_MS = 86_400_000;
export const dayNumber = (day: string) => Date.parse(`${day}T00:00:00Z`) / DAY_MS;
export const dayOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** The first day of the bucket of `kind` holding day `day` (day numbers since the epoch). */
export function bucketStart(day: number, kind: RollupKind): number {
  if (kind === "day") return day;
  if (kind === "week") return day - ((new Date(day * DAY_MS).getUTCDay() + 6) % 7);
  const date = new Date(day * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS;
}

/** The first day of the next bucket of `kind` after the one starting on `start`. */
export function nextBucket(start: number, kind: RollupKind): number {
  if (kind === "day") return start + 1;
  if (kind === "week") return start + 7;
  const date = new Date(start * DAY_MS);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS;
}

/** The buckets a trend point covers over a period of `days`. */
export function trendBucket(days: number): RollupKind {
  return days <= 31 ? "day" : days <= 26 * 7 ? "week" : "month";
}

/** The trend's buckets over [from, to] (day numbers): [first day, last day] of each, clipped to the period. */
export function trendSpans(from: number, to: number, kind: RollupKind): [number, number][] {
  const out: [number, number][] = [];
  for (let start = bucketStart(from, kind); start <= to; start = nextBucket(start, kind))
    out.push([Math.max(start, from), Math.min(nextBucket(start, kind) - 1, to)]);
  return out;
}

/** Stored buckets of one kind whose starts run from `from` to `to` (YYYY-MM-DD), every one between them included. */
export interface BucketRange {
  kind: StoredKind;
  from: string;
  to: string;
}

/** [first, last] cut into whole months, then days, in order (never a bucket reaching outside it). */
function tile(first: number, last: number, kinds: readonly StoredKind[]): { kind: StoredKind; start: number }[] {
  const pieces: { kind: StoredKind; start: number }[] = [];
  for (let day = first; day <= last; ) {
    const kind = kinds.find((k) => k !== "day" && bucketStart(day, k) === day && nextBucket(day, k) - 1 <= last) ?? "day";
    pieces.push({ kind, start: day });
    day = nextBucket(day, kind);
  }
  return pieces;
}

/**
 * The stored buckets to read for a period whose trend goes by `trend`: each trend span tiled by
 * the stored kinds no larger than the trend's own (a day or week trend reads days), then
 * consecutive buckets of one kind merged into one range (they tile the timeline in order, so a
 * range holds no other).
 */
export function readPlan(from: string, to: string, trend: RollupKind): BucketRange[] {
  const size = ROLLUP_KINDS.indexOf(trend);
  const kinds = STORED_KINDS.filter((kind) => ROLLUP_KINDS.indexOf(kind) <= size).reverse();
  const ranges: BucketRange[] = [];
  for (const [first, last] of trendSpans(dayNumber(from), dayNumber(to), trend)) {
    for (const piece of tile(first, last, kinds)) {
      const previous = ranges.at(-1);
      if (previous?.kind === piece.kind) previous.to = dayOf(piece.start);
      else ranges.push({ kind: piece.kind, from: dayOf(piece.start), to: dayOf(piece.start) });
    }
  }
  return ranges;
}
