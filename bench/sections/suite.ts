/**
 * The test suite's wall time. `--only suite` runs `npm test` (several minutes, so no other
 * section runs it) and records its timing in bench/results/suite.json through the summary
 * reporter (test/support/summary-reporter.ts); every other bench run reports that last
 * recorded run as it is, with its date and commit, and says so. The figure is the whole
 * `npm test` (the helper tarball build, vitest's start, every project) timed from outside;
 * the per-project rows are first start to last end of each project's files, which overlap.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SUITE_TIMING_ENV, type SuiteTiming } from "../../test/support/summary-reporter.ts";
import type { BenchContext } from "../lib/context.ts";
import { atMost } from "../lib/table.ts";

/** Room for what the next features add within CI's 12 minutes (`.ci/run` also installs and checks). */
const TARGET_MINUTES = 6;

interface Recorded {
  measured_at: string;
  commit: string;
  npm_test_ms: number;
  exit_code: number;
  vitest: SuiteTiming;
}

const minutes = (ms: number) => `${(ms / 60_000).toFixed(1)} min`;

/** Runs `npm test` and records it (`run`), or reports the last recorded run. */
export function suiteWallTime(context: BenchContext, resultsDir: string, run: boolean): void {
  const file = join(resultsDir, "suite.json");
  if (run) {
    const root = join(import.meta.dirname, "..", "..");
    const timingFile = join(resultsDir, "suite-vitest.json");
    context.log("suite: npm test (several minutes)");
    const started = performance.now();
    const result = spawnSync("npm", ["test"], {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
      env: { ...process.env, [SUITE_TIMING_ENV]: timingFile },
    });
    const npmTestMs = performance.now() - started;
    if (result.status !== 0) context.fail(`suite: npm test exited with ${result.status ?? result.signal}`);
    if (!existsSync(timingFile)) throw new Error("npm test wrote no timing (did vitest start?)");
    const recorded: Recorded = {
      measured_at: new Date().toISOString(),
      commit: spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).stdout.trim(),
      npm_test_ms: npmTestMs,
      exit_code: result.status ?? -1,
      vitest: JSON.parse(readFileSync(timingFile, "utf8")) as SuiteTiming,
    };
    writeFileSync(file, `${JSON.stringify(recorded, null, 2)}\n`);
  }
  if (!existsSync(file)) {
    context.table.add({ area: "test suite", measure: "npm test wall time: not measured yet (npm run bench -- --only suite)", value: "" });
    return;
  }
  let recorded: Recorded;
  try {
    recorded = JSON.parse(readFileSync(file, "utf8")) as Recorded;
  } catch (error) {
    context.table.add({ area: "test suite", measure: `npm test wall time: ${file} unreadable (${String(error)})`, value: "" });
    return;
  }
  context.results.suite = recorded;
  const when = run ? "this run" : `recorded ${recorded.measured_at.slice(0, 16).replace("T", " ")} at ${recorded.commit}`;
  const { passed, failed, skipped } = recorded.vitest;
  context.table.add({
    area: "test suite",
    measure: `npm test wall time (${when}; ${passed} passed, ${failed} failed, ${skipped} skipped)`,
    value: minutes(recorded.npm_test_ms),
    target: atMost(recorded.npm_test_ms / 60_000, TARGET_MINUTES, " min"),
  });
  for (const [name, project] of Object.entries(recorded.vitest.projects)) {
    context.table.add({
      area: "test suite",
      measure: `project ${name}: ${project.files} files, first start to last end (files' own times add up to ${minutes(project.sum_ms)})`,
      value: minutes(project.wall_ms),
    });
  }
}
