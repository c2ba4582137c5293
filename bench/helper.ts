/**
 * The local helper's git snapshot and changes against the raw git floor
 * (`git status --porcelain=v2 -z -uall`) on synthetic repositories of 1k/10k/100k files with
 * 1% changed (committed, uncommitted, untracked), median of --runs, interleaved.
 * It loads the helper's built modules (client-helper/dist), so build first.
 *
 *   npm run bench:helper
 *   npm run build:helper && npx node bench/helper.ts [--sizes 1000,10000,100000] [--runs 7] [--json out.json]
 */
import { rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { applyChanges, buildRepo, git, gitStatus, time } from "./lib/repos.ts";

/** The two functions of the helper's snapshot module that this bench times. */
interface HelperSnapshots {
  takeSnapshot(dir: string): Promise<unknown>;
  computeChanges(start: unknown): Promise<{ dirty: unknown[]; committed?: unknown[] }>;
}

const dist = join(import.meta.dirname, "..", "client-helper", "dist", "snapshot.js");
let helper: HelperSnapshots;
try {
  helper = (await import(pathToFileURL(dist).href)) as HelperSnapshots;
} catch (error) {
  console.error(`cannot load ${dist} (${error instanceof Error ? error.message : error}); build first: npm run build:helper`);
  process.exit(1);
}

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    runs: { type: "string", default: "7" },
    json: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("usage: npx node bench/helper.ts [--sizes 1000,10000,100000] [--runs 7] [--json out.json]");
  process.exit(0);
}
const sizes = values.sizes.split(",").map(Number);
const runs = Number(values.runs);
if (sizes.some((n) => !Number.isInteger(n) || n < 100 || n > 1_000_000) || !Number.isInteger(runs) || runs < 1 || runs > 100) {
  console.error("--sizes takes integers 100..1,000,000, --runs an integer 1..100");
  process.exit(2);
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

export interface HelperRow {
  files: number;
  changed_files: number;
  dirty_paths: number;
  committed_paths: number;
  floor_ms: number;
  snapshot_ms: number;
  changes_ms: number;
  snapshot_ratio: number;
  changes_ratio: number;
}

const results: HelperRow[] = [];
const gitVersion = git(process.cwd(), "--version").toString().trim();
console.error(`${gitVersion}, node ${process.version}, ${cpus().length} cpus, ${runs} runs per measure`);
for (const n of sizes) {
  const t0 = Date.now();
  const dir = await buildRepo(n);
  const start = await helper.takeSnapshot(dir);
  const changedFiles = await applyChanges(dir, n);
  console.error(`built ${n} files in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${changedFiles} changed`);
  // Warm the page cache and git's own caches for all three.
  await gitStatus(dir);
  await helper.takeSnapshot(dir);
  const changes = await helper.computeChanges(start);
  const floor: number[] = [];
  const snapshot: number[] = [];
  const changesMs: number[] = [];
  // Interleaved so drift in machine load hits all three alike.
  for (let r = 0; r < runs; r++) {
    floor.push(await time(() => gitStatus(dir)));
    snapshot.push(await time(() => helper.takeSnapshot(dir)));
    changesMs.push(await time(() => helper.computeChanges(start)));
  }
  const floorMs = median(floor);
  results.push({
    files: n,
    changed_files: changedFiles,
    dirty_paths: changes.dirty.length,
    committed_paths: changes.committed?.length ?? 0,
    floor_ms: floorMs,
    snapshot_ms: median(snapshot),
    changes_ms: median(changesMs),
    snapshot_ratio: median(snapshot) / floorMs,
    changes_ratio: median(changesMs) / floorMs,
  });
  rmSync(dir, { recursive: true, force: true });
}

const pad = (s: string | number, w: number) => String(s).padStart(w);
console.log(`${pad("files", 8)} ${pad("git status", 11)} ${pad("snapshot", 9)} ${pad("ratio", 6)} ${pad("changes", 9)} ${pad("ratio", 6)}`);
for (const r of results) {
  console.log(
    `${pad(r.files, 8)} ${pad(`${r.floor_ms.toFixed(1)} ms`, 11)} ${pad(`${r.snapshot_ms.toFixed(1)} ms`, 9)} ${pad(`${r.snapshot_ratio.toFixed(2)}x`, 6)} ${pad(`${r.changes_ms.toFixed(1)} ms`, 9)} ${pad(`${r.changes_ratio.toFixed(2)}x`, 6)}`,
  );
}
if (values.json) {
  writeFileSync(
    values.json,
    `${JSON.stringify({ git: gitVersion, node: process.version, cpus: cpus().length, runs, results }, null, 2)}\n`,
  );
  console.error(`wrote ${values.json}`);
}
