/**
 * `waymark blame` on a 5,000-line file with a long history against `git blame --porcelain` of the
 * same file, both as processes, interleaved; target ≤ 1.5x. The history is written with
 * `git fast-import`: each commit rewrites some lines and now and then inserts a few. Two rows:
 * tasks of one commit, and tasks of two commits that both rewrite the file (the record is at the
 * second, so the first's lines are carried through git's diff: the most work blame can have);
 * three in four tasks recorded, their lines alternately the agent's and others'. The
 * export file is built from what the generator knows wrote each line, and the run checks that
 * `waymark blame --json` gives every line exactly that writer before timing anything.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { summarize } from "../../test/support/stats.ts";
import type { BenchContext } from "../lib/context.ts";
import { git } from "../lib/repos.ts";
import { GNU_TIME, runToEnd } from "../lib/run-to-end.ts";
import { atMost, count, ms, times } from "../lib/table.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const BIN = join(ROOT, "client-helper", "dist", "bin.js");
const RATIO_TARGET = 1.5;
const LINES = 5_000;
const FILE = "src/big.txt";

/** A tiny deterministic generator: the same history every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** A line as the generator wrote it: a fresh id on every rewrite, and the commit (index) that wrote it. */
type Line = { text: string; id: number; commit: number };

/** The history as fast-import input, the final lines, and per commit its lines' ids in order. */
function history(commits: number): { input: string; lines: Line[]; snapshots: Int32Array[] } {
  const next = random(42);
  let ids = 0;
  let lines: Line[] = Array.from({ length: LINES }, (_, i) => ({ text: `line ${i + 1} initial`, id: ids++, commit: 0 }));
  const parts: string[] = [];
  const snapshots: Int32Array[] = [];
  for (let c = 0; c < commits; c++) {
    if (c > 0) {
      for (let k = 0; k < 12; k++) {
        const at = Math.floor(next() * lines.length);
        lines[at] = { text: `line ${at + 1} rewritten in ${c}`, id: ids++, commit: c };
      }
      if (c % 10 === 0) {
        const at = Math.floor(next() * lines.length);
        const inserted = [0, 1, 2].map((n) => ({ text: `inserted ${n} in ${c}`, id: ids++, commit: c }));
        lines = [...lines.slice(0, at), ...inserted, ...lines.slice(at)];
      }
    }
    const content = `${lines.map((line) => line.text).join("\n")}\n`;
    const message = `commit ${c}`;
    parts.push(
      `commit refs/heads/main\nmark :${c + 1}\ncommitter bench <bench@example.com> ${1_700_000_000 + c * 60} +0000\ndata ${Buffer.byteLength(message)}\n${message}\n`,
      `M 100644 inline ${FILE}\ndata ${Buffer.byteLength(content)}\n${content}\n`,
    );
    snapshots.push(Int32Array.from(lines, (line) => line.id));
  }
  return { input: parts.join(""), lines, snapshots };
}

/**
 * How commits make tasks: `size` commits each (task t is commits size·(t-1)+1 … size·t; commit 0
 * is the start); three in four tasks that ended within the history are recorded.
 */
type Tasks = { size: 1 | 2; commits: number };
const taskOf = (tasks: Tasks, commit: number) => (commit === 0 ? null : Math.ceil(commit / tasks.size));
const recorded = (tasks: Tasks, task: number) => task % 4 !== 3 && task * tasks.size < tasks.commits;
/** Within a task, even line numbers at its end are the agent's, odd ones others'. */
const whoAt = (line: number) => (line % 2 === 0 ? "agent" : "others");

/** What the generator knows of a final line: its task's id and who wrote it, or not recorded. */
function expected(tasks: Tasks, line: Line, snapshots: readonly Int32Array[]): string {
  const task = taskOf(tasks, line.commit);
  if (task === null || !recorded(tasks, task)) return "not_recorded";
  const at = (snapshots[task * tasks.size] as Int32Array).indexOf(line.id) + 1;
  return `t${task} ${whoAt(at)}`;
}

function exportOf(tasks: Tasks, shas: readonly string[], snapshots: readonly Int32Array[], writers: Map<number, number>): unknown[] {
  const records: unknown[] = [];
  for (let end = tasks.size; end < tasks.commits; end += tasks.size) {
    const task = end / tasks.size;
    if (!recorded(tasks, task)) continue;
    const ranges: { start_line: number; end_line: number; contributor?: { type: string } }[] = [];
    (snapshots[end] as Int32Array).forEach((id, i) => {
      if (taskOf(tasks, writers.get(id) ?? 0) !== task) return;
      const line = i + 1;
      ranges.push(
        whoAt(line) === "agent"
          ? { start_line: line, end_line: line }
          : { start_line: line, end_line: line, contributor: { type: "unknown" } },
      );
    });
    records.push({
      version: "0.1.0",
      id: `00000000-0000-8000-8000-${String(task).padStart(12, "0")}`,
      timestamp: "2026-11-27T00:00:00Z",
      vcs: { type: "git", revision: shas[end] },
      files: [{ path: FILE, conversations: [{ contributor: { type: "ai", model_id: "anthropic/claude-sonnet-4-5" }, ranges }] }],
      metadata: {
        "dev.waymark": {
          record_per: "task",
          workflow_id: "wf_bench",
          task_id: `t${task}`,
          task_name: `task ${task}`,
          commits: shas.slice(end - tasks.size + 1, end + 1).reverse(),
        },
      },
    });
  }
  return records;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

export async function blameBench(context: BenchContext): Promise<void> {
  const commits = context.quick ? 300 : 1_000;
  const runs = context.quick ? 3 : 5;
  context.log(`blame: a ${count(LINES)}-line file with ${count(commits)} commits, ${runs} runs per kind of task`);
  const built = history(commits);
  await blameRow(context, built, { size: 1, commits }, runs);
  await blameRow(context, built, { size: 2, commits }, runs);
}

async function blameRow(context: BenchContext, built: ReturnType<typeof history>, tasks: Tasks, runs: number): Promise<void> {
  const commits = tasks.commits;
  const dir = mkdtempSync(join(tmpdir(), "waymark-bench-blame-"));
  try {
    git(dir, "init", "-q", "-b", "main");
    execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, input: built.input, maxBuffer: 1 << 28 });
    git(dir, "reset", "-q", "--hard", "main");
    const shas = git(dir, "rev-list", "--reverse", "main").toString().trim().split("\n");
    const exportFile = join(dir, "..", `${dir.split("/").pop()}-trace.json`);
    // Every line id ever written, with its commit (a rewritten line's id is gone from the final lines).
    const writers = new Map<number, number>();
    built.snapshots.forEach((snapshot, c) => {
      for (const id of snapshot) if (!writers.has(id)) writers.set(id, c);
    });
    writeFileSync(exportFile, JSON.stringify(exportOf(tasks, shas, built.snapshots, writers)));

    // Correct before fast: every line's writer as the generator knows it.
    const out = JSON.parse(
      execFileSync(process.execPath, [BIN, "blame", FILE, "--trace", exportFile, "--json"], { cwd: dir, maxBuffer: 1 << 28 }).toString(),
    ) as {
      lines: { line: number; who: string; task_id?: string }[];
    };
    const wrong = out.lines.filter((line, i) => {
      const want = expected(tasks, built.lines[i] as Line, built.snapshots);
      return (line.who === "not_recorded" ? "not_recorded" : `${line.task_id} ${line.who}`) !== want;
    });
    if (out.lines.length !== built.lines.length || wrong.length > 0)
      context.fail(`blame: ${wrong.length} of ${out.lines.length} lines attributed wrongly (first: ${JSON.stringify(wrong[0])})`);

    const floorArgs = ["blame", "--porcelain", "HEAD", "--", FILE];
    const blameArgs = [BIN, "blame", FILE, "--trace", exportFile];
    await runToEnd("git", floorArgs, { cwd: dir }); // warm the object store's pages for both
    const floor: number[] = [];
    const ours: number[] = [];
    const floorCpu: number[] = [];
    const oursCpu: number[] = [];
    // CPU seconds too: on a shared, loaded machine the wall time of the process that does more
    // (its own start, the records, the diffs beside git blame) suffers most.
    const cpuFile = existsSync(GNU_TIME) ? join(dir, "..", `${dir.split("/").pop()}-cpu`) : undefined;
    const cpu = () =>
      cpuFile
        ? readFileSync(cpuFile, "utf8")
            .trim()
            .split(/\s+/)
            .slice(-2)
            .map(Number)
            .reduce((a, b) => a + b, 0) * 1000
        : Number.NaN;
    for (let r = 0; r < runs; r++) {
      floor.push(await time(() => runToEnd("git", floorArgs, { cwd: dir, cpuFile })));
      floorCpu.push(cpu());
      ours.push(await time(() => runToEnd(process.execPath, blameArgs, { cwd: dir, cpuFile })));
      oursCpu.push(cpu());
    }
    if (cpuFile) rmSync(cpuFile, { force: true });
    const f = summarize(floor);
    const o = summarize(ours);
    const fc = summarize(floorCpu);
    const oc = summarize(oursCpu);
    const kind =
      tasks.size === 1
        ? "tasks of one commit"
        : "tasks of two commits, both rewriting the file (the first's lines carried to the second by git's diff)";
    context.table.add({
      area:
        tasks.size === 1
          ? `waymark blame, ${count(LINES)}-line file, ${count(commits)} commits${context.quick ? " (--quick size)" : ""}`
          : "",
      measure: `waymark blame --trace (offline) vs git blame --porcelain, ${kind}, n=${runs}`,
      value: `${ms(o.median)} (min ${ms(o.min)}, max ${ms(o.max)})`,
      floor: ms(f.median),
      ratio: times(o.median, f.median),
      target: atMost(o.median / f.median, RATIO_TARGET, "x"),
    });
    if (cpuFile)
      context.table.add({
        measure: `the same, CPU time (user + system, with the git children), n=${runs}`,
        value: `${ms(oc.median)} (min ${ms(oc.min)}, max ${ms(oc.max)})`,
        floor: ms(fc.median),
        ratio: times(oc.median, fc.median),
      });
    context.results.blame ??= {};
    const results = context.results.blame as Record<string, unknown>;
    results[`tasks_of_${tasks.size}`] = {
      lines: out.lines.length,
      commits,
      runs,
      blame: o,
      floor: f,
      blame_cpu: oc,
      floor_cpu: fc,
      ratio_target: RATIO_TARGET,
    };
    rmSync(exportFile, { force: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
