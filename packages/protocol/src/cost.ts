/**
 * @module cost
 * How a cost in dollars is shown: sums of floats, rounded to the micro-dollar. One rule for the
 * edge's running totals and account index and for `waymark verify`'s rebuild of them; no zod, so
 * the helper's verify loads only what it runs.
 */

/** Costs are sums of floats: shown to the micro-dollar. */
export function roundCost(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}
