import { describe, expect, it } from "vitest";
import {
  holdsZero,
  meanInterval,
  newcombe,
  ratioDifference,
  ratioInterval,
  studentCdf,
  studentQuantile,
  welch,
  wilson,
} from "../../src/domain/intervals";

/**
 * The Insights comparisons' intervals against the published worked examples: Wilson's score
 * interval against Newcombe (1998a, Statistics in Medicine 17:857–872, method 3), Newcombe's
 * hybrid score interval for a difference against Newcombe (1998b, Statistics in Medicine
 * 17:873–890, Table II, method 10), Student's t quantiles against the standard tables, Welch's
 * interval against a hand computation.
 */
const four = (n: number) => Math.round(n * 1e4) / 1e4;

describe("Wilson's score interval (Newcombe 1998a, method 3)", () => {
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
  ])("%i/%i → (%f, %f)", (x, n, low, high) => {
    const interval = wilson(x, n);
    expect([four(interval.low), four(interval.high)]).toEqual([low, high]);
  });

  it("stays within [0, 1] and is exactly 0 or 1 at the ends", () => {
    expect(wilson(0, 1).low).toBe(0);
    expect(wilson(5, 5).high).toBe(1);
    for (let n = 1; n <= 40; n++)
      for (let x = 0; x <= n; x++) {
        const i = wilson(x, n);
        expect(i.low).toBeGreaterThanOrEqual(0);
        expect(i.high).toBeLessThanOrEqual(1);
        expect(i.low).toBeLessThanOrEqual(x / n);
        expect(i.high).toBeGreaterThanOrEqual(x / n);
      }
  });
});

describe("Newcombe's hybrid score interval for a difference of proportions (Newcombe 1998b, Table II, method 10)", () => {
  it.each([
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
    [10, 10, 0, 20, 0.6791, 1],
  ])("%i/%i − %i/%i → (%f, %f)", (x1, n1, x2, n2, low, high) => {
    const interval = newcombe(x1, n1, x2, n2);
    expect(interval.difference).toBeCloseTo(x1 / n1 - x2 / n2, 12);
    expect([four(interval.low), four(interval.high)]).toEqual([low, high]);
  });

  it("says when the data cannot tell two groups apart", () => {
    // 5 of 5 against 5 of 5: nothing to tell apart; 5 of 5 against 0 of 5: apart.
    expect(holdsZero(newcombe(5, 5, 5, 5))).toBe(true);
    expect(holdsZero(newcombe(5, 5, 0, 5))).toBe(false);
    // 4 of 5 against 2 of 5: a 40-point difference that five tasks each cannot establish.
    expect(holdsZero(newcombe(4, 5, 2, 5))).toBe(true);
  });
});

describe("Student's t", () => {
  it.each([
    [1, 12.7062],
    [2, 4.3027],
    [5, 2.5706],
    [10, 2.2281],
    [30, 2.0423],
    [120, 1.9799],
  ])("the 97.5th percentile with %i degrees of freedom is %f", (df, t) => {
    expect(four(studentQuantile(0.975, df))).toBe(t);
  });

  it("its distribution function is symmetric and takes fractional degrees of freedom", () => {
    expect(studentCdf(0, 7.3)).toBeCloseTo(0.5, 12);
    expect(studentCdf(-2, 4.5) + studentCdf(2, 4.5)).toBeCloseTo(1, 12);
    expect(studentCdf(studentQuantile(0.975, 7.3), 7.3)).toBeCloseTo(0.975, 9);
  });
});

describe("Welch's interval for a difference of means", () => {
  it("matches the hand computation: means 20 and 14, variances 10 and 5.6, 5 and 6 values", () => {
    // a: 16 18 20 22 24 (mean 20, variance 10); b: 11 12 13 15 16 17 (mean 14, variance 5.6)
    const moments = (values: number[]) => ({
      n: values.length,
      sum: values.reduce((s, v) => s + v, 0),
      squares: values.reduce((s, v) => s + v * v, 0),
    });
    const interval = welch(moments([16, 18, 20, 22, 24]), moments([11, 12, 13, 15, 16, 17]));
    expect(interval).not.toBeNull();
    const se2 = 10 / 5 + 5.6 / 6;
    const df = se2 ** 2 / ((10 / 5) ** 2 / 4 + (5.6 / 6) ** 2 / 5);
    const half = studentQuantile(0.975, df) * Math.sqrt(se2);
    expect(interval?.difference).toBeCloseTo(6, 12);
    expect(interval?.df).toBeCloseTo(df, 9);
    expect(interval?.low).toBeCloseTo(6 - half, 9);
    expect(interval?.high).toBeCloseTo(6 + half, 9);
    // df ≈ 7.33, t ≈ 2.35: the interval is about (1.99, 10.01).
    expect([four(interval?.low ?? 0), four(interval?.high ?? 0)]).toEqual([1.9865, 10.0135]);
  });

  it("needs two values on each side", () => {
    expect(welch({ n: 1, sum: 3, squares: 9 }, { n: 5, sum: 10, squares: 30 })).toBeNull();
  });

  it("one sample's mean interval is Student's", () => {
    const interval = meanInterval({ n: 5, sum: 100, squares: 16 ** 2 + 18 ** 2 + 20 ** 2 + 22 ** 2 + 24 ** 2 });
    // Four degrees of freedom: t = 2.7764.
    const half = 2.7764 * Math.sqrt(10 / 5);
    expect(interval?.low).toBeCloseTo(20 - half, 3);
    expect(interval?.high).toBeCloseTo(20 + half, 3);
  });
});

describe("a ratio of sums over tasks (delta method, tasks as clusters)", () => {
  const sums = (pairs: [number, number][]) => ({
    n: pairs.length,
    x: pairs.reduce((s, [x]) => s + x, 0),
    y: pairs.reduce((s, [, y]) => s + y, 0),
    xx: pairs.reduce((s, [x]) => s + x * x, 0),
    yy: pairs.reduce((s, [, y]) => s + y * y, 0),
    xy: pairs.reduce((s, [x, y]) => s + x * y, 0),
  });

  it("a constant share per task has no spread; different shares per task widen it", () => {
    const even = ratioInterval(
      sums([
        [10, 5],
        [20, 10],
        [40, 20],
      ]),
      true,
    );
    expect(even).toEqual({ low: 0.5, high: 0.5 });
    const spread = ratioInterval(
      sums([
        [10, 10],
        [20, 0],
        [40, 30],
      ]),
      true,
    );
    expect(spread?.low).toBeLessThan(40 / 70);
    expect(spread?.high).toBeGreaterThan(40 / 70);
  });

  it("the difference of two shares stays within [-1, 1], a cost ratio does not have to", () => {
    const a = sums([
      [10, 10],
      [10, 9],
      [10, 10],
      [10, 10],
      [10, 8],
    ]);
    const b = sums([
      [10, 1],
      [10, 0],
      [10, 2],
      [10, 1],
      [10, 0],
    ]);
    const shares = ratioDifference(a, b, true);
    expect(shares?.difference).toBeCloseTo(0.94 - 0.08, 12);
    expect(shares?.high).toBeLessThanOrEqual(1);
    expect(holdsZero(shares ?? { low: 0, high: 0 })).toBe(false);
    const costs = ratioDifference(
      sums([
        [1, 5],
        [1, 7],
        [0, 3],
      ]),
      sums([
        [1, 1],
        [1, 2],
        [1, 1],
      ]),
      false,
    );
    expect(costs?.difference).toBeCloseTo(15 / 2 - 4 / 3, 12);
  });

  it("needs two tasks and some base on each side", () => {
    expect(ratioInterval(sums([[10, 5]]), true)).toBeNull();
    expect(
      ratioDifference(
        sums([
          [0, 0],
          [0, 0],
        ]),
        sums([
          [1, 1],
          [1, 0],
        ]),
        true,
      ),
    ).toBeNull();
  });
});
