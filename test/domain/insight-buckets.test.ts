import { describe, expect, it } from "vitest";
import {
  bucketStart,
  dayNumber,
  dayOf,
  nextBucket,
  type RollupKind,
  readPlan,
  trendBucket,
  trendSpans,
} from "../../src/domain/insight-buckets";

/**
 * The rollups' calendar: a period is read from the fewest stored buckets (months, days: no week is
 * stored) that tile it exactly, each inside one of the trend's buckets, for any period up to two years.
 */

/** The stored buckets a plan names, one by one: [kind, first day, last day]. */
function pieces(from: string, to: string): [RollupKind, number, number][] {
  const out: [RollupKind, number, number][] = [];
  for (const range of readPlan(from, to, trendBucket(dayNumber(to) - dayNumber(from) + 1))) {
    for (let start = dayNumber(range.from); start <= dayNumber(range.to); start = nextBucket(start, range.kind)) {
      expect(bucketStart(start, range.kind), `${range.kind} ${dayOf(start)} starts a bucket`).toBe(start);
      out.push([range.kind, start, nextBucket(start, range.kind) - 1]);
    }
  }
  return out;
}

describe("reading a period from the fewest buckets", () => {
  it("up to 31 days: days, the trend's own buckets", () => {
    expect(readPlan("2026-11-01", "2026-11-30", "day")).toEqual([{ kind: "day", from: "2026-11-01", to: "2026-11-30" }]);
  });

  it("up to 26 weeks: a week trend's points read their days (no whole month fits inside a week)", () => {
    expect(readPlan("2026-01-15", "2026-06-30", "week")).toEqual([{ kind: "day", from: "2026-01-15", to: "2026-06-30" }]);
  });

  it("longer: whole months, and the days of the months the period cuts", () => {
    expect(readPlan("2025-01-15", "2026-01-14", "month")).toEqual([
      { kind: "day", from: "2025-01-15", to: "2025-01-31" },
      { kind: "month", from: "2025-02-01", to: "2025-12-01" },
      { kind: "day", from: "2026-01-01", to: "2026-01-14" },
    ]);
  });

  it("every period up to two years is tiled exactly, each bucket inside one trend span, in few rows", () => {
    let worst = 0;
    for (let i = 0; i < 400; i++) {
      const start = dayNumber("2024-01-01") + ((i * 7919) % 900);
      const days = 1 + ((i * 104729) % 731);
      const [from, to] = [dayOf(start), dayOf(start + days - 1)];
      const got = pieces(from, to);
      const spans = trendSpans(start, start + days - 1, trendBucket(days));
      let next = start;
      for (const [kind, first, last] of got) {
        expect(first, `${from}..${to}: ${kind} at ${dayOf(first)} follows the last piece`).toBe(next);
        expect(
          spans.some(([a, b]) => a <= first && last <= b),
          `${kind} ${dayOf(first)} inside one trend span`,
        ).toBe(true);
        next = last + 1;
      }
      expect(next).toBe(start + days);
      worst = Math.max(worst, got.length);
    }
    // Up to 26 weeks: at most 182 days; two years: 24 months and at most a month's days at each end.
    expect(worst).toBeLessThanOrEqual(182);
  });
});
