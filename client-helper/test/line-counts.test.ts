import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { computeNetChanges } from "@waymark/protocol/attribution";
import { afterEach, describe, expect, it } from "vitest";
import { inertContext } from "../src/git/inert-config.js";
import type { LocalGitSnapshot } from "../src/local.js";
import { measureReview, saveStartContents } from "../src/review-measures.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "../src/snapshot.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd, encoding: "utf8" });
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}\n`).join("");

/** Every object file and pack of the repository: measuring must add none. */
function objectFiles(repo: string): string[] {
  return readdirSync(join(repo, ".git", "objects"), { recursive: true, encoding: "utf8" }).sort();
}

/** git's own numstat of one file between two contents, as "added removed" or "binary". */
function numstat(cwd: string, left: string, right: string): string {
  let out: string;
  try {
    out = execFileSync("git", ["diff", "--no-index", "--numstat", "--", left, right], { cwd, encoding: "utf8" });
  } catch (error) {
    out = String((error as { stdout: string }).stdout);
  }
  const [added = "", removed = ""] = out.split("\t");
  return added === "-" ? "binary" : `${added} ${removed}`;
}

describe("line counts match git diff --numstat (real git, nothing written to the repository)", () => {
  it("commits, uncommitted edits, files dirty or untracked at start, binary files, renames, deletions", async () => {
    const repo = temp("waymark-lines-");
    git(repo, "init", "-q", "-b", "main");
    writeFileSync(join(repo, "a.txt"), lines(10, "a"));
    writeFileSync(join(repo, "b.txt"), lines(5, "b"));
    writeFileSync(join(repo, "dirty.txt"), lines(8, "d"));
    writeFileSync(join(repo, "gone.txt"), lines(4, "g"));
    writeFileSync(join(repo, "old name.txt"), lines(6, "r"));
    writeFileSync(join(repo, "logo.bin"), Buffer.from([0, 1, 2, 3, 0, 5]));
    git(repo, "add", "-A");
    git(repo, "commit", "-qm", "initial");
    const startHead = git(repo, "rev-parse", "HEAD").trim();

    // Already dirty or untracked when the task starts: only the task's own lines count.
    writeFileSync(join(repo, "dirty.txt"), lines(8, "d") + lines(3, "before the task"));
    writeFileSync(join(repo, "pre.txt"), lines(2, "p"));
    const saved = temp("waymark-test-start-");
    writeFileSync(join(saved, "dirty.txt"), readFileSync(join(repo, "dirty.txt")));
    writeFileSync(join(saved, "pre.txt"), readFileSync(join(repo, "pre.txt")));

    const start = (await takeSnapshot(repo)) as LocalGitSnapshot;
    const copies = temp("waymark-start-contents-");
    const context = await inertContext(repo);
    const objectsBefore = objectFiles(repo);
    expect(await saveStartContents(context, start, copies)).toBe(2);
    expect(objectFiles(repo)).toEqual(objectsBefore);

    // The task: a committed edit, a committed rename, uncommitted edits, a new file, a deletion, a binary change.
    writeFileSync(join(repo, "a.txt"), lines(7, "a") + lines(4, "new a"));
    git(repo, "commit", "-qam", "Edit a");
    git(repo, "mv", "old name.txt", "new name.txt");
    git(repo, "commit", "-qm", "Rename\n\nWaymark-Task: tk_test");
    writeFileSync(join(repo, "b.txt"), lines(2, "b"));
    writeFileSync(join(repo, "dirty.txt"), lines(8, "d") + lines(3, "before the task") + lines(5, "during the task"));
    writeFileSync(join(repo, "pre.txt"), lines(1, "p"));
    writeFileSync(join(repo, "new.txt"), lines(9, "n"));
    rmSync(join(repo, "gone.txt"));
    writeFileSync(join(repo, "logo.bin"), Buffer.from([0, 9, 9, 9, 0, 5, 6]));

    const observed = await computeChanges(start);
    if (observed.type !== "git") throw new Error("expected git changes");
    const net = computeNetChanges(wireSnapshot(start), observed);
    const objectsBeforeMeasure = objectFiles(repo);
    const review = await measureReview(context, start, observed.head, net, copies);
    expect(objectFiles(repo)).toEqual(objectsBeforeMeasure);

    // git's own numstat for each file, from its content at start (start commit or the test's copy) to now.
    const atStart = (path: string) => {
      if (path === "dirty.txt" || path === "pre.txt") return join(saved, path);
      const file = join(saved, `start-${path}`);
      writeFileSync(file, execFileSync("git", ["show", `${startHead}:${path}`], { cwd: repo }));
      return file;
    };
    const expected: Record<string, string> = {
      "a.txt": numstat(repo, atStart("a.txt"), "a.txt"),
      "b.txt": numstat(repo, atStart("b.txt"), "b.txt"),
      "dirty.txt": numstat(repo, atStart("dirty.txt"), "dirty.txt"),
      "pre.txt": numstat(repo, atStart("pre.txt"), "pre.txt"),
      "new.txt": numstat(repo, "/dev/null", "new.txt"),
      "gone.txt": numstat(repo, atStart("gone.txt"), "/dev/null"),
      "logo.bin": numstat(repo, atStart("logo.bin"), "logo.bin"),
      "old name.txt": numstat(repo, atStart("old name.txt"), "/dev/null"),
      "new name.txt": numstat(repo, "/dev/null", "new name.txt"),
    };
    // The working tree against the start commit, as git reports it for files clean at start.
    const worktree = git(repo, "diff", "--numstat", "--no-renames", startHead, "--", "a.txt", "b.txt", "logo.bin", "gone.txt");
    const measured = Object.fromEntries(review.lines.map((l) => [l.path, "binary" in l ? "binary" : `${l.added} ${l.removed}`]));
    for (const row of worktree.trim().split("\n")) {
      const [added, removed, path = ""] = row.split("\t");
      expect(measured[path]).toBe(added === "-" ? "binary" : `${added} ${removed}`);
    }
    expect(measured).toEqual(expected);
    expect(expected).toMatchObject({ "dirty.txt": "5 0", "pre.txt": "0 1", "new.txt": "9 0", "logo.bin": "binary", "a.txt": "4 3" });

    expect(review.branch).toBe("main");
    expect(review.commits.map((c) => c.subject)).toEqual(["Rename", "Edit a"]);
    expect(review.commits[0]?.task).toBe("tk_test");
    expect(review.commits.every((c) => /^[0-9a-f]{7,}$/.test(c.sha))).toBe(true);
    expect(git(repo, "status", "--porcelain")).not.toContain(".waymark");

    // A task started by an earlier helper kept one file per blob id: its counts are the same.
    const perBlob = temp("waymark-start-contents-per-blob-");
    for (const entry of start.dirty) {
      if (entry.worktree) writeFileSync(join(perBlob, entry.worktree.blob), readFileSync(join(saved, entry.path)));
    }
    const fromPerBlob = await measureReview(context, start, observed.head, net, perBlob);
    expect(fromPerBlob.lines).toEqual(review.lines);
  });
});
