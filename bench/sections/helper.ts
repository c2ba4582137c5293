/**
 * The local helper as agents and scripts use it (its built CLI, client-helper/dist/bin.js):
 * - through `waymark mcp` (stdio, forwarding to the local dev server) in a git repository of
 *   10,000 files: start_task and complete_task each against the floor of one `git status` plus
 *   one log_milestone round trip through the same helper, interleaved; target ≤ 1.5x.
 * - `waymark snapshot` outside git (the checksum fallback) on 100,000 files against a plain
 *   walk + SHA-1 of every file in its own process, interleaved; target ≤ 1.5x. Cold (an empty
 *   cache: every file hashed) and warm (the scan cache of the run before: only files whose stat
 *   data moved are hashed, as git does with its index) are separate rows.
 * - the git snapshot and changes against `git status` at 1k / 10k / 100k files (bench/helper.ts
 *   as a child process, which reads the helper's modules).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { Target } from "../../test/support/agents.ts";
import { type Summary, summarize } from "../../test/support/stats.ts";
import { callToolOutcome } from "../../test/support/tool-outcome.ts";
import type { BenchContext } from "../lib/context.ts";
import { buildRepo, filePath, gitStatus, time, writeTree } from "../lib/repos.ts";
import { atMost, count, ms, percentiles, times } from "../lib/table.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "client-helper", "dist", "bin.js");
const RATIO_TARGET = 1.5;

export function buildHelper(context: BenchContext): void {
  context.log("helper: building client-helper");
  execFileSync(process.execPath, [join(ROOT, "client-helper", "build.mjs")], { cwd: ROOT, stdio: "inherit" });
}

async function helperClient(server: Target, dir: string, cache: string): Promise<Client> {
  const client = new Client({ name: "waymark-bench-agent", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--url", `${server.url}/mcp`, "--dir", dir],
      env: { ...(process.env as Record<string, string>), WAYMARK_TOKEN: server.token, XDG_CACHE_HOME: cache },
      stderr: "ignore",
    }),
  );
  return client;
}

async function timedCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ ms: number; structured: Record<string, unknown> }> {
  const t0 = performance.now();
  const outcome = await callToolOutcome(client, name, args);
  const elapsed = performance.now() - t0;
  if (outcome.isError) throw new Error(`${name} through the helper failed: ${outcome.text.slice(0, 300)}`);
  return { ms: elapsed, structured: outcome.structured };
}

/** start_task / complete_task through `waymark mcp` at `files` files vs git status + one log_milestone. */
export async function helperCalls(context: BenchContext, server: Target): Promise<void> {
  const files = 10_000;
  const samples = context.quick ? 8 : 25;
  context.log(`helper calls: ${count(files)}-file repository, ${samples} tasks through waymark mcp`);
  const repo = await buildRepo(files);
  const cache = mkdtempSync(join(tmpdir(), "waymark-bench-cache-"));
  const client = await helperClient(server, repo, cache);
  try {
    const wf = await timedCall(client, "start_workflow", { name: "Through the helper" });
    const status: number[] = [];
    const milestone: number[] = [];
    const start: number[] = [];
    const complete: number[] = [];
    // 1% of the files edited during each task (the same 100 files, new content each time).
    const edited = Array.from({ length: files / 100 }, (_, k) => filePath((k * 97) % files));
    for (let i = -2; i < samples; i++) {
      const floorMs = await time(() => gitStatus(repo));
      const task = await timedCall(client, "start_task", {
        workflow_id: wf.structured.workflow_id,
        name: `Task ${i}`,
        goal: "g",
        areas: ["d1/**"],
      });
      const log = await timedCall(client, "log_milestone", { task_id: task.structured.task_id, message: "halfway" });
      for (const path of edited) writeFileSync(join(repo, path), `task ${i} edit of ${path}\n`);
      const done = await timedCall(client, "complete_task", {
        task_id: task.structured.task_id,
        status: "success",
        outcome: { summary: "s" },
      });
      if (i < 0) continue; // warm-up
      status.push(floorMs);
      milestone.push(log.ms);
      start.push(task.ms);
      complete.push(done.ms);
      const changed = done.structured.files_changed as { modified?: unknown[] } | undefined;
      if (i === 0 && (changed?.modified?.length ?? 0) !== edited.length)
        context.fail(
          `complete_task through the helper reported ${changed?.modified?.length ?? 0} modified files, expected ${edited.length}`,
        );
    }
    const s = {
      git_status: summarize(status),
      log_milestone: summarize(milestone),
      start_task: summarize(start),
      complete_task: summarize(complete),
    };
    const floor = s.git_status.median + s.log_milestone.median;
    context.table.add({
      area: `through the helper (waymark mcp), ${count(files)} files`,
      measure: `floor: git status ${ms(s.git_status.median)} + log_milestone via helper ${ms(s.log_milestone.median)}, n=${samples}`,
      value: ms(floor),
    });
    for (const tool of ["start_task", "complete_task"] as const) {
      const t = s[tool] as Summary;
      context.table.add({
        measure: `${tool} (1% edited), n=${t.n}`,
        value: percentiles(t),
        floor: ms(floor),
        ratio: times(t.median, floor),
        target: atMost(t.median / floor, RATIO_TARGET, "x"),
      });
    }
    context.results.helper_calls = { files, samples, ...s, floor_ms: floor, ratio_target: RATIO_TARGET };
  } finally {
    await client.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  }
}

function runToEnd(args: string[], cacheHome: string = tmpdir()): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, XDG_CACHE_HOME: cacheHome } });
    let bytes = 0;
    let errors = "";
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      errors = (errors + chunk.toString()).slice(-2000);
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(bytes) : reject(new Error(`${args.join(" ")} exited ${code}: ${errors}`))));
  });
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
