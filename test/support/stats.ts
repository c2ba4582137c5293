/**
 * Latency statistics and seeded randomness shared by the benches and the bounded end-to-end
 * tests: nearest-rank percentiles, a per-label sample recorder, and a small PRNG so any
 * failure reproduces from its seed. No imports: Node runs it directly with type stripping.
 */

export interface Summary {
  n: number;
  min: number;
  median: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted samples. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    n: sorted.length,
    min: sorted[0] ?? Number.NaN,
    median: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Latency samples per label (tool name, "health", …). */
export class Recorder {
  readonly samples = new Map<string, number[]>();
  add(label: string, ms: number): void {
    const list = this.samples.get(label) ?? [];
    list.push(ms);
    this.samples.set(label, list);
  }
  all(): number[] {
    return [...this.samples.values()].flat();
  }
  summaries(): Record<string, Summary> {
    return Object.fromEntries([...this.samples].map(([label, xs]) => [label, summarize(xs)]));
  }
}

// Seeded randomness: failures reproduce from the seed.

export type Random = () => number;

/** mulberry32: small, fast, good enough to pick cases. */
export function prng(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
