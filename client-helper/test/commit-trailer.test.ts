import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { installCommitTrailer, withTaskTrailer } from "../src/init/commit-trailer.js";
import { cleanupTempDirs, Repo } from "./fixtures.js";

describe("Waymark-Task trailer", () => {
  it.each([
    ["a subject only", "Fix bug\n", "Fix bug\n\nWaymark-Task: tk_1\n"],
    [
      "git's comment lines stay last",
      "Fix bug\n\n# Please enter the commit message\n",
      "Fix bug\n\nWaymark-Task: tk_1\n\n# Please enter the commit message\n",
    ],
    [
      "joins an existing trailer block",
      "Fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\n",
      "Fix\n\nBody.\n\nSigned-off-by: A <a@example.com>\nWaymark-Task: tk_1\n",
    ],
    ["a subject that looks like a trailer is not a trailer block", "Docs: update\n", "Docs: update\n\nWaymark-Task: tk_1\n"],
  ])("%s", (_case, message, expected) => {
    expect(withTaskTrailer(message, "tk_1")).toBe(expected);
  });

  it.each([
    ["already has one", "Fix\n\nWaymark-Task: tk_0\n"],
    ["an empty message (git aborts the commit; a trailer would make it commit)", "\n# Please enter the commit message\n"],
  ])("leaves the message alone when it %s", (_case, message) => {
    expect(withTaskTrailer(message, "tk_1")).toBeNull();
  });

  it("installs its own hook, never replaces someone else's, and removes only its own", async () => {
    const repo = Repo.init();
    try {
      expect(await installCommitTrailer(repo.dir, "9.9.9", false)).toContain("installed");
      const hook = join(repo.dir, ".git", "hooks", "prepare-commit-msg");
      expect(readFileSync(hook, "utf8")).toContain("helper-9.9.9.mjs");
      expect(await installCommitTrailer(repo.dir, "9.9.9", true)).toContain("removed");
      writeFileSync(hook, "#!/bin/sh\necho mine\n", { mode: 0o755 });
      expect(await installCommitTrailer(repo.dir, "9.9.9", false)).toContain("is not Waymark's; left as it is");
      expect(readFileSync(hook, "utf8")).toBe("#!/bin/sh\necho mine\n");
      expect(await installCommitTrailer(repo.dir, "9.9.9", true)).toContain("no Waymark prepare-commit-msg hook");
      // A commit with no task open goes through untouched.
      writeFileSync(hook, readFileSync(hook, "utf8"));
      repo.write("a.txt", "a\n").commitAll("plain");
      expect(execFileSync("git", ["log", "-1", "--format=%B"], { cwd: repo.dir, encoding: "utf8" })).not.toContain("Waymark-Task");
    } finally {
      cleanupTempDirs();
    }
  });
});
