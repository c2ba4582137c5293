import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { computeNetChanges } from "@waymark/protocol/attribution";
import { afterAll, describe, expect, it } from "vitest";
import { inertContext } from "../src/git/inert-config.js";
import { measureReview, saveStartContents } from "../src/review-measures.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

type RepoState = {
  indexBytes: Buffer;
  indexMtime: number;
  head: string;
  headFile: string;
  refs: string;
  stash: string;
  status: string;
  gitFiles: string[];
};

/** Everything of the user's repository the helper must leave exactly as it was. */
function observe(repo: Repo): RepoState {
  const gitDir = join(repo.dir, ".git");
  const index = join(gitDir, "index");
  return {
    indexBytes: readFileSync(index),
    indexMtime: statSync(index).mtimeMs,
    head: repo.git("rev-parse", "HEAD"),
    headFile: readFileSync(join(gitDir, "HEAD"), "utf8"),
    refs: repo.git("for-each-ref", "--format=%(refname) %(objectname)"),
    stash: repo.git("stash", "list"),
    // --no-optional-locks so that observing does not itself refresh the index.
    status: repo.git("--no-optional-locks", "status", "--porcelain=v2", "-z", "-uall", "--branch"),
    gitFiles: readdirSync(gitDir, { recursive: true })
      .map(String)
      .filter((p) => !p.startsWith("objects"))
      .sort(),
  };
}

function busyRepo(): Repo {
  const repo = Repo.init();
  for (let i = 0; i < 50; i++) repo.write(`src/file-${i}.txt`, `content ${i}\n`);
  repo.commitAll("base");
  repo.write("stashed.txt", "s\n").git("add", "stashed.txt");
  repo.git("stash", "push", "-q", "-m", "keep me");
  repo.write("src/file-1.txt", "dirty\n").write("untracked.txt", "u\n").write("src/file-2.txt", "staged\n");
  repo.git("add", "src/file-2.txt");
  // Stat-dirty but content-clean files: a plain `git status` would rewrite the index
  // to refresh their cached stat data. The helper must not.
  const later = new Date(Date.now() + 5000);
  for (let i = 10; i < 20; i++) utimesSync(join(repo.dir, `src/file-${i}.txt`), later, later);
  return repo;
}

describe("the user's repository is never touched", () => {
  it("index bytes and mtime, HEAD, refs, stash, .git contents and status are unchanged by snapshot and changes", async () => {
    const repo = busyRepo();
    const before = observe(repo);
    const snapshot = await takeSnapshot(repo.dir);
    repo.write("during.txt", "d\n");
    const mid = observe(repo);
    for (let i = 0; i < 3; i++) await computeChanges(snapshot);
    await takeSnapshot(join(repo.dir, "src"));
    // Review measurements too: start contents kept outside, line counts, commits, branch.
    const objects = readdirSync(join(repo.dir, ".git", "objects"), { recursive: true })
      .map(String)
      .sort();
    const context = await inertContext(repo.dir);
    const copies = tempDir("waymark-start-contents-");
    if (snapshot.type !== "git") throw new Error("expected a git snapshot");
    await saveStartContents(context, snapshot, copies);
    const observed = await computeChanges(snapshot);
    if (observed.type !== "git") throw new Error("expected git changes");
    const review = await measureReview(context, snapshot, observed.head, computeNetChanges(wireSnapshot(snapshot), observed), copies);
    expect(review.lines.map((l) => l.path)).toContain("during.txt");
    expect(
      readdirSync(join(repo.dir, ".git", "objects"), { recursive: true })
        .map(String)
        .sort(),
    ).toEqual(objects);
    const after = observe(repo);
    expect(after).toEqual(mid);
    expect({ ...mid, status: before.status }).toEqual(before);
    // Proves the stat-dirty files would have made a locking status rewrite the index.
    repo.git("status", "--porcelain");
    expect(statSync(join(repo.dir, ".git", "index")).mtimeMs).not.toBe(before.indexMtime);
  });

  it("never takes index.lock: git add/commit loops running at the same time never fail because of us", async () => {
    const repo = busyRepo();
    // The task starts before the loop does: a start snapshot racing the loop's first commit
    // would sometimes see src/file-1.txt already committed, and the last assertion would flip.
    const start = await takeSnapshot(repo.dir);
    const script = [
      "set -e",
      "for i in $(seq 1 80); do",
      '  echo "$i" > loop.txt',
      "  git add loop.txt src/file-1.txt",
      '  git commit -q -m "loop $i"',
      "  git update-index --refresh > /dev/null || true",
      "done",
    ].join("\n");
    const child = spawn("bash", ["-c", script], { cwd: repo.dir, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    let running = true;
    void exited.then(() => {
      running = false;
    });
    let calls = 0;
    const errors: unknown[] = [];
    while (running) {
      await Promise.all([
        takeSnapshot(repo.dir).catch((e: unknown) => errors.push(e)),
        computeChanges(start).catch((e: unknown) => errors.push(e)),
      ]);
      calls += 2;
    }
    expect(await exited).toBe(0);
    expect(stderr).not.toMatch(/index\.lock/);
    expect(errors).toEqual([]);
    expect(calls).toBeGreaterThan(10);
    const changes = await computeChanges(start);
    expect(changes.type === "git" && changes.committed.map((t) => t.path)).toEqual(["loop.txt", "src/file-1.txt", "src/file-2.txt"]);
  });
});
