/**
 * The hooks find a repository's top level without git where the checkout is ordinary
 * (src/git/plain-top.ts), and the answer is git's own in every layout: the top, a subdirectory,
 * a nested repository, a linked worktree, a submodule, inside `.git`, a bare repository,
 * `core.worktree`, a symlinked path, no repository at all. Where the fast path cannot be sure it
 * answers null and git is asked.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { plainTop } from "../src/git/plain-top";
import { repositoryRoot } from "../src/hooks/journal";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures";

afterAll(cleanupTempDirs);

/** What `git rev-parse --show-toplevel` says of `dir` (a real path), else `dir` itself: the journal's key. */
function gitsAnswer(dir: string): string {
  try {
    const top = execFileSync("git", ["-C", dir, "rev-parse", "--show-toplevel"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return realpathSync(top || dir);
  } catch {
    return realpathSync(dir);
  }
}

function layouts(): { name: string; dir: string; plain: boolean }[] {
  const repo = Repo.init().write("src/deep/a.txt", "a\n").commitAll("base");
  const nested = new Repo(join(repo.dir, "vendor", "inner"));
  mkdirSync(nested.dir, { recursive: true });
  nested.git("init", "-q");
  const linked = join(tempDir("plain-top-linked-"), "wt");
  repo.git("worktree", "add", "-q", linked);
  const sub = Repo.init().write("s.txt", "s\n").commitAll("sub");
  repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "modules/sub");
  const bare = tempDir("plain-top-bare-");
  execFileSync("git", ["init", "-q", "--bare", bare]);
  const moved = Repo.init();
  const movedTree = tempDir("plain-top-tree-");
  moved.git("config", "core.worktree", movedTree);
  const link = join(tempDir("plain-top-link-"), "to-src");
  symlinkSync(join(repo.dir, "src"), link);
  return [
    { name: "the top", dir: repo.dir, plain: true },
    { name: "a subdirectory", dir: join(repo.dir, "src", "deep"), plain: true },
    { name: "a nested repository", dir: nested.dir, plain: true },
    { name: "a symlinked path into the checkout", dir: link, plain: true },
    { name: "a linked worktree (.git is a file)", dir: linked, plain: false },
    { name: "a submodule (.git is a file)", dir: join(repo.dir, "modules", "sub"), plain: false },
    { name: "inside .git", dir: join(repo.dir, ".git", "refs"), plain: false },
    { name: "a bare repository", dir: bare, plain: false },
    { name: "core.worktree set", dir: moved.dir, plain: false },
    { name: "no repository", dir: tempDir("plain-top-none-"), plain: false },
  ];
}

describe("a repository's top level without git", () => {
  const cases = layouts();
  for (const { name, dir, plain } of cases) {
    it(`${name}: git's answer${plain ? ", found without git" : ", asked of git"}`, async () => {
      const expected = gitsAnswer(dir);
      expect(await repositoryRoot(dir)).toBe(expected);
      if (plain) expect(plainTop(dir)).toBe(expected);
      else expect(plainTop(dir)).toBeNull();
    });
  }
});
