/**
 * Synthetic project directories for the helper benches, and the floors the helper is held to:
 * git repositories of n files with 1% changed (committed, staged, unstaged, untracked), plain
 * directories (no git) for the checksum fallback, `git status` as a child process, and a plain
 * walk that hashes every file the way git names contents (SHA-1 of "blob <size>\0" + content).
 * Everything lives in temporary directories the caller removes.
 */
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
};
// A bench run inside a git hook or a worktree must not observe the outer repository.
delete GIT_ENV.GIT_DIR;
delete GIT_ENV.GIT_WORK_TREE;
delete GIT_ENV.GIT_INDEX_FILE;

export const git = (cwd: string, ...args: string[]): Buffer => execFileSync("git", args, { cwd, env: GIT_ENV, maxBuffer: 1 << 28 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const filePath = (i: number): string => `d${Math.floor(i / 1000)}/s${Math.floor(i / 100) % 10}/file-${i}.txt`;

/** n files of 200-500 bytes under d<k>/s<j>/, in a fresh temporary directory. */
export function writeTree(n: number, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `waymark-bench-${label}-${n}-`));
  for (let i = 0; i < n; i++) {
    const p = join(dir, filePath(i));
    if (i % 100 === 0) mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, `file ${i}\n${"x".repeat(200 + (i % 300))}\n`);
  }
  return dir;
}

/** A git repository of n committed files. */
export async function buildRepo(n: number): Promise<string> {
  const dir = writeTree(n, "git");
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "base");
  await settle(dir);
  return dir;
}

/**
 * Files written in the same second as the index are "racily clean" and git re-reads them on
 * every status until the index is rewritten later; a real repository rarely has many. Rewrite
 * the index once (our own temp repo) so every side measures the steady state.
 */
export async function settle(dir: string): Promise<void> {
  await sleep(1100);
  git(dir, "update-index", "-q", "--refresh");
}

/** 1% of the files changed: a third committed, a third edited (half of them staged), a third new and untracked. */
export async function applyChanges(dir: string, n: number): Promise<number> {
  const changed = Math.max(3, Math.floor(n / 100));
  const third = Math.floor(changed / 3);
  const committed: string[] = [];
  for (let k = 0; k < third; k++) {
    const i = (k * 97) % n;
    writeFileSync(join(dir, filePath(i)), `committed change ${k}\n`);
    committed.push(filePath(i));
  }
  for (let c = 0; c < committed.length; c += 500) git(dir, "add", "--", ...committed.slice(c, c + 500));
  git(dir, "commit", "-q", "-m", "task commit");
  const staged: string[] = [];
  for (let k = 0; k < third; k++) {
    const i = (k * 89 + 13) % n;
    writeFileSync(join(dir, filePath(i)), `uncommitted change ${k}\n`);
    if (k % 2 === 0) staged.push(filePath(i));
  }
  for (let c = 0; c < staged.length; c += 500) git(dir, "add", "--", ...staged.slice(c, c + 500));
  for (let k = 0; k < changed - 2 * third; k++) {
    const p = join(dir, "new", `untracked-${k}.txt`);
    if (k === 0) mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, `new ${k}\n`);
  }
  await settle(dir);
  return changed;
}

/** The floor of the git path: the status query the helper builds on, as a child process. */
export function gitStatus(cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["--no-optional-locks", "status", "--porcelain=v2", "-z", "-uall"], {
      cwd,
      env: GIT_ENV,
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`git status exit ${code}`))));
  });
}

/**
 * The floor of the checksum path: a plain recursive walk that reads and hashes every regular
 * file as git would name its content. Returns the number of files hashed.
 */
export function walkAndHash(root: string): number {
  let files = 0;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const content = readFileSync(full);
        createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
        files++;
      }
    }
  };
  walk(root);
  return files;
}

export async function time(fn: () => unknown): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
}
