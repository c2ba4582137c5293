import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Prints the closing `N passed, N failed, N skipped` line that CI reads. A test file
 * that failed to load or run, or an unhandled error, counts as a failure: a broken
 * file must never pass silently as "0 failed".
 */
export default class SummaryReporter implements Reporter {
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
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
