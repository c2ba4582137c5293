/**
 * git started by a small shell instead of a fork of the helper (../src/git/spawner.ts): the same
 * arguments, environment, directory and failures as the helper's own spawn, and one fork of the
 * helper for several git processes. Real git, real /bin/sh.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanGitEnv, type GitContext, GitError, runGit, startGit } from "../src/git/process.js";
import { shellChecked, startGitThroughShell } from "../src/git/spawner.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);
// As `waymark mcp` does.
startGitThroughShell();

const ODD = 'o\'dd "name" $HOME `id` \\ *.txt';

function context(dir: string, env: NodeJS.ProcessEnv = cleanGitEnv()): GitContext {
  return { cwd: dir, env, fileMode: true, symlinks: true };
}

/** The parent process of `pid` (Linux: /proc). */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

describe.runIf(process.platform === "linux")("git started through the shell", () => {
  it("gets exactly the environment, arguments and directory the helper's own spawn gives", async () => {
    const repo = Repo.init().write(ODD, "a\n").write("plain.txt", "b\n").commitAll("base");
    // A value the shell would expand, split or glob if it ever parsed it.
    const env = { ...cleanGitEnv(), GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "user.name", GIT_CONFIG_VALUE_0: ODD };
    // Each environment is checked once (the shell passes it on unchanged); git is started by the shell from then on.
    expect(await shellChecked(env)).toBe(true);
    expect(await shellChecked(cleanGitEnv())).toBe(true);
    expect((await runGit(context(repo.dir, env), ["config", "--get", "user.name"])).toString()).toBe(`${ODD}\n`);
    // Only what the context holds: a global config named in the helper's own environment but not in the context is not read.
    const home = tempDir();
    writeFileSync(join(home, "leaked.gitconfig"), "[waymark]\n\tprobe = leaked\n");
    process.env.GIT_CONFIG_GLOBAL = join(home, "leaked.gitconfig");
    try {
      const without: NodeJS.ProcessEnv = { ...cleanGitEnv(), HOME: home, XDG_CONFIG_HOME: home, GIT_CONFIG_NOSYSTEM: "1" };
      delete without.GIT_CONFIG_GLOBAL;
      expect(await shellChecked(without)).toBe(true);
      const read = await runGit(context(repo.dir, without), ["config", "--get", "waymark.probe"]).catch((error: unknown) => error);
      expect((read as GitError).exitCode).toBe(1);
    } finally {
      delete process.env.GIT_CONFIG_GLOBAL;
    }
    // An argument with quotes, spaces, `$`, backquotes and a glob reaches git as one word.
    expect((await runGit(context(repo.dir), ["ls-files", "-z", "--", ODD])).toString()).toBe(`${ODD}\0`);
    // In the directory given (a subdirectory: relative output).
    expect((await runGit(context(join(repo.dir, ".git")), ["rev-parse", "--is-inside-git-dir"])).toString()).toBe("true\n");
    // Input and output on the same run, as a batch query reads them.
    const blob = repo.git("rev-parse", "HEAD:plain.txt").trim();
    expect((await runGit(context(repo.dir), ["cat-file", "--batch-check"], Buffer.from(`${blob}\n`))).toString()).toBe(`${blob} blob 2\n`);
  });

  it("fails as spawn does: git's exit code and stderr, ENOENT for a directory that does not exist or no git on PATH", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const failed = await runGit(context(repo.dir), ["rev-parse", "--verify", "no-such-ref"]).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(GitError);
    expect((failed as GitError).exitCode).toBe(128);
    expect((failed as GitError).stderr).toMatch(/Needed a single revision/);
    const missing = await runGit(context(join(repo.dir, "missing")), ["status"]).catch((error: unknown) => error);
    expect((missing as NodeJS.ErrnoException).code).toBe("ENOENT");
    const noGit = await runGit(context(repo.dir, { ...cleanGitEnv(), PATH: "/nonexistent" }), ["status"]).catch((error: unknown) => error);
    expect((noGit as NodeJS.ErrnoException).code).toBe("ENOENT");
  });

  it("starts several git processes for one fork of the helper: their parent is the shell, not this process", async () => {
    const repo = Repo.init().write("a.txt", "a\n").commitAll("base");
    const blob = repo.git("rev-parse", "HEAD:a.txt").trim();
    // An environment of its own: a new shell, whose three slots these take.
    const env = { ...cleanGitEnv(), WAYMARK_TEST_SHELL: "two" };
    // The check took the new shell's first slot: two git processes waiting for their input at once, both started by it.
    expect(await shellChecked(env)).toBe(true);
    const started = [0, 1].map(() => startGit(context(repo.dir, env), ["cat-file", "--batch-check"]));
    const gits = await waitForGits(2);
    expect(gits.some((pid) => parentOf(pid) === process.pid)).toBe(false);
    expect(new Set(gits.map(shellOf)).size).toBe(1);
    const answers = await Promise.all(started.map((git) => git.finish(Buffer.from(`${blob}\n`))));
    expect(answers.map(String)).toEqual([0, 1].map(() => `${blob} blob 2\n`));
  });
});

/** The process this process started that `pid` descends from. */
function shellOf(pid: number): number {
  let child = pid;
  for (let up = parentOf(pid); up > 1; child = up, up = parentOf(up)) if (up === process.pid) return child;
  return -1;
}

/** The running `git cat-file` processes descending from this process, once there are `count`. */
async function waitForGits(count: number): Promise<number[]> {
  const { readdirSync } = await import("node:fs");
  for (let tries = 0; tries < 100; tries++) {
    const found: number[] = [];
    for (const name of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
      try {
        if (readFileSync(`/proc/${name}/comm`, "utf8").trim() === "git" && shellOf(Number(name)) !== -1) found.push(Number(name));
      } catch {
        // gone meanwhile
      }
    }
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`fewer than ${count} git processes started`);
}
