/** The helper reads the identity of the repository it runs in, from real git repositories. */
import { repositoryFingerprint } from "@waymark/protocol/repository";
import { afterAll, describe, expect, it } from "vitest";
import { readRepository } from "../src/repository.js";
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
