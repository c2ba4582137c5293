import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTempDirs, tempDir } from "../../client-helper/test/fixtures";
import { ensureBuilt } from "../../client-helper/test/support";
import type { DevServer } from "../support/dev-server";
import { afterMerge, compare, git, MERGE_KINDS, merge, platformClone, pullRequest, waymark } from "../support/merge-scenario";
import { sharedDevServer } from "../support/shared-server";

// The record travels with the code, through every merge: a pull request recorded by the real helper
// through a real `wrangler dev` (two tasks whose edits its hooks saw, a person's edit during one,
// a person's commit between them), merged as the platforms merge (server-side, in a clone with none
// of the developer's config or hooks) or rewritten as developers rewrite (amend, rebase -i, each with
// a person's edit), then the one documented step after the merge, run in a CI runner's fresh clone.
// `waymark blame` on main, in yet another fresh clone, must say of every line what it said on the
// branch: the agent's lines their task and model, every other line not the agent's.

let server: DevServer;
let cacheHome: string;
beforeAll(() => {
  ensureBuilt();
  server = sharedDevServer();
  cacheHome = tempDir("waymark-cache-");
});
afterAll(cleanupTempDirs);

describe("the records survive every merge", () => {
  for (const kind of MERGE_KINDS) {
    it(`${kind}: blame on main in a fresh clone says of every line what it said on the branch`, { timeout: 120_000 }, async () => {
      const pr = await pullRequest(server, { files: 2, personEdits: 1, cacheHome });
      const env = { XDG_CACHE_HOME: cacheHome };
      // On the branch, in the developer's clone: every line as its text says.
      const onBranch = compare(pr.dev.dir, pr, pr.head, env);
      expect(onBranch.filter((line) => JSON.stringify(line.got) !== JSON.stringify(line.want))).toEqual([]);
      expect(onBranch.filter((line) => line.want.who === "agent").length).toBeGreaterThan(6);

      const merged = merge(pr, kind);
      const carries = kind === "squash" || kind === "rebase" || kind === "cherry-pick";
      if (carries) {
        // Before the step, the merge's new commits carry no record: the agent's lines are nobody's on main.
        const before = compare(platformClone(pr.origin), pr, "origin/main", env);
        expect(before.filter((l) => l.want.who === "agent" && l.got.who === "agent")).toEqual([]);
      }
      const step = afterMerge(pr.origin, merged, env);
      if (carries) expect(step.stdout).toMatch(/agent \d+ · others \d+/);
      else expect(step.stdout).toContain("nothing to carry");
      const reader = platformClone(pr.origin);
      // The commits the notes were written for are not in the reader's clone after a rewrite: the
      // copies are placed through the notes' line hashes alone.
      const hasOriginal = () => git(reader, ["cat-file", "-t", pr.head]);
      if (kind === "amend" || kind === "rebase-i") expect(hasOriginal).toThrow();
      const onMain = compare(reader, pr, "origin/main", env);
      expect(onMain.filter((line) => JSON.stringify(line.got) !== JSON.stringify(line.want))).toEqual([]);
      // The agent's lines whose content the merge kept are all still the agent's.
      const agentTexts = new Set(onBranch.filter((l) => l.want.who === "agent").map((l) => l.text));
      const kept = onMain.filter((l) => agentTexts.has(l.text));
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.every((l) => l.got.who === "agent")).toBe(true);

      // `waymark verify --repo` decides every task on main as on the branch, and says how it mapped them.
      const exported = await fetch(`${server.url}/api/workflows/${pr.workflowId}/export.json`, {
        headers: { Authorization: `Bearer ${server.token}` },
      });
      const file = join(tempDir("waymark-export-"), "export.json");
      writeFileSync(file, await exported.text());
      const onBranchVerify = waymark(pr.dev.dir, ["verify", file, "--endpoint", server.url, "--repo", pr.dev.dir, "--ref", pr.head], env);
      expect(onBranchVerify.status, onBranchVerify.stderr).toBe(0);
      expect(onBranchVerify.stdout).toContain(`${pr.tasks.t1} "t1": agrees`);
      const verified = waymark(reader, ["verify", file, "--endpoint", server.url, "--repo", reader, "--ref", "origin/main"], env);
      expect(verified.status, verified.stderr).toBe(0);
      expect(verified.stdout).toContain("git decided every task on origin/main");
      const t2 = kind === "merge-commit" ? "agrees" : "rewritten";
      expect(verified.stdout).toContain(`${pr.tasks.t2} "t2": ${t2}`);
      if (carries) expect(verified.stdout).toMatch(/on the branch: [0-9a-f]{12} → [0-9a-f]{12} \(carried by waymark notes carry\)/);
      if (kind === "amend" || kind === "rebase-i")
        expect(verified.stdout).toMatch(/on the branch: [0-9a-f]{12} → [0-9a-f]{12} \(copied by git's rewrite\)/);
      expect(verified.stdout).toContain("as the export's events do");
      // From the notes alone, offline: the same tasks, decided.
      const fromNotes = waymark(reader, ["verify", "--repo", reader, "--ref", "origin/main"], env);
      expect(fromNotes.status, fromNotes.stderr).toBe(0);
      expect(fromNotes.stdout).toContain(`${pr.tasks.t1} "t1": ${kind === "merge-commit" || kind === "amend" ? "agrees" : "rewritten"}`);
      // The branch is gone from the reader's clone: nothing but main and the notes.
      expect(git(reader, ["log", "--oneline", "origin/main"]).split("\n").length).toBeGreaterThan(1);
    });
  }
});
