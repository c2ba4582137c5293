import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Changes, Snapshot } from "@waymark/protocol/wire";
import { afterAll, describe, expect, it } from "vitest";
import { type Resolution, resolveChanges } from "../src/cli.js";
import { blobId } from "../src/hash.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

type Expected = { added?: string[]; modified?: string[]; deleted?: string[] };

/**
 * Runs one task: `before` shapes the repository, the snapshot is taken, `during` is
 * the agent's work, then changes are computed and resolved. The snapshot and changes
 * go through JSON as they do on the wire.
 */
async function task(repo: Repo, during: (repo: Repo) => void): Promise<{ res: Resolution; start: Snapshot; changes: Changes }> {
  const local = await takeSnapshot(repo.dir);
  const start = JSON.parse(JSON.stringify(wireSnapshot(local))) as Snapshot;
  during(repo);
  const changes = JSON.parse(JSON.stringify(await computeChanges(local))) as Changes;
  return { res: resolveChanges(start, changes), start, changes };
}

function expectFiles(res: Resolution, expected: Expected): void {
  expect({
    added: res.added,
    modified: res.modified,
    deleted: res.deleted,
  }).toEqual({
    added: [...(expected.added ?? [])].sort(),
    modified: [...(expected.modified ?? [])].sort(),
    deleted: [...(expected.deleted ?? [])].sort(),
  });
}

function baseRepo(): Repo {
  return Repo.init().write("a.txt", "a\n").write("b.txt", "b\n").write("src/c.ts", "c\n").commitAll("base");
}

describe("attribution table, one row at a time (real git)", () => {
  it("tracked file modified: committed, staged, or only in the worktree -> M", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.write("a.txt", "a2\n").commitAll("edit a");
      r.write("b.txt", "b2\n").git("add", "b.txt");
      r.write("src/c.ts", "c2\n");
    });
    expectFiles(res, { modified: ["a.txt", "b.txt", "src/c.ts"] });
    expect(res.files.map((f) => [f.path, f.committed])).toEqual([
      ["a.txt", true],
      ["b.txt", false],
      ["src/c.ts", false],
    ]);
  });

  it("new file committed, staged, or untracked -> A", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.write("committed.txt", "1\n").commitAll("add");
      r.write("staged.txt", "2\n").git("add", "staged.txt");
      r.write("dir/untracked.txt", "3\n");
    });
    expectFiles(res, {
      added: ["committed.txt", "staged.txt", "dir/untracked.txt"],
    });
  });

  it("file deleted: committed, staged, or just removed -> D", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.git("rm", "-q", "a.txt");
      r.git("commit", "-q", "-m", "rm a");
      r.git("rm", "-q", "b.txt");
      r.remove("src/c.ts");
    });
    expectFiles(res, { deleted: ["a.txt", "b.txt", "src/c.ts"] });
  });

  it("file renamed -> D old + A new, paired as a rename", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.git("mv", "a.txt", "renamed-committed.txt");
      r.git("commit", "-q", "-m", "mv");
      r.git("mv", "b.txt", "renamed-uncommitted.txt");
    });
    expectFiles(res, {
      added: ["renamed-committed.txt", "renamed-uncommitted.txt"],
      deleted: ["a.txt", "b.txt"],
    });
    expect(res.renamed).toEqual([
      { from: "a.txt", to: "renamed-committed.txt" },
      { from: "b.txt", to: "renamed-uncommitted.txt" },
    ]);
  });

  it("file added then deleted before the end -> not listed", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.write("tmp-untracked.txt", "x\n").remove("tmp-untracked.txt");
      r.write("tmp-committed.txt", "y\n").commitAll("add tmp");
      r.git("rm", "-q", "tmp-committed.txt");
      r.git("commit", "-q", "-m", "rm tmp");
      r.write("tmp-staged.txt", "z\n").git("add", "tmp-staged.txt");
      r.git("rm", "-q", "-f", "tmp-staged.txt");
    });
    expectFiles(res, {});
  });

  it("file modified then reverted to its start content -> not listed", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.write("a.txt", "changed\n").write("a.txt", "a\n");
      r.write("b.txt", "changed\n").commitAll("change b");
      r.write("b.txt", "b\n").commitAll("revert b");
      r.write("src/c.ts", "changed\n").git("add", "src/c.ts");
      r.write("src/c.ts", "c\n");
    });
    expectFiles(res, {});
  });

  it("file already dirty/untracked at start and untouched -> not listed", async () => {
    const repo = baseRepo().write("a.txt", "dirty at start\n").write("pre-untracked.txt", "u\n").remove("b.txt");
    repo.write("src/c.ts", "staged at start\n").git("add", "src/c.ts");
    const { res, start } = await task(repo, () => {});
    expectFiles(res, {});
    expect(start.type === "git" && start.dirty.map((d) => d.path)).toEqual(["a.txt", "b.txt", "pre-untracked.txt", "src/c.ts"]);
  });

  it("untracked at start and deleted, dirty at start and restored: listed, and not as committed", async () => {
    const repo = baseRepo();
    repo.write("scratch.txt", "scratch\n").write("a.txt", "a dirty\n");
    const { res } = await task(repo, (r) => {
      r.remove("scratch.txt");
      r.git("checkout", "--", "a.txt");
    });
    expectFiles(res, { deleted: ["scratch.txt"], modified: ["a.txt"] });
    expect(res.files.map((f) => [f.path, f.committed])).toEqual([
      ["a.txt", false],
      ["scratch.txt", false],
    ]);
  });

  it("dirty at start and committed as-is during the task -> not listed", async () => {
    const repo = baseRepo().write("a.txt", "dirty at start\n").write("pre-untracked.txt", "u\n");
    const { res } = await task(repo, (r) => r.commitAll("commit the old dirt"));
    expectFiles(res, {});
  });

  it("file already dirty at start and changed further -> M", async () => {
    const repo = baseRepo().write("a.txt", "dirty at start\n").write("pre-untracked.txt", "u\n");
    const { res } = await task(repo, (r) => {
      r.write("a.txt", "dirtier\n");
      r.write("pre-untracked.txt", "u2\n").commitAll("commit");
    });
    expectFiles(res, { modified: ["a.txt", "pre-untracked.txt"] });
  });

  it("file added (committed or staged) then edited again -> A", async () => {
    const repo = baseRepo();
    const { res } = await task(repo, (r) => {
      r.write("new-committed.txt", "1\n").commitAll("add");
      r.write("new-committed.txt", "1 edited\n");
      r.write("new-staged.txt", "2\n").git("add", "new-staged.txt");
      r.write("new-staged.txt", "2 edited\n");
    });
    expectFiles(res, { added: ["new-committed.txt", "new-staged.txt"] });
  });

  it("mode change (chmod +x) and file turned into a symlink -> M", async () => {
    const repo = baseRepo().write("run.sh", "#!/bin/sh\n").write("exec-committed.sh", "#!/bin/sh\n").commitAll("scripts");
    const { res } = await task(repo, (r) => {
      r.chmod("run.sh", 0o755);
      r.chmod("exec-committed.sh", 0o755).commitAll("chmod");
      r.remove("b.txt").symlink("b.txt", "a.txt");
    });
    expectFiles(res, { modified: ["b.txt", "exec-committed.sh", "run.sh"] });
    const link = res.files.find((f) => f.path === "b.txt");
    expect(link?.after).toEqual({
      mode: "120000",
      blob: blobId(Buffer.from("a.txt")),
    });
    expect(res.files.find((f) => f.path === "run.sh")?.after?.mode).toBe("100755");
  });

  it("ignored files (per .gitignore) changed -> not listed", async () => {
    const repo = baseRepo().write(".gitignore", "*.log\nbuild/\n").write("old.log", "x\n").commitAll("ignore");
    const { res, start } = await task(repo, (r) => {
      r.write("old.log", "y\n").write("new.log", "z\n").write("build/out.js", "1\n").remove("old.log");
    });
    expectFiles(res, {});
    expect(start.type === "git" && start.dirty).toEqual([]);
  });

  it("non-ASCII names, spaces, quotes, newlines, tabs and backslashes -> exact paths", async () => {
    const names = ["héllo wörld.txt", 'quo"te.txt', "it's.txt", "new\nline.txt", "tab\there.txt", "back\\slash.txt", "日本/語.md"];
    const repo = baseRepo()
      .write(names[0] as string, "0\n")
      .write(names[1] as string, "1\n")
      .commitAll("weird");
    const { res, changes } = await task(repo, (r) => {
      r.write(names[0] as string, "0 changed\n");
      r.remove(names[1] as string);
      for (const name of names.slice(2)) r.write(name, `${name}\n`);
    });
    expectFiles(res, {
      modified: [names[0] as string],
      deleted: [names[1] as string],
      added: names.slice(2),
    });
    expect(JSON.stringify(changes)).not.toContain("\\\\303");
  });

  it("repository without any commit yet: works, and the first commit is diffed against the empty tree", async () => {
    const repo = Repo.init().write("present.txt", "p\n").write("edited.txt", "e\n");
    const { res, start, changes } = await task(repo, (r) => {
      r.write("edited.txt", "e2\n").write("new.txt", "n\n").write("committed-new.txt", "c\n");
      r.git("add", "present.txt", "committed-new.txt");
      r.git("commit", "-q", "-m", "first");
    });
    expect(start.type === "git" && start.head).toBeNull();
    expect(changes.type === "git" && changes.committed.map((t) => t.path)).toEqual(["committed-new.txt", "present.txt"]);
    expectFiles(res, {
      added: ["committed-new.txt", "new.txt"],
      modified: ["edited.txt"],
    });
  });

  it("repository without any commit, still none at the end", async () => {
    const repo = Repo.init().write("present.txt", "p\n");
    const { res } = await task(repo, (r) => r.write("new.txt", "n\n").write("present.txt", "p2\n"));
    expectFiles(res, { added: ["new.txt"], modified: ["present.txt"] });
  });

  it("not a git repository: checksum snapshot, A/M/D by comparing checksums", async () => {
    const dir = tempDir("waymark-plain-");
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "keep.txt"), "k\n");
    writeFileSync(join(dir, "edit.txt"), "e\n");
    writeFileSync(join(dir, "sub/gone.txt"), "g\n");
    const local = await takeSnapshot(dir);
    expect(local.type).toBe("checksum");
    const wire = wireSnapshot(local);
    expect(Object.keys(wire).sort()).toEqual(["digest", "files", "type"]);
    expect(wire).toMatchObject({ type: "checksum", files: 3 });
    writeFileSync(join(dir, "edit.txt"), "e2\n");
    writeFileSync(join(dir, "sub/new file.txt"), "n\n");
    const { unlinkSync } = await import("node:fs");
    unlinkSync(join(dir, "sub/gone.txt"));
    const changes = await computeChanges(local);
    const res = resolveChanges(wire, changes);
    expectFiles(res, {
      added: ["sub/new file.txt"],
      modified: ["edit.txt"],
      deleted: ["sub/gone.txt"],
    });
  });

  it("mixed: every row at once in one repository", async () => {
    const repo = baseRepo()
      .write(".gitignore", "*.log\n")
      .write("revert.txt", "r\n")
      .write("rename-me.txt", "rename\n")
      .write("to-link.txt", "t\n")
      .write("mode.sh", "#!/bin/sh\n")
      .write("del-commit.txt", "d\n")
      .write("del-now.txt", "d\n")
      .write("ünï cödé.txt", "u\n")
      .commitAll("base2");
    repo.write("dirty-untouched.txt", "x\n").write("dirty-further.txt", "x\n").write("a.txt", "dirty at start\n");
    const { res } = await task(repo, (r) => {
      r.write("b.txt", "b2\n").commitPaths("c1", "b.txt"); // M committed
      r.write("src/c.ts", "c2\n"); // M uncommitted
      r.write("added-committed.txt", "1\n").commitPaths("c2", "added-committed.txt"); // A
      r.write("added-untracked\nnl.txt", "2\n"); // A
      r.write("temp.txt", "t\n").remove("temp.txt"); // not listed
      r.write("revert.txt", "r2\n").commitPaths("c3", "revert.txt").write("revert.txt", "r\n"); // not listed
      r.git("mv", "rename-me.txt", "renamed.txt"); // D + A
      r.remove("to-link.txt").symlink("to-link.txt", "a.txt"); // M
      r.chmod("mode.sh", 0o755); // M
      r.git("rm", "-q", "del-commit.txt");
      r.git("commit", "-q", "-m", "c4", "--", "del-commit.txt"); // D
      r.remove("del-now.txt"); // D
      r.write("dirty-further.txt", "y\n"); // M
      r.write("debug.log", "ignored\n"); // not listed
      r.write("ünï cödé.txt", "u2\n"); // M
    });
    expectFiles(res, {
      added: ["added-committed.txt", "added-untracked\nnl.txt", "renamed.txt"],
      modified: ["b.txt", "dirty-further.txt", "mode.sh", "src/c.ts", "to-link.txt", "ünï cödé.txt"],
      deleted: ["del-commit.txt", "del-now.txt", "rename-me.txt"],
    });
    expect(res.renamed).toEqual([{ from: "rename-me.txt", to: "renamed.txt" }]);
    expect(res.files.filter((f) => f.committed).map((f) => f.path)).toEqual(["added-committed.txt", "b.txt", "del-commit.txt"]);
  });
});

describe("resolution rule on the wire types", () => {
  const f = (blob: string, mode = "100644") => ({
    mode,
    blob: blob.padEnd(40, "0"),
  });
  it("takes start from start.dirty, else committed.before, else end.dirty.head (and symmetrically for end)", () => {
    const start: Snapshot = {
      type: "git",
      head: "1".repeat(40),
      dirty: [{ path: "p", head: f("a"), worktree: f("b") }],
    };
    const changes: Changes = {
      type: "git",
      start_head: "1".repeat(40),
      head: "2".repeat(40),
      committed: [{ path: "q", before: f("c"), after: f("d") }],
      dirty: [
        { path: "q", head: f("d"), worktree: f("c") },
        { path: "r", head: f("e"), worktree: null },
      ],
    };
    const res = resolveChanges(start, changes);
    // p: dirty at start (b), not dirty now, not committed -> end = start.dirty.head (a): M
    // q: committed c->d, then reverted in the worktree to c: equal, not listed
    // r: in HEAD (e) untouched by commits, deleted now: D
    expect(res.files.map((x) => [x.path, x.status])).toEqual([
      ["p", "M"],
      ["r", "D"],
    ]);
  });
});

describe("HEAD read from .git files (no spawn) agrees with git", () => {
  it("loose ref, packed ref, detached HEAD; unknown (unborn) falls back", async () => {
    const { headFromFiles } = await import("../src/git/head-files.js");
    const repo = baseRepo();
    const head = repo.git("rev-parse", "HEAD").trim();
    expect(await headFromFiles(repo.dir)).toBe(head);
    repo.git("pack-refs", "--all");
    expect(await headFromFiles(repo.dir)).toBe(head);
    repo.git("checkout", "-q", "--detach");
    expect(await headFromFiles(repo.dir)).toBe(head);
    expect(await headFromFiles(Repo.init().dir)).toBeUndefined();
  });
});
