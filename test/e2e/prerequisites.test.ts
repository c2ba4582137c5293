/**
 * The rule every test with a real prerequisite (Chromium, the agent CLIs, the Python clients)
 * follows when it is missing (test/support/prerequisites.ts): under CI=true the test fails with
 * the reason, locally it is skipped with it. The checks that use it are in the files that name it.
 */
import { describe, expect, it } from "vitest";
import { whenMissing } from "../support/prerequisites";

describe("a missing prerequisite fails under CI and is skipped locally", () => {
  it.each([
    { reason: null, ci: true, outcome: "run" },
    { reason: null, ci: false, outcome: "run" },
    { reason: "Chromium not found at /usr/bin/chromium", ci: true, outcome: "fail" },
    { reason: "Chromium not found at /usr/bin/chromium", ci: false, outcome: "skip" },
    { reason: "", ci: true, outcome: "fail" },
    { reason: "", ci: false, outcome: "skip" },
  ] as const)("reason $reason, CI $ci: $outcome", ({ reason, ci, outcome }) => {
    expect(whenMissing(reason, ci)).toBe(outcome);
  });

  it("reads CI=true from the environment, as .ci/run sets it", () => {
    const saved = process.env.CI;
    try {
      process.env.CI = "true";
      expect(whenMissing("missing")).toBe("fail");
      delete process.env.CI;
      expect(whenMissing("missing")).toBe("skip");
    } finally {
      if (saved === undefined) delete process.env.CI;
      else process.env.CI = saved;
    }
  });
});
