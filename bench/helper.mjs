#!/usr/bin/env node
// Benchmarks the local helper's snapshot and changes against the raw git floor
// (`git status --porcelain=v2 -z -uall`) on synthetic repositories of 1k/10k/100k files
// with 1% changed (committed, uncommitted, untracked).
//
//   npm run build:helper && node bench/helper.mjs [--sizes 1000,10000,100000] [--runs 7] [--json out.json]

import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "..", "client-helper", "dist", "snapshot.js");
let helper;
try {
  helper = await import(pathToFileURL(dist).href);
} catch (error) {
  console.error(`cannot load ${dist} (${error.message}); build first: npm run build:helper`);
  process.exit(1);
}
const { takeSnapshot, computeChanges } = helper;

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,10000,100000" },
    runs: { type: "string", default: "7" },
    json: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log("usage: node bench/helper.mjs [--sizes 1000,10000,100000] [--runs 7] [--json out.json]");
  process.exit(0);
}
const sizes = values.sizes.split(",").map(Number);
const runs = Number(values.runs);
if (sizes.some((n) => !Number.isInteger(n) || n < 100) || !Number.isInteger(runs) || runs < 1) {
  console.error("--sizes takes integers >= 100, --runs an integer >= 1");
  process.exit(2);
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
};
const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: GIT_ENV, maxBuffer: 1 << 28 });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The floor: the status query the helper itself builds on, as a child process. */
function gitStatusFloor(cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["--no-optional-locks", "status", "--porcelain=v2", "-z", "-uall"], {
      cwd,
      stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout.resume();
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`git status exit ${code}`))));
  });
}

async function time(fn) {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const filePath = (i) => `d${Math.floor(i / 1000)}/s${Math.floor(i / 100) % 10}/file-${i}.txt`;

async function buildRepo(n) {
  const dir = mkdtempSync(join(tmpdir(), `waymark-bench-${n}-`));
  git(dir, "init", "-q", "-b", "main");
  for (let i = 0; i < n; i++) {
    const p = join(dir, filePath(i));
    if (i % 100 === 0) mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, `file ${i}\n${"x".repeat(200 + (i % 300))}\n`);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "base");
  await settle(dir);
  return dir;
}

/**
 * Files written in the same second as the index are "racily clean" and git re-reads
 * them on every status until the index is rewritten later; a real repository rarely has
 * many. Rewrite the index once (our own temp repo) so both sides measure the steady state.
 */
async function settle(dir) {
  await sleep(1100);
  git(dir, "update-index", "-q", "--refresh");
}

/** 1% of the files changed: a third committed, a third edited (half of them staged), a third new and untracked. */
async function applyChanges(dir, n) {
  const changed = Math.max(3, Math.floor(n / 100));
  const third = Math.floor(changed / 3);
  const committed = [];
  for (let k = 0; k < third; k++) {
    const i = (k * 97) % n;
    writeFileSync(join(dir, filePath(i)), `committed change ${k}\n`);
    committed.push(filePath(i));
  }
  for (let c = 0; c < committed.length; c += 500) git(dir, "add", "--", ...committed.slice(c, c + 500));
  git(dir, "commit", "-q", "-m", "task commit");
  const staged = [];
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

const results = [];
const gitVersion = git(process.cwd(), "--version").toString().trim();
console.error(`${gitVersion}, node ${process.version}, ${cpus().length} cpus, ${runs} runs per measure`);
for (const n of sizes) {
  const t0 = Date.now();
  const dir = await buildRepo(n);
  const start = await takeSnapshot(dir);
  const changedFiles = await applyChanges(dir, n);
  console.error(`built ${n} files in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${changedFiles} changed`);
  // Warm the page cache and git's own caches for all three.
  await gitStatusFloor(dir);
  await takeSnapshot(dir);
  const changes = await computeChanges(start);
  const floor = [];
  const snapshot = [];
  const changesMs = [];
  // Interleaved so drift in machine load hits all three alike.
  for (let r = 0; r < runs; r++) {
    floor.push(await time(() => gitStatusFloor(dir)));
    snapshot.push(await time(() => takeSnapshot(dir)));
    changesMs.push(await time(() => computeChanges(start)));
  }
  const row = {
    files: n,
    changed_files: changedFiles,
    dirty_paths: changes.dirty.length,
    committed_paths: changes.committed.length,
    floor_ms: median(floor),
    snapshot_ms: median(snapshot),
    changes_ms: median(changesMs),
  };
  row.snapshot_ratio = row.snapshot_ms / row.floor_ms;
  row.changes_ratio = row.changes_ms / row.floor_ms;
  results.push(row);
  rmSync(dir, { recursive: true, force: true });
}

const pad = (s, w) => String(s).padStart(w);
console.log(`${pad("files", 8)} ${pad("git status", 11)} ${pad("snapshot", 9)} ${pad("ratio", 6)} ${pad("changes", 9)} ${pad("ratio", 6)}`);
for (const r of results) {
  console.log(
    `${pad(r.files, 8)} ${pad(`${r.floor_ms.toFixed(1)} ms`, 11)} ${pad(`${r.snapshot_ms.toFixed(1)} ms`, 9)} ${pad(`${r.snapshot_ratio.toFixed(2)}x`, 6)} ${pad(`${r.changes_ms.toFixed(1)} ms`, 9)} ${pad(`${r.changes_ratio.toFixed(2)}x`, 6)}`,
  );
}
if (values.json) {
  const out = { git: gitVersion, node: process.version, cpus: cpus().length, runs, target_ratio_at_100k: 1.3, results };
  writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
  console.error(`wrote ${values.json}`);
}
