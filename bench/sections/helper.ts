/**
 * The local helper as agents and scripts use it (its built CLI, client-helper/dist/bin.js):
 * - through `waymark mcp` (stdio, forwarding to the local dev server) in a git repository of
 *   10,000 files: start_task and complete_task each against the floor of one `git status` plus
 *   one log_milestone round trip through the same helper, interleaved; target ≤ 1.5x. The old
 *   build's helper (`--old-ref`) takes turns with this one, for a before/after in one run.
 * - `waymark snapshot` outside git (the checksum fallback) on 100,000 files against a plain
 *   walk + SHA-1 of every file in its own process, interleaved; target ≤ 1.5x. Cold (an empty
 *   cache: every file hashed) and warm (the scan cache of the run before: only files whose stat
 *   data moved are hashed, as git does with its index) are separate rows.
 * - the git snapshot and changes against `git status` at 1k / 10k / 100k files (bench/helper.ts
 *   as a child process, which reads the helper's modules).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Client } from "@modelcontextprotocol/client";
import { connectThroughHelper } from "../../test/support/agents.ts";
import { callTool, type McpTarget } from "../../test/support/mcp-client.ts";
import { type Summary, summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { checkOutOldBuild } from "../lib/old-build.ts";
import { buildRepo, filePath, gitStatus, time, writeTree } from "../lib/repos.ts";
import { runToEnd as runProcess } from "../lib/run-to-end.ts";
import { atMost, count, ms, percentiles, times } from "../lib/table.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "client-helper", "dist", "bin.js");
const RATIO_TARGET = 1.5;

export function buildHelper(context: BenchContext): void {
  context.log("helper: building client-helper");
  execFileSync(process.execPath, [join(ROOT, "client-helper", "build.mjs")], { cwd: ROOT, stdio: "inherit" });
}

export function helperClient(server: McpTarget, dir: string, cache: string, bin: string = BIN, configHome?: string): Promise<Client> {
  return connectThroughHelper(server, dir, {
    cacheHome: cache,
    ...(configHome ? { env: { XDG_CONFIG_HOME: configHome } } : {}),
    name: "waymark-bench-agent",
    node: process.execPath,
    bin,
    quiet: true,
  });
}

export async function timedCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ ms: number; structured: Record<string, unknown> }> {
  const t0 = performance.now();
  const outcome = await callTool(client, name, args);
  const elapsed = performance.now() - t0;
  if (outcome.isError) throw new Error(`${name} through the helper failed: ${outcome.text.slice(0, 300)}`);
  return { ms: elapsed, structured: outcome.structured };
}

/** The old build's helper (`--old-ref`, as the load A/B), built in a `git archive` of that ref; null when it cannot be built. */
export function oldHelper(context: BenchContext): { ref: string; bin: string; remove(): void } | null {
  const { values } = parseArgs({ options: { "old-ref": { type: "string", default: "6413a27" } }, strict: false });
  const ref = String(values["old-ref"]);
  const old = checkOutOldBuild(ref);
  try {
    const helperDir = join(old.dir, "client-helper");
    // Builds of that era: esbuild (build.mjs) or plain tsc.
    if (existsSync(join(helperDir, "build.mjs")))
      execFileSync(process.execPath, [join(helperDir, "build.mjs")], { cwd: old.dir, stdio: "ignore" });
    else
      execFileSync(
        process.execPath,
        [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(helperDir, "tsconfig.build.json")],
        { cwd: old.dir, stdio: "ignore" },
      );
    return { ref: `${ref} (${old.commit.slice(0, 7)})`, bin: join(helperDir, "dist", "bin.js"), remove: old.remove };
  } catch (error) {
    context.log(`helper calls: the helper of ${ref} could not be built (${String(error).slice(0, 200)}); no A/B`);
    old.remove();
    return null;
  }
}

/**
 * Where the helpers' cache directories go: inside a long-lived folder (bench/results, not
 * committed), as a user's ~/.cache/waymark is. A folder made straight in a crowded /tmp was
 * placed on this machine where creating files cost 25-50 times more (200 small files: ~250 ms
 * against 5-10 ms), which no user's cache directory pays.
 */
export const HELPER_CACHES = join(ROOT, "bench", "results", "helper-caches");

/**
 * Untimed tasks per side before the timed ones. On a fresh server (`--only helper-calls`) V8 was
 * still optimizing the Worker's complete_task code after two: 1.44-1.45x with 2, 1.33-1.36x
 * with 8, against 1.27-1.29x in the full run, whose server has served the tools section before.
 */
const WARM_UP_TASKS = 8;

interface HelperSide {
  label: string;
  client: Client;
  workflowId: unknown;
  start: number[];
  milestone: number[];
  complete: number[];
}

/**
 * start_task / complete_task through `waymark mcp` at `files` files vs git status + one
 * log_milestone, this build's helper and the old build's taking turns on the same repository
 * and server (each side's tasks start and complete within its turn).
 */
export async function helperCalls(context: BenchContext, server: McpTarget): Promise<void> {
  const files = 10_000;
  const samples = context.quick ? 8 : 25;
  context.log(`helper calls: ${count(files)}-file repository, ${samples} tasks through waymark mcp`);
  const repo = await buildRepo(files);
  const old = oldHelper(context);
  mkdirSync(HELPER_CACHES, { recursive: true });
  const caches: string[] = [];
  const sides: HelperSide[] = [];
  try {
    for (const [label, bin] of [["this build", BIN], ...(old ? [[`old build ${old.ref}`, old.bin]] : [])] as [string, string][]) {
      const cache = mkdtempSync(join(HELPER_CACHES, "cache-"));
      caches.push(cache);
      const client = await helperClient(server, repo, cache, bin);
      const wf = await timedCall(client, "start_workflow", { name: `Through the helper (${label})` });
      sides.push({ label, client, workflowId: wf.structured.workflow_id, start: [], milestone: [], complete: [] });
    }
    const status: number[] = [];
    // 1% of the files edited during each task (the same 100 files, new content each time).
    const edited = Array.from({ length: files / 100 }, (_, k) => filePath((k * 97) % files));
    for (let i = -WARM_UP_TASKS; i < samples; i++) {
      const floorMs = await time(() => gitStatus(repo));
      if (i >= 0) status.push(floorMs);
      for (let turn = 0; turn < sides.length; turn++) {
        const side = sides[(i + WARM_UP_TASKS + turn) % sides.length] as HelperSide;
        const task = await timedCall(side.client, "start_task", {
          workflow_id: side.workflowId,
          name: `Task ${i}`,
          goal: "g",
          areas: ["d1/**"],
        });
        const log = await timedCall(side.client, "log_milestone", { task_id: task.structured.task_id, message: "halfway" });
        for (const path of edited) writeFileSync(join(repo, path), `task ${i} (${side.label}) edit of ${path}\n`);
        const done = await timedCall(side.client, "complete_task", {
          task_id: task.structured.task_id,
          status: "success",
          outcome: { summary: "s" },
        });
        if (i < 0) continue; // warm-up
        side.milestone.push(log.ms);
        side.start.push(task.ms);
        side.complete.push(done.ms);
        const changed = done.structured.files_changed as { modified?: unknown[] } | undefined;
        if (i === 0 && (changed?.modified?.length ?? 0) !== edited.length)
          context.fail(
            `complete_task through the helper (${side.label}) reported ${changed?.modified?.length ?? 0} modified files, expected ${edited.length}`,
          );
      }
    }
    const gitStatusSummary = summarize(status);
    const results: Record<string, unknown> = { files, samples, git_status: gitStatusSummary, ratio_target: RATIO_TARGET };
    for (const [index, side] of sides.entries()) {
      const s = { log_milestone: summarize(side.milestone), start_task: summarize(side.start), complete_task: summarize(side.complete) };
      const floor = gitStatusSummary.median + s.log_milestone.median;
      context.table.add({
        area: index === 0 ? `through the helper (waymark mcp), ${count(files)} files` : "",
        measure: `${side.label}: floor git status ${ms(gitStatusSummary.median)} + log_milestone via helper ${ms(s.log_milestone.median)}, n=${samples}`,
        value: ms(floor),
      });
      for (const tool of ["start_task", "complete_task"] as const) {
        const t = s[tool] as Summary;
        context.table.add({
          measure: `${side.label}: ${tool} (1% edited), n=${t.n}`,
          value: percentiles(t),
          floor: ms(floor),
          ratio: times(t.median, floor),
          target: index === 0 ? atMost(t.median / floor, RATIO_TARGET, "x") : undefined,
        });
      }
      results[index === 0 ? "this_build" : "old_build"] = { label: side.label, ...s, floor_ms: floor };
    }
    context.results.helper_calls = results;
  } finally {
    for (const side of sides) await side.client.close();
    old?.remove();
    rmSync(repo, { recursive: true, force: true });
    for (const cache of caches) rmSync(cache, { recursive: true, force: true });
  }
}

function runToEnd(args: string[], cacheHome: string = tmpdir()): Promise<number> {
  return runProcess(process.execPath, args, { env: { ...process.env, XDG_CACHE_HOME: cacheHome } });
}

/** `waymark snapshot` outside git vs a plain walk + SHA-1, both as processes; cold and warm cache. */
export async function checksumSnapshot(context: BenchContext): Promise<void> {
  const files = context.quick ? 10_000 : 100_000;
  const runs = 3;
  context.log(`checksum snapshot: ${count(files)} files outside git, ${runs} runs`);
  const dir = writeTree(files, "plain");
  const warmCache = mkdtempSync(join(tmpdir(), "waymark-bench-scan-cache-"));
  const coldCaches: string[] = [];
  const coldCache = () => {
    const cache = mkdtempSync(join(tmpdir(), "waymark-bench-no-cache-"));
    coldCaches.push(cache);
    return cache;
  };
  try {
    const snapshotArgs = [BIN, "snapshot", "--dir", dir];
    const floorArgs = [join(ROOT, "bench", "lib", "walk-floor.ts"), dir];
    await runToEnd(floorArgs); // warm the page cache for both
    const outputBytes = await runToEnd(snapshotArgs, warmCache); // and the scan cache
    const floor: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let r = 0; r < runs; r++) {
      floor.push(await time(() => runToEnd(floorArgs)));
      cold.push(await time(() => runToEnd(snapshotArgs, coldCache())));
      warm.push(await time(() => runToEnd(snapshotArgs, warmCache)));
    }
    const f = summarize(floor);
    const c = summarize(cold);
    const w = summarize(warm);
    context.table.add({
      area: `checksum snapshot (no git), ${count(files)} files${context.quick ? " (--quick size)" : ""}`,
      measure: `waymark snapshot, no scan cache (every file hashed) vs walk + SHA-1, n=${runs}`,
      value: `${ms(c.median)} (min ${ms(c.min)}, max ${ms(c.max)})`,
      floor: ms(f.median),
      ratio: times(c.median, f.median),
      target: atMost(c.median / f.median, RATIO_TARGET, "x"),
    });
    context.table.add({
      measure: `waymark snapshot, scan cache of the run before (stat-unchanged files not re-read), n=${runs}`,
      value: `${ms(w.median)} (min ${ms(w.min)}, max ${ms(w.max)})`,
      floor: ms(f.median),
      ratio: times(w.median, f.median),
      target: atMost(w.median / f.median, RATIO_TARGET, "x"),
    });
    context.results.checksum_snapshot = {
      files,
      runs,
      snapshot: c,
      snapshot_warm: w,
      floor: f,
      output_bytes: outputBytes,
      ratio_target: RATIO_TARGET,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const cache of [warmCache, ...coldCaches]) rmSync(cache, { recursive: true, force: true });
  }
}

/** bench/helper.ts as a child: the git snapshot and changes vs git status. */
export function gitSnapshots(context: BenchContext, resultsDir: string): void {
  const sizes = context.quick ? "1000,10000" : "1000,10000,100000";
  context.log(`helper: git snapshot and changes at ${sizes} files`);
  const out = join(resultsDir, "helper.json");
  execFileSync(process.execPath, [join(ROOT, "bench", "helper.ts"), "--sizes", sizes, "--runs", context.quick ? "3" : "7", "--json", out], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const helper = JSON.parse(readFileSync(out, "utf8")) as {
    git: string;
    results: { files: number; floor_ms: number; snapshot_ms: number; changes_ms: number }[];
  };
  for (const [i, r] of helper.results.entries()) {
    const area = i === 0 ? `helper (${helper.git.replace("git version ", "git ")}), 1% changed` : "";
    context.table.add({
      area,
      measure: `snapshot, ${count(r.files)} files`,
      value: ms(r.snapshot_ms),
      floor: ms(r.floor_ms),
      ratio: times(r.snapshot_ms, r.floor_ms),
    });
    context.table.add({
      measure: `changes, ${count(r.files)} files`,
      value: ms(r.changes_ms),
      floor: ms(r.floor_ms),
      ratio: times(r.changes_ms, r.floor_ms),
    });
  }
  context.results.helper = helper;
}
