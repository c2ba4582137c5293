import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../client-helper/test/fixtures";
import { afterMerge, compare, git, MERGE_KINDS, merge, platformClone, pullRequest, waymark } from "../support/merge-scenario";
import { scenarioServer } from "../support/scenario-server";

// The record travels with the code, through every merge: a pull request recorded by the real helper
// through a real `wrangler dev` (two tasks whose edits its hooks saw, a person's edit during one,
// a person's commit between them), merged as the platforms merge (server-side, in a clone with none
// of the developer's config or hooks) or rewritten as developers rewrite (amend, rebase -i, each with
// a person's edit), then the one documented step after the merge, run in a CI runner's fresh clone.
// `waymark blame` on main, in yet another fresh clone, must say of every line what it said on the
// branch: the agent's lines their task and model, every other line not the agent's.

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
const validRecord = ajv.compile(JSON.parse(readFileSync(join(import.meta.dirname, "../../docs/schemas/agent-trace-record.json"), "utf8")));

type Entry = { commit: string; task_id: string; record: { vcs: { revision: string } }; carried?: unknown; task: { end_commit: string } };

/** Every note entry of a clone (refs/notes/waymark), parsed. */
function noteEntries(dir: string): Entry[] {
  const listed = git(dir, ["notes", "--ref=waymark", "list"]).trim().split("\n").filter(Boolean);
  return listed.flatMap((line) => {
    const [blob] = line.split(" ");
    return git(dir, ["cat-file", "-p", blob as string])
      .split("\n")
      .filter(Boolean)
      .map((text) => JSON.parse(text) as Entry);
  });
}
const scenario = scenarioServer();

describe("the records survive every merge", () => {
  for (const kind of MERGE_KINDS) {
    it(`${kind}: blame on main in a fresh clone says of every line what it said on the branch`, { timeout: 120_000 }, async () => {
      const server = scenario.server();
      const cacheHome = scenario.cacheHome();
      const pr = await pullRequest(server, { files: 2, personEdits: 1, cacheHome });
      const env = { XDG_CACHE_HOME: cacheHome };
      // On the branch, in the developer's clone: every line as its text says.
      const onBranch = compare(pr.dev.dir, pr, pr.head, env);
      expect(onBranch.filter((line) => JSON.stringify(line.got) !== JSON.stringify(line.want))).toEqual([]);
      expect(onBranch.filter((line) => line.want.who === "agent").length).toBeGreaterThan(6);
      // The notes' records are valid Agent Trace records (the spec's current schema); the one on each
      // task's end commit is the task's record as the endpoint's Agent Trace export has it.
      const exportedTrace = (await (
        await fetch(`${server.url}/api/workflows/${pr.workflowId}/export.agent-trace.json`, {
          headers: { Authorization: `Bearer ${server.token}` },
        })
      ).json()) as { metadata: { "dev.waymark": { task_id: string } } }[];
      const branchNotes = noteEntries(pr.dev.dir);
      for (const entry of branchNotes) expect(validRecord(entry.record), JSON.stringify(validRecord.errors)).toBe(true);
      for (const task of Object.values(pr.tasks)) {
        const atEnd = branchNotes.find((entry) => entry.task_id === task && entry.commit === entry.task.end_commit);
        expect(atEnd?.record).toEqual(exportedTrace.find((record) => record.metadata["dev.waymark"].task_id === task));
      }

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
      for (const entry of noteEntries(reader)) expect(validRecord(entry.record), JSON.stringify(validRecord.errors)).toBe(true);
      if (carries) expect(noteEntries(reader).some((entry) => entry.carried !== undefined)).toBe(true);
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
      // A rebase merge and cherry-picks replay each commit (git's patch ids say which), so the task is
      // checked on the replays as on its own commits; a squash that holds a person's commit too, and
      // git's rewrites, are checked by the task's line ranges on the commits holding its record.
      const replayed = kind === "merge-commit" || kind === "rebase" || kind === "cherry-pick";
      expect(verified.stdout).toContain(`${pr.tasks.t2} "t2": ${replayed ? "agrees" : "rewritten"}`);
      if (carries) expect(verified.stdout).toMatch(/on the branch: [0-9a-f]{12} → [0-9a-f]{12} \(carried by waymark notes carry\)/);
      if (kind === "amend" || kind === "rebase-i")
        expect(verified.stdout).toMatch(/on the branch: [0-9a-f]{12} → [0-9a-f]{12} \(copied by git's rewrite\)/);
      expect(verified.stdout).toContain("as the export's events do");
      // From the notes alone, offline: the same tasks, decided.
      const fromNotes = waymark(reader, ["verify", "--repo", reader, "--ref", "origin/main", "--allow-unsigned"], env);
      expect(fromNotes.status, fromNotes.stderr).toBe(0);
      expect(fromNotes.stdout).toContain("NOT CHECKED (accepted with --allow-unsigned): the notes are not signed");
      expect(fromNotes.stdout).toContain(`${pr.tasks.t1} "t1": ${replayed || kind === "amend" ? "agrees" : "rewritten"}`);
      // The branch is gone from the reader's clone: nothing but main and the notes.
      expect(git(reader, ["log", "--oneline", "origin/main"]).split("\n").length).toBeGreaterThan(1);
    });
  }
});

describe("a carried record's claim of the commits it holds is checked against git, never taken on its word", () => {
  it("a squash note claiming to hold exactly t1's commits (it holds a person's commit and t2 too) is not agreement", {
    timeout: 120_000,
  }, async () => {
    const server = scenario.server();
    const cacheHome = scenario.cacheHome();
    const env = { XDG_CACHE_HOME: cacheHome };
    const pr = await pullRequest(server, { files: 1, personEdits: 1, cacheHome });
    const merged = merge(pr, "squash");
    afterMerge(pr.origin, merged, env);
    const reader = platformClone(pr.origin);
    // Edited as anyone with push access to the notes could: the squash's t1 entry says it holds t1's commits, no more.
    const squash = git(reader, ["rev-parse", "origin/main"]).trim();
    const lines = git(reader, ["notes", "--ref=waymark", "show", squash])
      .split("\n")
      .filter(Boolean)
      .map((text) => JSON.parse(text) as Entry & { carried: { commits?: string[] }; task: { commits: string[] } });
    const t1 = lines.find((entry) => entry.task_id === pr.tasks.t1);
    expect(t1?.carried.commits?.length).toBe(4);
    if (t1) t1.carried.commits = [...t1.task.commits].reverse();
    const file = join(tempDir("waymark-note-"), "note");
    writeFileSync(file, `${lines.map((entry) => JSON.stringify(entry)).join("\n")}\n`);
    git(reader, ["notes", "--ref=waymark", "add", "-f", "-F", file, squash]);
    const exported = await fetch(`${server.url}/api/workflows/${pr.workflowId}/export.json`, {
      headers: { Authorization: `Bearer ${server.token}` },
    });
    const exportFile = join(tempDir("waymark-export-"), "export.json");
    writeFileSync(exportFile, await exported.text());
    const verified = waymark(reader, ["verify", exportFile, "--endpoint", server.url, "--repo", reader, "--ref", "origin/main"], env);
    expect(verified.status, verified.stderr).toBe(0);
    // git's diff of the squash holds more than t1's record: checked by its line ranges, and said so.
    expect(verified.stdout).toContain(`${pr.tasks.t1} "t1": rewritten`);
    expect(verified.stdout).toMatch(
      /the commits [0-9a-f]{12}\.\.[0-9a-f]{12} holding its record do not hold its changes as recorded \(\d+ differences?/,
    );
    expect(verified.stdout).not.toContain(`${pr.tasks.t1} "t1": agrees`);
  });
});
