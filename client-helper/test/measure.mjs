// Quick measurement of the helper's snapshot cost against its floors, at N files (default 100k):
//   checksum: takeSnapshot of a non-git directory vs a plain walk + SHA-1 of every file;
//   git: takeSnapshot + computeChanges of a repository with 1% of files modified vs `git status`.
// Usage: npm run build -w client-helper && node client-helper/test/measure.mjs [files] [dir-base]
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const files = Number(process.argv[2] ?? 100_000);
const base = process.argv[3] ?? "/tmp";
const { takeSnapshot, computeChanges } = await import(new URL("../dist/snapshot.js", import.meta.url).href);

function populate(dir) {
  for (let i = 0; i < files; i++) {
    const sub = join(dir, `d${Math.floor(i / 1000)}`, `e${Math.floor(i / 100) % 10}`);
    if (i % 100 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${i}.txt`), `content of file ${i}\n`.repeat(1 + (i % 20)));
  }
}

function walkAndHash(root) {
  let count = 0;
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop();
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else {
        const content = readFileSync(path);
        createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
        count++;
      }
    }
  }
  return count;
}

async function best(label, fn, runs = 3) {
  let min = Number.POSITIVE_INFINITY;
  for (let run = 0; run < runs; run++) {
    const started = process.hrtime.bigint();
    await fn();
    min = Math.min(min, Number(process.hrtime.bigint() - started) / 1e6);
  }
  console.log(`${label.padEnd(44)} ${min.toFixed(0).padStart(6)} ms (best of ${runs})`);
  return min;
}

const plain = mkdtempSync(join(base, "measure-plain-"));
populate(plain);
const floor = await best("walk + SHA-1 floor", () => walkAndHash(plain));
const scan = await best("checksum snapshot (cold, no previous)", () => takeSnapshot(plain));
console.log(`checksum ratio: ${(scan / floor).toFixed(2)}x the floor`);
const first = await takeSnapshot(plain);
await best("checksum changes (warm, stat reuse)", () => computeChanges(first));
rmSync(plain, { recursive: true, force: true });

const repo = mkdtempSync(join(base, "measure-git-"));
populate(repo);
const git = (...args) => execFileSync("git", ["-C", repo, "-c", "user.name=m", "-c", "user.email=m@m", ...args], { maxBuffer: 1 << 30 });
git("init", "-q");
git("add", "-A");
git("commit", "-qm", "base");
for (let i = 0; i < files; i += 100)
  writeFileSync(join(repo, `d${Math.floor(i / 1000)}`, `e${Math.floor(i / 100) % 10}`, `f${i}.txt`), "modified\n");
git("status", "--porcelain"); // let git refresh its own stat cache once, as a user's git would
const status = await best("git status floor", () => git("--no-optional-locks", "status", "--porcelain=v2", "-z", "-uall"));
const snap = await best("git snapshot (1% modified)", () => takeSnapshot(repo));
const start = await takeSnapshot(repo);
const end = await best("git changes (1% modified)", () => computeChanges(start));
console.log(`git ratios: snapshot ${(snap / status).toFixed(2)}x, changes ${(end / status).toFixed(2)}x the status floor`);
rmSync(repo, { recursive: true, force: true });
