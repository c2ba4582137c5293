import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { computeNetChanges } from "@waymark/protocol/attribution";
import { afterAll, describe, expect, it } from "vitest";
import { type ConfigEntry, inertContext, untrustedCommandOverrides } from "../src/git/inert-config.js";
import { measureReview, saveStartContents } from "../src/review-measures.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";
import { BIN, ensureBuilt, SYSTEM_NODE } from "./support.js";

afterAll(cleanupTempDirs);

/**
 * A repository whose own .git/config points every command-bearing key at a script that leaves
 * a marker file: what an agent that may only edit files would plant to run code as the user.
 */
function trappedRepo(): { repo: Repo; marker: string } {
  const repo = Repo.init().write("a.txt", "a\n").write(".gitattributes", "* filter=trap diff=trap\n").commitAll("base");
  const marker = join(tempDir(), "ran");
  const script = join(tempDir(), "trap.sh");
  writeFileSync(script, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`);
  chmodSync(script, 0o755);
  for (const [key, value] of [
    ["core.fsmonitor", script],
    ["filter.trap.clean", script],
    ["filter.trap.smudge", script],
    ["filter.trap.process", script],
    ["filter.trap.required", "true"],
    ["diff.external", script],
    ["diff.trap.textconv", script],
    ["diff.trap.command", script],
    ["core.pager", script],
  ] as const) {
    repo.git("config", key, value);
  }
  // An included file is the repository's config too.
  const included = join(repo.dir, ".git", "more.config");
  writeFileSync(included, `[filter "inc"]\n\tclean = ${script}\n`);
  repo.git("config", "include.path", included);
  writeFileSync(join(repo.dir, ".gitattributes"), "* filter=trap diff=trap\n*.inc filter=inc\n");
  return { repo, marker };
}

/** HEAD's tree plus one file: `git mktree` from `git ls-tree` output, no index and no filter involved. */
function treeWith(repo: Repo, path: string, blob: string): string {
  const entries = repo.git("ls-tree", "HEAD").trimEnd().split("\n");
  entries.push(`100644 blob ${blob}\t${path}`);
  return execFileSync("git", ["mktree"], { cwd: repo.dir, input: `${entries.join("\n")}\n`, encoding: "utf8" }).trim();
}

describe("the repository's own config never makes the helper run a program", () => {
  it("snapshot and changes with core.fsmonitor, filter drivers, diff drivers and a pager set in .git/config", async () => {
    const { repo, marker } = trappedRepo();
    // The setup itself ran git with those settings: start from a clean slate.
    rmSync(marker, { force: true });
    repo.write("a.txt", "a2\n").write("new.inc", "n\n").write("b.txt", "b\n");
    const start = await takeSnapshot(repo.dir);
    repo.write("a.txt", "a3\n").write("c.txt", "c\n");
    const changes = await computeChanges(start);
    expect(changes.type).toBe("git");
    expect(existsSync(marker)).toBe(false);
  });

  it("review measurements (start copies, line counts, commits, branch) run nothing the repository defines", async () => {
    const { repo, marker } = trappedRepo();
    repo.git("config", "log.showSignature", "true");
    repo.git("config", "trailer.trap.command", join(tempDir(), "trap.sh"));
    rmSync(marker, { force: true });
    repo.write("a.txt", "dirty at start\n").write("new.inc", "n\n");
    const start = await takeSnapshot(repo.dir);
    const context = await inertContext(repo.dir);
    const copies = tempDir("waymark-start-contents-");
    if (start.type !== "git") throw new Error("expected a git snapshot");
    await saveStartContents(context, start, copies);
    repo.write("a.txt", "a3\nmore\n").write("c.txt", "c\n");
    // The test's own commit, made with plumbing that runs no filter (the traps stay armed for the helper).
    const blob = repo.git("hash-object", "-w", "--no-filters", "c.txt").trim();
    const tree = treeWith(repo, "c.txt", blob);
    const commit = repo.git("commit-tree", tree, "-p", "HEAD", "-m", "during").trim();
    repo.git("update-ref", "HEAD", commit);
    rmSync(marker, { force: true });
    const observed = await computeChanges(start);
    if (observed.type !== "git") throw new Error("expected git changes");
    const review = await measureReview(context, start, observed.head, computeNetChanges(wireSnapshot(start), observed), copies);
    expect(review.commits.map((c) => c.subject)).toEqual(["during"]);
    expect(review.lines.find((l) => l.path === "a.txt")).toEqual({ path: "a.txt", added: 2, removed: 1 });
    expect(existsSync(marker)).toBe(false);
  });

  it("the CLI, as users run it, stays inert too", () => {
    ensureBuilt();
    const { repo, marker } = trappedRepo();
    rmSync(marker, { force: true });
    repo.write("a.txt", "edited\n");
    const snap = spawnSync(SYSTEM_NODE, [BIN, "snapshot", "--dir", repo.dir], { encoding: "utf8" });
    expect(snap.status).toBe(0);
    const changes = spawnSync(SYSTEM_NODE, [BIN, "changes", "--since", "-"], { input: snap.stdout, encoding: "utf8" });
    expect(changes.status).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it.each<{ case: string; entries: ConfigEntry[]; expected: [string, string][] }>([
    { case: "nothing configured: fsmonitor still off", entries: [], expected: [["core.fsmonitor", "false"]] },
    {
      case: "a local filter is emptied and made optional",
      entries: [
        { scope: "local", key: "filter.lfs.clean", value: "evil" },
        { scope: "local", key: "filter.lfs.required", value: "true" },
      ],
      expected: [
        ["core.fsmonitor", "false"],
        ["filter.lfs.clean", ""],
        ["filter.lfs.required", "false"],
      ],
    },
    {
      case: "a local override of a global filter gets the global value back",
      entries: [
        { scope: "global", key: "filter.lfs.clean", value: "git-lfs clean -- %f" },
        { scope: "local", key: "filter.lfs.clean", value: "evil" },
      ],
      expected: [
        ["core.fsmonitor", "false"],
        ["filter.lfs.clean", "git-lfs clean -- %f"],
      ],
    },
    {
      case: "global filters alone are trusted and left as they are",
      entries: [{ scope: "global", key: "filter.lfs.process", value: "git-lfs filter-process" }],
      expected: [["core.fsmonitor", "false"]],
    },
    {
      case: "a driver name with = and dots keeps its exact key",
      entries: [{ scope: "worktree", key: "diff.a=b.c.textconv", value: "evil" }],
      expected: [
        ["core.fsmonitor", "false"],
        ["diff.a=b.c.textconv", ""],
      ],
    },
    {
      case: "keys that run nothing are left alone",
      entries: [{ scope: "local", key: "diff.renames", value: "true" }],
      expected: [["core.fsmonitor", "false"]],
    },
  ])("$case", ({ entries, expected }) => {
    expect(untrustedCommandOverrides(entries)).toEqual(expected);
  });
});
