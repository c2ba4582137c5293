/**
 * The helper names a dirty file's content itself (SHA-1 of its bytes) only where git stores
 * files as their bytes; wherever attributes or core.autocrlf make git convert, git hashes it.
 * Real repositories, and `git hash-object` as the judge.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { inertContext } from "../src/git/inert-config.js";
import { blobId } from "../src/hash.js";
import { takeSnapshot } from "../src/snapshot.js";
import { attributesOnDisk, repositoryStoresVerbatim } from "../src/verbatim-blobs.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

const CRLF = "one\r\ntwo\r\n";

/** The blob id the snapshot recorded for `path`'s working-tree state. */
async function snapshotBlob(repo: Repo, path: string): Promise<string | undefined> {
  const snapshot = await takeSnapshot(repo.dir);
  if (snapshot.type !== "git") throw new Error("expected a git snapshot");
  return snapshot.dirty.find((entry) => entry.path === path)?.worktree?.blob;
}

describe("plain check-in (blob ids computed by the helper)", () => {
  it("is used where nothing converts, and gives git's ids", async () => {
    const repo = Repo.init().write("a.txt", "a\n").write("sub/b.txt", "b\n").commitAll("base");
    repo.write("a.txt", CRLF).write("sub/b.txt", "edited\n").write("sub/new.txt", "new\n");
    const context = await inertContext(repo.dir);
    expect(repositoryStoresVerbatim(context, join(repo.dir, ".git"))).toBe(true);
    const attributes = attributesOnDisk(repo.dir);
    for (const path of ["a.txt", "sub/b.txt", "sub/new.txt"]) {
      expect(attributes(path)).toBe(false);
      expect(await snapshotBlob(repo, path)).toBe(repo.git("hash-object", "--", path).trim());
    }
  });

  it.each([
    ["a .gitattributes at the top level", (repo: Repo) => repo.write(".gitattributes", "* text=auto\n").commitAll("attributes")],
    [
      "a .gitattributes in the file's directory",
      (repo: Repo) => repo.write("sub/.gitattributes", "*.txt text=auto\n").commitAll("attributes"),
    ],
    [
      "info/attributes",
      (repo: Repo) => {
        mkdirSync(join(repo.dir, ".git", "info"), { recursive: true });
        writeFileSync(join(repo.dir, ".git", "info", "attributes"), "* text=auto\n");
      },
    ],
    ["core.autocrlf in the repository's config", (repo: Repo) => repo.git("config", "core.autocrlf", "input")],
    [
      "core.attributesFile in the repository's config",
      (repo: Repo) => {
        const file = join(tempDir(), "attributes");
        writeFileSync(file, "* text=auto\n");
        repo.git("config", "core.attributesFile", file);
      },
    ],
  ])("leaves conversions to git: %s", async (_label, arrange) => {
    const repo = Repo.init().write("sub/c.txt", "c\n").commitAll("base");
    arrange(repo);
    repo.write("sub/c.txt", CRLF);
    const expected = repo.git("hash-object", "--", "sub/c.txt").trim();
    // git converts here: the bytes' own id would be wrong.
    expect(expected).not.toBe(blobId(Buffer.from(CRLF)));
    expect(await snapshotBlob(repo, "sub/c.txt")).toBe(expected);
  });
});
