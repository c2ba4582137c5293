import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Changes, Snapshot } from "@waymark/protocol/wire";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { resolveChanges } from "../src/cli.js";
import { computeChanges, takeSnapshot, wireSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

// A file dirty or untracked at start, then committed or staged exactly as it was, is not a
// change of the task: the ids the helper computes on disk must be the ids git records,
// through git's content conversions and mode rules.

afterAll(cleanupTempDirs);

const savedGlobal = process.env.GIT_CONFIG_GLOBAL;
afterEach(() => {
  if (savedGlobal === undefined) delete process.env.GIT_CONFIG_GLOBAL;
  else process.env.GIT_CONFIG_GLOBAL = savedGlobal;
});

async function listed(repo: Repo, during: (repo: Repo) => void): Promise<string[]> {
  const local = await takeSnapshot(repo.dir);
  const start = JSON.parse(JSON.stringify(wireSnapshot(local))) as Snapshot;
  during(repo);
  const changes = JSON.parse(JSON.stringify(await computeChanges(local))) as Changes;
  return resolveChanges(start, changes).files.map((file) => `${file.status} ${file.path}`);
}

describe("git's content conversions and mode rules", () => {
  it.each([
    {
      case: "core.autocrlf=true, untracked CRLF file committed as is",
      setup: (repo: Repo) => repo.git("config", "core.autocrlf", "true"),
      start: (repo: Repo) => repo.write("crlf.txt", "one\r\ntwo\r\n"),
      during: (repo: Repo) => repo.commitPaths("add", "crlf.txt"),
    },
    {
      case: "eol=crlf attribute, dirty CRLF file committed as is",
      setup: (repo: Repo) => repo.write(".gitattributes", "*.txt text eol=crlf\n").write("a.txt", "a\r\n").commitAll("attrs"),
      start: (repo: Repo) => repo.write("a.txt", "a\r\nb\r\n"),
      during: (repo: Repo) => repo.commitPaths("edit", "a.txt"),
    },
    {
      case: "core.autocrlf=true, dirty file staged as is",
      setup: (repo: Repo) => repo.git("config", "core.autocrlf", "true"),
      start: (repo: Repo) => repo.write("a.txt", "changed\r\n"),
      during: (repo: Repo) => repo.git("add", "a.txt"),
    },
  ])("$case", async ({ setup, start, during }) => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    setup(repo);
    start(repo);
    // Committed (or staged) exactly as it was at start: nothing the task did.
    expect(await listed(repo, during)).toEqual([]);
  });

  it("a clean filter from the user's (trusted) config is applied like git add applies it", async () => {
    const globalConfig = join(tempDir(), "gitconfig");
    writeFileSync(globalConfig, '[filter "upper"]\n\tclean = tr a-z A-Z\n\tsmudge = cat\n');
    process.env.GIT_CONFIG_GLOBAL = globalConfig;
    const env = { GIT_CONFIG_GLOBAL: globalConfig };
    const repo = Repo.init().write(".gitattributes", "*.up filter=upper\n").write("x.up", "base\n");
    repo.gitWith(env, "add", "-A");
    repo.gitWith(env, "commit", "-q", "-m", "base");
    repo.write("x.up", "dirty at start\n").write("new.up", "untracked at start\n");
    const result = await listed(repo, (r) => {
      r.gitWith(env, "add", "x.up", "new.up");
      r.gitWith(env, "commit", "-q", "-m", "as is");
    });
    expect(result).toEqual([]);
  });

  it("core.fileMode=false: an executable untracked file is recorded 100644, as git add records it", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    repo.git("config", "core.fileMode", "false");
    repo.write("run.sh", "#!/bin/sh\n").chmod("run.sh", 0o755);
    repo.write("a.txt", "a2\n").chmod("a.txt", 0o755);
    expect(await listed(repo, (r) => r.commitPaths("add", "run.sh", "a.txt"))).toEqual([]);
  });

  it("core.symlinks=false: a link checked out as a plain file keeps mode 120000", async () => {
    const repo = Repo.init().write("target.txt", "t\n").symlink("link", "target.txt").commitAll("base");
    repo.git("config", "core.symlinks", "false");
    repo.remove("link");
    repo.git("checkout", "--", "link");
    repo.write("link", "other.txt");
    expect(await listed(repo, (r) => r.commitPaths("retarget", "link"))).toEqual([]);
    // And an edit during the task is still a modification of the link.
    expect(await listed(repo, (r) => r.write("link", "third.txt"))).toEqual(["M link"]);
  });
});
