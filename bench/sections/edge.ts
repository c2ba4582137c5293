/**
 * The edge's per-task work, calling src/domain's exported functions directly:
 * - union + dedup + scope (computeNetChanges, summarizeChanges, checkScope) on synthetic git
 *   observations of 1k / 10k / 50k entries, best of 11 (the others measure the JIT warming up,
 *   the GC and the machine's load); target at 50k: ≤ 50 ms. The same functions of an old build (`--old-ref`, as
 *   the load A/B; src/domain of `git archive <ref>`) run interleaved on the same observations,
 *   so the before/after is measured in one run.
 * - the worst scope match: a hostile area (`**` then nine `*a` then `*b`) against paths that
 *   never match, doubling the path length up to 4,096 bytes. Each length runs in a worker
 *   thread that is terminated at its deadline, so a backtracking matcher cannot hang the bench.
 */
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import type { BenchContext } from "../lib/context.ts";
import { type Domain, domainModuleUrl, loadDomain, observations } from "../lib/domain.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { atMost, count, ms, times } from "../lib/table.ts";

const EDGE_TARGET_MS = 50;
const HOSTILE_AREA = "**/*a*a*a*a*a*a*a*a*a*b";
const AREAS = ["auth", "api", "packages/p1*/**", "*.md", "!packages/p13/**"];

export interface EdgeTiming {
  entries: number;
  changed: number;
  net_ms: number;
  summary_ms: number;
  scope_ms: number;
  total_ms: number;
}

function timeOnce(domain: Domain, entries: number, snapshot: unknown, changes: unknown): EdgeTiming {
  const t0 = performance.now();
  const net = domain.computeNetChanges(snapshot, changes);
  const t1 = performance.now();
  domain.summarizeChanges(net);
  const t2 = performance.now();
  domain.checkScope(
    AREAS,
    net.map((change) => change.path),
  );
  const t3 = performance.now();
  return { entries, changed: net.length, net_ms: t1 - t0, summary_ms: t2 - t1, scope_ms: t3 - t2, total_ms: t3 - t0 };
}

/**
 * Best of `runs` per size for each build, the builds taking turns (and turns at going first) on
 * the same observations, so load on the machine weighs on both alike.
 */
export async function edgeTimings(sizes: readonly number[], domains: readonly Domain[], runs = 11): Promise<EdgeTiming[][]> {
  const out: EdgeTiming[][] = domains.map(() => []);
  for (const entries of sizes) {
    const { snapshot, changes } = observations(entries);
    const best: (EdgeTiming | null)[] = domains.map(() => null);
    for (let run = 0; run < runs; run++) {
      for (let turn = 0; turn < domains.length; turn++) {
        const which = (run + turn) % domains.length;
        const timing = timeOnce(domains[which] as Domain, entries, snapshot, changes);
        const known = best[which];
        if (!known || timing.total_ms < known.total_ms) best[which] = timing;
      }
    }
    best.forEach((timing, which) => {
      if (timing) out[which]?.push(timing);
    });
  }
  return out;
}

export interface ScopeMatchTiming {
  path_bytes: number;
  /** null when the deadline stopped it */
  per_match_ms: number | null;
  error?: string;
}

/** One hostile match in a worker thread, stopped at `deadlineMs`. */
async function timeMatch(moduleUrl: string, path: string, deadlineMs: number): Promise<ScopeMatchTiming> {
  const worker = new Worker(new URL("../lib/scope-worker.ts", import.meta.url), {
    workerData: { moduleUrl, area: HOSTILE_AREA, path, budgetMs: 200 },
  });
  try {
    const answer = await new Promise<{ perMatchMs?: number; error?: string } | null>((resolve, reject) => {
      const timer = setTimeout(() => resolve(null), deadlineMs);
      worker.once("message", (message: { perMatchMs?: number; error?: string }) => {
        clearTimeout(timer);
        resolve(message);
      });
      worker.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    if (answer === null) return { path_bytes: path.length, per_match_ms: null };
    return { path_bytes: path.length, per_match_ms: answer.perMatchMs ?? null, error: answer.error };
  } finally {
    await worker.terminate();
  }
}

/** Doubling path lengths up to 4,096 bytes; stops at the first length that misses its deadline. */
export async function worstScopeMatch(deadlineMs: number): Promise<ScopeMatchTiming[]> {
  const moduleUrl = await domainModuleUrl();
  const out: ScopeMatchTiming[] = [];
  for (let length = 16; length <= 4096; length *= 2) {
    // A path that never matches (no "b"), all "a": every "*a" can split it in many ways.
    const path = `src/${"a".repeat(length - 4)}`;
    const timing = await timeMatch(moduleUrl, path, deadlineMs);
    out.push(timing);
    if (timing.per_match_ms === null || timing.error) break;
  }
  return out;
}

/** The build the edge A/B compares with: the same `--old-ref` as the load A/B. */
function oldRef(): string {
  const { values } = parseArgs({ options: { "old-ref": { type: "string", default: "6413a27" } }, strict: false });
  return String(values["old-ref"]);
}

export async function edge(context: BenchContext): Promise<void> {
  const ref = oldRef();
  context.log(`edge: union + dedup + scope at 1k / 10k / 50k entries, A/B with ${ref}`);
  const old = checkOutOldBuild(ref);
  let timings: EdgeTiming[];
  let oldTimings: EdgeTiming[];
  try {
    [timings = [], oldTimings = []] = await edgeTimings([1_000, 10_000, 50_000], [await loadDomain(), await loadDomain(old.dir)]);
  } finally {
    old.remove();
  }
  const breakdown = (t: EdgeTiming) =>
    `net ${t.net_ms.toFixed(1)} + summary ${t.summary_ms.toFixed(1)} + scope ${t.scope_ms.toFixed(1)} ms`;
  for (const [i, t] of timings.entries()) {
    const before = oldTimings[i];
    context.table.add({
      area: i === 0 ? "edge: union + dedup + scope (src/domain)" : "",
      measure: `${count(t.entries)} change entries (${count(t.changed)} changed)`,
      value: ms(t.total_ms),
      floor: before ? `old ${ms(before.total_ms)}` : "",
      ratio: `${before ? `${times(t.total_ms, before.total_ms)} of old; ` : ""}${breakdown(t)}`,
      target: t.entries === 50_000 ? atMost(t.total_ms, EDGE_TARGET_MS, " ms") : undefined,
    });
  }
  const oldLargest = oldTimings.at(-1);
  if (oldLargest) {
    context.table.add({
      measure: `old build ${ref} (${old.commit.slice(0, 7)}), ${count(oldLargest.entries)} entries, interleaved`,
      value: ms(oldLargest.total_ms),
      ratio: breakdown(oldLargest),
    });
  }
  const deadlineMs = context.quick ? 2000 : 5000;
  context.log(`edge: worst scope match (${HOSTILE_AREA}), deadline ${deadlineMs} ms per path length`);
  const ladder = await worstScopeMatch(deadlineMs);
  const last = ladder.at(-1) as ScopeMatchTiming;
  const lastDone = [...ladder].reverse().find((t) => t.per_match_ms !== null && !t.error);
  const value =
    last.error !== undefined
      ? `refused: ${last.error.slice(0, 80)}`
      : last.per_match_ms === null
        ? `> ${ms(deadlineMs)} per match at ${count(last.path_bytes)} bytes (stopped there)`
        : `${ms(last.per_match_ms)} per match at ${count(last.path_bytes)} bytes`;
  context.table.add({
    area: "worst scope match",
    measure: `\`${HOSTILE_AREA}\` over a path of up to 4,096 bytes`,
    value,
    ratio: lastDone && lastDone !== last ? `${ms(lastDone.per_match_ms ?? Number.NaN)} at ${lastDone.path_bytes} bytes` : "",
  });
  context.results.edge = {
    timings,
    old_build: { ref, commit: old.commit, timings: oldTimings },
    target_ms_at_50k: EDGE_TARGET_MS,
    worst_scope_match: { area: HOSTILE_AREA, deadline_ms: deadlineMs, ladder },
  };
}
