/** The helper reads the identity of the repository it runs in, from real git repositories. */
import { repositoryFingerprint } from "@waymark/protocol/repository-fingerprint";
import { afterAll, describe, expect, it } from "vitest";
import { inertContext } from "../src/git/inert-config.js";
import type { LocalGitSnapshot } from "../src/local.js";
import { RootCommits, readRepository, snapshotRepository } from "../src/repository.js";
import { takeSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

describe("readRepository", () => {
  it("fingerprints the normalised origin and the root commit; shows the remote without credentials and the branch", async () => {
    const repo = Repo.init();
    repo.write("a.txt", "a\n");
    repo.commitAll("first");
    const root = repo.git("rev-parse", "HEAD").trim();
    repo.write("b.txt", "b\n");
    repo.commitAll("second");
    repo.git("remote", "add", "upstream", "https://example.org/other.git");
    repo.git("remote", "add", "origin", "https://secret-token@GitHub.com/acme/app.git");
    const identity = await readRepository(repo.dir);
    expect(identity).toEqual({
      fingerprint: await repositoryFingerprint("git@github.com:acme/app.git", root),
      remote: "github.com/acme/app",
      branch: "main",
    });
    repo.git("checkout", "-q", "--detach");
    expect((await readRepository(repo.dir))?.branch).toBeNull();
  });

  it("tells two repositories with the same remote apart by their root commit; a clone shares it", async () => {
    const one = Repo.init();
    one.write("x", "1\n");
    one.commitAll("one");
    const two = Repo.init();
    two.write("x", "2\n");
    two.commitAll("two");
    for (const repo of [one, two]) repo.git("remote", "add", "origin", "git@github.com:acme/app.git");
    const [a, b] = await Promise.all([readRepository(one.dir), readRepository(two.dir)]);
    expect(a?.fingerprint).not.toBe(b?.fingerprint);
    const cloneDir = tempDir("waymark-clone-");
    one.git("clone", "-q", one.dir, cloneDir);
    const clone = new Repo(cloneDir);
    clone.git("remote", "set-url", "origin", "ssh://git@github.com/acme/app");
    expect((await readRepository(cloneDir))?.fingerprint).toBe(a?.fingerprint);
  });

  it.each([
    ["outside a git repository", () => tempDir("waymark-plain-")],
    ["a repository with neither a remote nor a commit", () => Repo.init().dir],
  ])("is null %s", async (_label, dir) => {
    expect(await readRepository(dir())).toBeNull();
  });
});

/** The identity as git itself answers it: `git remote`, `git config --get`, `rev-list`, `symbolic-ref`. */
async function askedOfGit(dir: string) {
  const context = await inertContext(dir);
  return readRepository(dir, Promise.resolve({ ...context, remotes: undefined }));
}

async function fromSnapshot(dir: string, roots = new RootCommits()) {
  const snapshot = (await takeSnapshot(dir)) as LocalGitSnapshot;
  return snapshotRepository(await inertContext(dir), snapshot, roots);
}

describe("snapshotRepository (start_task: from git status and the config already read)", () => {
  it.each<[string, string[][]]>([
    [
      "origin and another remote",
      [
        ["remote", "add", "upstream", "https://example.org/other.git"],
        ["remote", "add", "origin", "https://secret-token@GitHub.com/acme/app.git"],
      ],
    ],
    [
      "no origin: the first remote by name",
      [
        ["remote", "add", "zeta", "https://example.org/zeta.git"],
        ["remote", "add", "alpha", "https://example.org/alpha.git"],
      ],
    ],
    [
      "the first remote has no url",
      [
        ["config", "remote.aaa.fetch", "+refs/heads/*:refs/remotes/aaa/*"],
        ["remote", "add", "zzz", "https://example.org/zzz.git"],
      ],
    ],
    [
      "several urls: the last one",
      [
        ["config", "--add", "remote.origin.url", "https://example.org/first.git"],
        ["config", "--add", "remote.origin.url", "https://example.org/last.git"],
      ],
    ],
    [
      "a detached HEAD",
      [
        ["remote", "add", "origin", "https://example.org/app.git"],
        ["checkout", "-q", "--detach"],
      ],
    ],
    ["no remote", []],
  ])("is what git answers: %s", async (_label, commands) => {
    const repo = Repo.init();
    repo.write("a.txt", "a\n");
    repo.commitAll("first");
    for (const args of commands) repo.git(...args);
    const expected = await askedOfGit(repo.dir);
    expect(expected).not.toBeNull();
    expect(await fromSnapshot(repo.dir)).toEqual(expected);
  });

  it("reads the root commit again for a HEAD it has not seen (a new history)", async () => {
    const repo = Repo.init();
    repo.write("a.txt", "a\n");
    repo.commitAll("first");
    const roots = new RootCommits();
    const before = await fromSnapshot(repo.dir, roots);
    repo.git("checkout", "-q", "--orphan", "other");
    repo.write("b.txt", "b\n");
    repo.commitAll("another root");
    const after = await fromSnapshot(repo.dir, roots);
    expect(after).toEqual(await askedOfGit(repo.dir));
    expect(after?.fingerprint).not.toBe(before?.fingerprint);
    expect(after?.branch).toBe("other");
  });
});
