/**
 * @module domain/insight-measures
 * The sums the Insights rollups keep (docs/insights.md): one vector of MEASURES per day and
 * group, each the sum of what its tasks contribute. A task's contribution is a pure function of
 * its facts, its people's verdicts and the durability observed of its lines, so the account can
 * take a task's old contribution out and put its new one in whenever any of these changes (a
 * verdict after the completion, a later observation), and a replayed push changes nothing.
 * Counts, sums, sums of squares and of products: everything the figures and their intervals
 * (./intervals.ts) are computed from, and nothing that needs the tasks again.
 */
import type { InsightTaskFact } from "./insight-facts";

/** The measures in the order a vector holds them. Appending one changes MEASURES_VERSION (the rollups are rebuilt). */
export const MEASURES = [
  "tasks",
  "success",
  // Tests after the last edit: tasks whose commands were observed, by source; of them, a test passed.
  "cmd_signed",
  "cmd_claimed",
  "passed",
  "success_unbacked",
  // Declared areas: tasks checked, by source; of them, outside; tasks observed without areas.
  "scope_signed",
  "scope_claimed",
  "outside",
  "no_areas",
  // Lines: tasks with observed lines, by source; lines by writer; per task x = agent + others, y = agent.
  "lines_signed",
  "lines_claimed",
  "l_agent",
  "l_others",
  "l_not_observed",
  "l_xx",
  "l_yy",
  "l_xy",
  // People's verdicts: reviewed, the latest verdict, seconds from completion to the first one after it.
  "reviewed",
  "approved",
  "changes_requested",
  "wait_n",
  "wait_sum",
  "wait_sq",
  // Usage: tasks with a cost (tokens), by source; their sums and squares; accepted ones among them and their sums.
  "cost_signed",
  "cost_claimed",
  "cost_sum",
  "cost_sq",
  "accepted_cost_n",
  "accepted_cost_sum",
  "tokens_signed",
  "tokens_claimed",
  "tokens_sum",
  "tokens_sq",
  "accepted_tokens_n",
  "accepted_tokens_sum",
  // Durability at the latest observation, and at the first one DURABILITY_DAYS or more after completion:
  // tasks observed, by source; per task x = the agent's lines recorded, y = still present.
  "dur_signed",
  "dur_claimed",
  "d_x",
  "d_y",
  "d_xx",
  "d_yy",
  "d_xy",
  "durn_signed",
  "durn_claimed",
  "dn_x",
  "dn_y",
  "dn_xx",
  "dn_yy",
  "dn_xy",
] as const;
export type Measure = (typeof MEASURES)[number];
/** Stored with the rollups: a different version makes the account rebuild them from its task rows. */
export const MEASURES_VERSION = 1;

export type Sums = number[];
const INDEX = Object.fromEntries(MEASURES.map((m, i) => [m, i])) as Record<Measure, number>;

export const zeroSums = (): Sums => new Array<number>(MEASURES.length).fill(0);
export const sumOf = (sums: Sums, measure: Measure): number => sums[INDEX[measure]] ?? 0;

/** `into` += `add` × sign (in place). */
export function addSums(into: Sums, add: Sums, sign = 1): Sums {
  for (let i = 0; i < MEASURES.length; i++) into[i] = (into[i] ?? 0) + sign * (add[i] ?? 0);
  return into;
}

/** A person's verdicts on a task once it completed, as far as the figures need them. */
export interface VerdictState {
  latest: "approved" | "changes_requested";
  /** Seconds from the task's completion to the first verdict. */
  wait_seconds: number;
}

/** One observation of how many of the task's agent lines are still where they were written. */
export interface DurabilityObservation {
  recorded: number;
  present: number;
  kind: "signed" | "claimed";
}

/** What the durability figures read of a task: its latest observation, and its first one DURABILITY_DAYS or more after completion. */
export interface DurabilityState {
  latest: DurabilityObservation | null;
  at_days: DurabilityObservation | null;
}

function set(sums: Sums, measure: Measure, value: number): void {
  sums[INDEX[measure]] = value;
}

function pair(sums: Sums, names: readonly [Measure, Measure, Measure, Measure, Measure], x: number, y: number): void {
  const [nx, ny, nxx, nyy, nxy] = names;
  set(sums, nx, x);
  set(sums, ny, y);
  set(sums, nxx, x * x);
  set(sums, nyy, y * y);
  set(sums, nxy, x * y);
}

function durability(sums: Sums, prefix: "d" | "dn", seen: DurabilityObservation | null): void {
  if (!seen || seen.recorded <= 0) return;
  set(
    sums,
    prefix === "d" ? (seen.kind === "signed" ? "dur_signed" : "dur_claimed") : seen.kind === "signed" ? "durn_signed" : "durn_claimed",
    1,
  );
  const names = prefix === "d" ? (["d_x", "d_y", "d_xx", "d_yy", "d_xy"] as const) : (["dn_x", "dn_y", "dn_xx", "dn_yy", "dn_xy"] as const);
  pair(sums, names, seen.recorded, Math.min(seen.present, seen.recorded));
}

/** A task's cost (or tokens), when reported: counted by source, summed and squared, and again if it was approved. */
function spent(
  sums: Sums,
  value: number | null,
  accepted: boolean,
  source: Measure,
  [sum, squares, acceptedN, acceptedSum]: readonly [Measure, Measure, Measure, Measure],
): void {
  if (value === null) return;
  set(sums, source, 1);
  set(sums, sum, value);
  set(sums, squares, value * value);
  if (!accepted) return;
  set(sums, acceptedN, 1);
  set(sums, acceptedSum, value);
}

/** What one task adds to its day's and group's sums. */
export function contribution(fact: InsightTaskFact, verdict: VerdictState | null, lasting: DurabilityState | null): Sums {
  const sums = zeroSums();
  set(sums, "tasks", 1);
  const success = fact.status === "success";
  if (success) set(sums, "success", 1);
  const observedBy = fact.files === "signed" ? "signed" : "claimed";
  if (fact.tests !== null) {
    set(sums, observedBy === "signed" ? "cmd_signed" : "cmd_claimed", 1);
    if (fact.tests === "passed") set(sums, "passed", 1);
    else if (success) set(sums, "success_unbacked", 1);
  }
  if (fact.outside_areas !== null) {
    set(sums, observedBy === "signed" ? "scope_signed" : "scope_claimed", 1);
    if (fact.outside_areas) set(sums, "outside", 1);
  } else if (fact.files !== "not_observed" && !fact.areas_declared) set(sums, "no_areas", 1);
  if (fact.lines) {
    const seen = fact.lines.agent + fact.lines.others;
    set(sums, "l_not_observed", fact.lines.not_observed);
    if (seen > 0) {
      set(sums, observedBy === "signed" ? "lines_signed" : "lines_claimed", 1);
      set(sums, "l_agent", fact.lines.agent);
      set(sums, "l_others", fact.lines.others);
      set(sums, "l_xx", seen * seen);
      set(sums, "l_yy", fact.lines.agent * fact.lines.agent);
      set(sums, "l_xy", seen * fact.lines.agent);
    }
  }
  const accepted = verdict?.latest === "approved";
  if (verdict) {
    set(sums, "reviewed", 1);
    set(sums, accepted ? "approved" : "changes_requested", 1);
    set(sums, "wait_n", 1);
    set(sums, "wait_sum", verdict.wait_seconds);
    set(sums, "wait_sq", verdict.wait_seconds * verdict.wait_seconds);
  }
  const usage = fact.usage;
  const signed = usage?.kind === "signed";
  spent(sums, usage?.cost_usd ?? null, accepted, signed ? "cost_signed" : "cost_claimed", [
    "cost_sum",
    "cost_sq",
    "accepted_cost_n",
    "accepted_cost_sum",
  ]);
  spent(sums, usage?.tokens ?? null, accepted, signed ? "tokens_signed" : "tokens_claimed", [
    "tokens_sum",
    "tokens_sq",
    "accepted_tokens_n",
    "accepted_tokens_sum",
  ]);
  durability(sums, "d", lasting?.latest ?? null);
  durability(sums, "dn", lasting?.at_days ?? null);
  return sums;
}
