/**
 * @module domain/intervals
 * 95% confidence intervals for the Insights comparisons (docs/insights.md), each from the sums the
 * account's rollups keep (counts, sums, sums of squares and of products), never from the tasks:
 *
 * - a share of tasks: Wilson's score interval (Wilson 1927; method 3 of Newcombe 1998a);
 * - the difference of two shares: Newcombe's hybrid score interval (method 10 of Newcombe 1998b,
 *   "Interval estimation for the difference between independent proportions"), built from the two
 *   Wilson intervals: it never leaves [-1, 1] and keeps its coverage with few tasks;
 * - the difference of two means (cost, tokens, time to a verdict): Welch's interval, Student's t
 *   with the Welch–Satterthwaite degrees of freedom;
 * - the difference of two ratios of sums (the agent's line share, durability), where a task's lines
 *   are not independent of each other: the ratio estimator's delta-method variance with tasks as
 *   clusters, normal approximation.
 *
 * "Cannot tell apart" is an interval that holds 0. Pure: no I/O; table-tested against the
 * papers' worked examples (test/domain/intervals.test.ts).
 */

/** The standard normal's 97.5th percentile: two-sided 95%. */
export const Z95 = 1.959963984540054;

export interface Interval {
  low: number;
  high: number;
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** Wilson's score interval for `x` successes in `n` trials (n ≥ 1). */
export function wilson(x: number, n: number, z = Z95): Interval {
  const p = x / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator;
  // At x = 0 or x = n the bound is exactly 0 or 1; rounding must not push it past.
  return { low: x === 0 ? 0 : clamp(centre - half, 0, 1), high: x === n ? 1 : clamp(centre + half, 0, 1) };
}

/** Newcombe's hybrid score interval for x1/n1 − x2/n2 (both n ≥ 1). */
export function newcombe(x1: number, n1: number, x2: number, n2: number, z = Z95): Interval & { difference: number } {
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const a = wilson(x1, n1, z);
  const b = wilson(x2, n2, z);
  const difference = p1 - p2;
  return {
    difference,
    low: clamp(difference - Math.sqrt((p1 - a.low) ** 2 + (b.high - p2) ** 2), -1, 1),
    high: clamp(difference + Math.sqrt((a.high - p1) ** 2 + (p2 - b.low) ** 2), -1, 1),
  };
}

/** A sample's sums: how many values, their sum and the sum of their squares. */
export interface Moments {
  n: number;
  sum: number;
  squares: number;
}

/** The sample variance from the sums (n ≥ 2); never below 0 (rounding). */
function variance(m: Moments): number {
  return Math.max(0, (m.squares - (m.sum * m.sum) / m.n) / (m.n - 1));
}

/**
 * Welch's interval for mean(a) − mean(b); null when either sample has fewer than two values.
 * Both variances 0: the interval is the difference itself.
 */
export function welch(a: Moments, b: Moments): (Interval & { difference: number; df: number }) | null {
  if (a.n < 2 || b.n < 2) return null;
  const difference = a.sum / a.n - b.sum / b.n;
  const va = variance(a) / a.n;
  const vb = variance(b) / b.n;
  const se2 = va + vb;
  if (se2 === 0) return { difference, low: difference, high: difference, df: a.n + b.n - 2 };
  const df = (se2 * se2) / ((va * va) / (a.n - 1) + (vb * vb) / (b.n - 1));
  const half = studentQuantile(0.975, df) * Math.sqrt(se2);
  return { difference, low: difference - half, high: difference + half, df };
}

/** Per-task pairs (x: the base, y: the part), as sums: Σx, Σy, Σx², Σy², Σxy over n tasks. */
export interface RatioSums {
  n: number;
  x: number;
  y: number;
  xx: number;
  yy: number;
  xy: number;
}

/** The ratio Σy/Σx and its delta-method variance with tasks as clusters; null without two tasks or any base. */
function ratioVariance(s: RatioSums): { ratio: number; variance: number } | null {
  if (s.n < 2 || s.x <= 0) return null;
  const ratio = s.y / s.x;
  const meanX = s.x / s.n;
  const sxx = (s.xx - (s.x * s.x) / s.n) / (s.n - 1);
  const syy = (s.yy - (s.y * s.y) / s.n) / (s.n - 1);
  const sxy = (s.xy - (s.x * s.y) / s.n) / (s.n - 1);
  return { ratio, variance: Math.max(0, (syy - 2 * ratio * sxy + ratio * ratio * sxx) / (s.n * meanX * meanX)) };
}

/** The interval for ratio(a) − ratio(b), kept within [-1, 1] when the ratios are shares; null when either has no variance estimate. */
export function ratioDifference(a: RatioSums, b: RatioSums, bounded: boolean, z = Z95): (Interval & { difference: number }) | null {
  const ra = ratioVariance(a);
  const rb = ratioVariance(b);
  if (!ra || !rb) return null;
  const difference = ra.ratio - rb.ratio;
  const half = z * Math.sqrt(ra.variance + rb.variance);
  const low = difference - half;
  const high = difference + half;
  return bounded ? { difference, low: clamp(low, -1, 1), high: clamp(high, -1, 1) } : { difference, low, high };
}

/** One ratio's interval (delta method, tasks as clusters), never below 0 (nor above 1 for a share). */
export function ratioInterval(s: RatioSums, bounded: boolean, z = Z95): Interval | null {
  const r = ratioVariance(s);
  if (!r) return null;
  const half = z * Math.sqrt(r.variance);
  return { low: Math.max(0, r.ratio - half), high: bounded ? Math.min(1, r.ratio + half) : r.ratio + half };
}

/** One sample's interval for its mean (Student's t), never below 0 (the figures are costs, tokens, times); null below two values. */
export function meanInterval(m: Moments): Interval | null {
  if (m.n < 2) return null;
  const mean = m.sum / m.n;
  const half = studentQuantile(0.975, m.n - 1) * Math.sqrt(variance(m) / m.n);
  return { low: Math.max(0, mean - half), high: mean + half };
}

/** Whether an interval of a difference holds 0: the data cannot tell the two apart. */
export const holdsZero = (interval: Interval) => interval.low <= 0 && interval.high >= 0;

// ── Student's t ─────────────────────────────────────────────────────────────

/** ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients: about 15 significant digits). */
function logGamma(x: number): number {
  const c = [
    0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406, 12.507343278686905,
    -0.13857109526572012, 9.984369578019572e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const shifted = x - 1;
  let sum = c[0] as number;
  for (let i = 1; i < 9; i++) sum += (c[i] as number) / (shifted + i);
  const t = shifted + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (shifted + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of the regularized incomplete beta function (modified Lentz). */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    const even = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + even * d;
    d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
    c = 1 + even / c;
    c = Math.abs(c) < tiny ? tiny : c;
    h *= d * c;
    const odd = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + odd * d;
    d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
    c = 1 + odd / c;
    c = Math.abs(c) < tiny ? tiny : c;
    const step = d * c;
    h *= step;
    if (Math.abs(step - 1) < 1e-15) break;
  }
  return h;
}

/** I_x(a, b), the regularized incomplete beta function. */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The fraction converges fast on one side of the mean; the symmetry relation covers the other.
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b;
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, not necessarily whole). */
export function studentCdf(t: number, df: number): number {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The `p` quantile of Student's t (0.5 < p < 1), by bisection on the distribution function. */
export function studentQuantile(p: number, df: number): number {
  let low = 0;
  let high = 1;
  while (studentCdf(high, df) < p) high *= 2;
  for (let i = 0; i < 200 && high - low > 1e-12 * high; i++) {
    const mid = (low + high) / 2;
    if (studentCdf(mid, df) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}
