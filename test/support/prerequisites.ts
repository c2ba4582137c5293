/**
 * @module test/support/prerequisites
 * What a test does when something real it needs (Chromium, the pinned agent CLIs, the Python MCP
 * clients) cannot run here. Under CI=true it fails, saying why: a check that did not run is not a
 * pass, and CI must say what it ran. On a developer's machine it is skipped, saying why, so the
 * rest of the suite runs without them. Every such test decides through `whenMissing`.
 *
 * Relative imports carry their `.ts` extension, so the benches can load this file through Node's
 * type stripping.
 */

/** What becomes of a test whose prerequisite is missing for `reason` (null: nothing is missing). */
export function whenMissing(reason: string | null, ci: boolean = process.env.CI === "true"): "run" | "skip" | "fail" {
  if (reason === null) return "run";
  return ci ? "fail" : "skip";
}

/** For `describe.skipIf` / `it.skipIf`: true only where the rule skips (not under CI). */
export function skipLocally(reason: string | null): boolean {
  return whenMissing(reason) === "skip";
}

/**
 * Call first thing in the test (or its beforeAll): under CI a missing prerequisite fails it with
 * its reason; where the rule skips, the test never got here.
 */
export function failUnderCi(reason: string | null, what: string): void {
  if (whenMissing(reason) === "fail") throw new Error(`${what} cannot run here (required when CI=true): ${reason}`);
}

/** The reason in a test's name, when it is skipped here. */
export function skippedBecause(reason: string | null): string {
  return skipLocally(reason) ? ` (skipped: ${reason})` : "";
}
