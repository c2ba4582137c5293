import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Agent } from "../src/agents/agent.js";
import { agentNamed } from "../src/agents/registry.js";

// Real repositories in temp dirs: the thing under test is the helper reading real git.

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
};

const created: string[] = [];

/** Memory-backed scratch space where there is one: tests that write tens of thousands of files use it. */
export const FAST_TMP = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();

export function tempDir(prefix = "waymark-test-", base = tmpdir()): string {
  const dir = mkdtempSync(join(base, prefix));
  created.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export class Repo {
  constructor(readonly dir: string) {}

  static init(base?: string): Repo {
    const repo = new Repo(tempDir("waymark-repo-", base));
    repo.git("init", "-q", "-b", "main");
    repo.git("config", "user.name", "Test");
    repo.git("config", "user.email", "test@example.com");
    repo.git("config", "commit.gpgsign", "false");
    return repo;
  }

  git(...args: string[]): string {
    return this.gitWith({}, ...args);
  }

  /** git with extra environment (a global config file, say) on top of the fixtures' own. */
  gitWith(env: NodeJS.ProcessEnv, ...args: string[]): string {
    return execFileSync("git", args, {
      cwd: this.dir,
      env: { ...GIT_ENV, ...env },
      encoding: "utf8",
    });
  }

  /** Writes a file whose name is given as bytes (names that are not UTF-8). */
  writeBytes(name: Buffer, content: string): this {
    writeFileSync(Buffer.concat([Buffer.from(`${this.dir}/`), name]), content);
    return this;
  }

  write(path: string, content: string): this {
    const abs = join(this.dir, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, content);
    return this;
  }

  remove(path: string): this {
    unlinkSync(join(this.dir, path));
    return this;
  }

  chmod(path: string, mode: number): this {
    chmodSync(join(this.dir, path), mode);
    return this;
  }

  symlink(path: string, target: string): this {
    symlinkSync(target, join(this.dir, path));
    return this;
  }

  /** Commits only these paths, leaving every other change in the worktree as it is. */
  commitPaths(message: string, ...paths: string[]): this {
    this.git("add", "-A", "--", ...paths);
    this.git("commit", "-q", "-m", message, "--", ...paths);
    return this;
  }

  commitAll(message = "commit"): this {
    this.git("add", "-A");
    this.git("commit", "-q", "--allow-empty", "-m", message);
    return this;
  }
}

/** The agent of that name (../src/agents/): tests name the agents they mean by name, as hooks and init do. */
export function agentCalled(name: string): Agent {
  const agent = agentNamed(name);
  if (!agent) throw new Error(`no agent named ${name}`);
  return agent;
}
