import { writeFileSync } from "node:fs";
import type { Reporter, SerializedError, TestModule, Vitest } from "vitest/node";

/** Where a run writes its timing when asked (`npm run bench -- --only suite` asks). */
export const SUITE_TIMING_ENV = "WAYMARK_SUITE_TIMING";

/** One project's share of a run: its files' summed durations, and first start to last end. */
export interface ProjectTiming {
  files: number;
  tests: number;
  wall_ms: number;
  sum_ms: number;
  slowest: { file: string; ms: number }[];
}

export interface SuiteTiming {
  wall_ms: number;
  passed: number;
  failed: number;
  skipped: number;
  projects: Record<string, ProjectTiming>;
}

/**
 * Prints how long the run took, per project, then the closing `N passed, N failed, N skipped`
 * line that CI reads (last). A test file that failed to load or run, or an unhandled error,
 * counts as a failure: a broken file must never pass silently as "0 failed". With
 * WAYMARK_SUITE_TIMING=<file> in the environment it also writes the timing there as JSON.
 */
export default class SummaryReporter implements Reporter {
  private started = performance.now();
  private root = "";
  /** When a worker took each file up and when it finished (performance.now()). */
  private readonly spans = new Map<string, { start: number; end: number }>();

  onInit(vitest: Vitest): void {
    this.started = performance.now();
    this.root = vitest.config.root;
  }

  onTestModuleQueued(testModule: TestModule): void {
    this.spans.set(testModule.moduleId, { start: performance.now(), end: performance.now() });
  }

  onTestModuleEnd(testModule: TestModule): void {
    const span = this.spans.get(testModule.moduleId);
    if (span) span.end = performance.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const testModule of testModules) {
      const tests = [...testModule.children.allTests()];
      if (testModule.errors().length > 0 || (testModule.state() === "failed" && tests.every((t) => t.result().state !== "failed")))
        failed++;
      for (const test of tests) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
    }
    const timing: SuiteTiming = {
      wall_ms: performance.now() - this.started,
      passed,
      failed,
      skipped,
      projects: this.projects(testModules),
    };
    const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
    const parts = Object.entries(timing.projects).map(([name, p]) => `${name} ${p.files} files ${seconds(p.wall_ms)}`);
    process.stdout.write(`\nwall time: ${seconds(timing.wall_ms)} (${parts.join(", ")})\n`);
    const file = process.env[SUITE_TIMING_ENV];
    if (file) writeFileSync(file, `${JSON.stringify(timing, null, 2)}\n`);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }

  private projects(testModules: ReadonlyArray<TestModule>): Record<string, ProjectTiming> {
    const spans = new Map<string, { modules: { module: TestModule; ms: number }[]; start: number; end: number }>();
    for (const testModule of testModules) {
      const name = testModule.project.name;
      const { start, end } = this.spans.get(testModule.moduleId) ?? { start: this.started, end: this.started };
      const span = spans.get(name) ?? { modules: [], start, end };
      span.modules.push({ module: testModule, ms: end - start });
      span.start = Math.min(span.start, start);
      span.end = Math.max(span.end, end);
      spans.set(name, span);
    }
    const projects: Record<string, ProjectTiming> = {};
    for (const [name, span] of [...spans].sort(([a], [b]) => a.localeCompare(b))) {
      const durations = span.modules.map(({ module, ms }) => ({
        file: module.moduleId.startsWith(`${this.root}/`) ? module.moduleId.slice(this.root.length + 1) : module.moduleId,
        ms,
      }));
      projects[name] = {
        files: span.modules.length,
        tests: span.modules.reduce((n, { module }) => n + [...module.children.allTests()].length, 0),
        wall_ms: span.end - span.start,
        sum_ms: durations.reduce((n, d) => n + d.ms, 0),
        slowest: durations.sort((a, b) => b.ms - a.ms).slice(0, 5),
      };
    }
    return projects;
  }
}
