import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checksumScanFromJson, compareScans, scanDirectory } from "../src/checksum.js";
import { blobId } from "../src/hash.js";
import type { ChecksumEntry, ChecksumList, LocalChecksumSnapshot } from "../src/local.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

function entryOf(scan: ChecksumList, path: string): ChecksumEntry | undefined {
  const index = scan.paths.indexOf(path);
  return index < 0 ? undefined : scan.entries[index];
}

/** Writes `content` and pins the mtime to `seconds`, so (mtime, size) can be held equal across edits. */
function writeAt(path: string, content: string, seconds: number): void {
  writeFileSync(path, content);
  utimesSync(path, seconds, seconds);
}

describe("checksum scan outside git", () => {
  it("re-hashes nothing when no file moved: the previous scan's ids are reused", async () => {
    const dir = tempDir();
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    for (let i = 0; i < 5; i++) writeAt(join(dir, `f${i}.txt`), `${i}`, hourAgo);
    const first = await scanDirectory(dir);
    const lines: string[] = [];
    const second = await scanDirectory(dir, { previous: first, progress: (line) => lines.push(line), progressAfterMs: 0 });
    expect(lines.at(-1)).toMatch(/: 0\/5 files hashed, done$/);
    expect(second.digest).toBe(first.digest);
  });

  it.each([
    { case: "same size, mtime put back (touch -d, tar x)", edit: (file: string, at: number) => writeAt(file, "bbbb", at) },
    {
      case: "replaced by another file of the same size and mtime (new inode)",
      edit: (file: string, at: number) => {
        const other = `${file}.new`;
        writeAt(other, "bbbb", at);
        renameSync(other, file);
      },
    },
  ])("an edit the stat data hides from mtime and size is still found: $case", async ({ edit }) => {
    const dir = tempDir();
    const file = join(dir, "same.bin");
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    writeAt(file, "aaaa", hourAgo);
    const first = await scanDirectory(dir);
    edit(file, hourAgo);
    const second = await scanDirectory(dir, { previous: first });
    expect(entryOf(second, "same.bin")?.blob).toBe(blobId(Buffer.from("bbbb")));
    expect(compareScans(first, second).map((t) => t.path)).toEqual(["same.bin"]);
  });

  it("re-hashes a file written too close to the previous scan to trust its mtime", async () => {
    const dir = tempDir();
    const file = join(dir, "racy.txt");
    const now = Math.floor(Date.now() / 1000);
    writeAt(file, "cccc", now);
    const first = await scanDirectory(dir);
    writeAt(file, "dddd", now);
    const second = await scanDirectory(dir, { previous: first });
    expect(entryOf(second, "racy.txt")?.blob).toBe(blobId(Buffer.from("dddd")));
  });

  it("reports progress on a long scan through the progress callback (stderr in the CLI and proxy)", async () => {
    const dir = tempDir();
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `f${i}.txt`), `${i}`);
    const lines: string[] = [];
    await scanDirectory(dir, { progress: (line) => lines.push(line), progressAfterMs: 0 });
    expect(lines.at(-1)).toMatch(/checksum scan of .*: 20\/20 files hashed, done$/);
    const quiet: string[] = [];
    await scanDirectory(dir, { progress: (line) => quiet.push(line) });
    expect(quiet).toEqual([]);
  });
});

/** Every file under `dir` by a plain recursive walk, sorted afterwards: what the scan's order must equal. */
function sortedFiles(dir: string, prefix = ""): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) found.push(...sortedFiles(dir, rel));
    else found.push(rel);
  }
  return prefix === "" ? found.sort() : found;
}

function expectedDigest(scan: ChecksumList): string {
  const lines = scan.paths.map((path, index) => `${scan.entries[index]?.mode} ${scan.entries[index]?.blob} ${path}\0`);
  return createHash("sha256")
    .update([...lines].join(""))
    .digest("hex");
}

describe("checksum scan order: the walk visits files in path order, without sorting the whole list", () => {
  // A directory sorts as its name followed by "/": "a.txt" and "a-b" come before "a/…", "a0" after.
  const tricky = ["a", "a.txt", "a-b", "a0", "ab", "B", "123", "9", "a b", "é", "日本", "z\u{1F600}", "\u{FF5E}"];

  it("on names that sort differently as directories and as files, the scan equals a walk sorted afterwards", async () => {
    const dir = tempDir();
    for (const [index, name] of tricky.entries()) {
      if (index % 2 === 0) {
        mkdirSync(join(dir, name));
        for (const child of ["x", "x.y", "0", name]) writeFileSync(join(dir, name, child), `${name}/${child}`);
        mkdirSync(join(dir, name, "nested"));
        writeFileSync(join(dir, name, "nested", "deep"), name);
      } else {
        writeFileSync(join(dir, name), name);
      }
    }
    const scan = await scanDirectory(dir);
    expect(scan.paths).toEqual(sortedFiles(dir));
    expect(scan.files).toBe(scan.paths.length);
    expect(scan.digest).toBe(expectedDigest(scan));
  });

  it("on a random tree of short names, 20 seeds: the scan equals the walk sorted afterwards", async () => {
    const alphabet = ["a", "b", ".", "-", "0", "_", "A", "é"];
    for (let seed = 1; seed <= 20; seed++) {
      let state = seed;
      const random = (n: number) => {
        state = (state * 1103515245 + 12345) & 0x7fffffff;
        return state % n;
      };
      const dir = tempDir();
      const dirs = [""];
      for (let i = 0; i < 60; i++) {
        const parent = dirs[random(dirs.length)] as string;
        const name = Array.from({ length: 1 + random(3) }, () => alphabet[random(alphabet.length)]).join("");
        if (name === "." || name === "..") continue;
        const path = parent === "" ? name : `${parent}/${name}`;
        try {
          if (random(3) === 0) {
            mkdirSync(join(dir, path));
            dirs.push(path);
          } else {
            writeFileSync(join(dir, path), path);
          }
        } catch {
          // The name is taken (a file where a directory was wanted, or the reverse).
        }
      }
      const scan = await scanDirectory(dir);
      expect(scan.paths, `seed ${seed}`).toEqual(sortedFiles(dir));
      expect(scan.digest).toBe(expectedDigest(scan));
    }
  });

  it("with a directory name that is not UTF-8 (escaped as a whole path) the list is still in path order, and a second scan re-reads nothing", async () => {
    const dir = tempDir();
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const odd = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0x6c, 0xff, 0x6e])]);
    mkdirSync(odd);
    mkdirSync(join(dir, "n"));
    for (const name of ["x", "y"]) {
      const file = Buffer.concat([odd, Buffer.from(`/${name}`)]);
      writeFileSync(file, name);
      utimesSync(file, hourAgo, hourAgo);
    }
    for (const name of ["m", "n/o", "z", "lz"]) writeAt(join(dir, name), name, hourAgo);
    const first = await scanDirectory(dir);
    expect(first.paths).toEqual([...first.paths].sort());
    expect(first.paths.filter((path) => path.startsWith("/"))).toHaveLength(2);
    expect(first.digest).toBe(expectedDigest(first));
    const lines: string[] = [];
    const second = await scanDirectory(dir, { previous: first, progress: (line) => lines.push(line), progressAfterMs: 0 });
    expect(lines.at(-1)).toMatch(/: 0\/6 files hashed, done$/);
    expect(second.digest).toBe(first.digest);
  });
});

describe("compareScans: a merge of two lists in path order", () => {
  const state = (blob: string, mode = "100644"): ChecksumEntry => ({ mode, blob: blob.repeat(40), size: 1, mtimeMs: 1 });
  const list = (files: Record<string, ChecksumEntry>): ChecksumList => {
    const paths = Object.keys(files).sort();
    return { paths, entries: paths.map((path) => files[path] as ChecksumEntry) };
  };

  it.each<{ case: string; before: Record<string, ChecksumEntry>; after: Record<string, ChecksumEntry>; expected: string[] }>([
    { case: "nothing on either side", before: {}, after: {}, expected: [] },
    { case: "a file added", before: {}, after: { a: state("1") }, expected: ["a: - -> 1"] },
    { case: "a file removed", before: { a: state("1") }, after: {}, expected: ["a: 1 -> -"] },
    { case: "content changed", before: { a: state("1") }, after: { a: state("2") }, expected: ["a: 1 -> 2"] },
    { case: "mode changed", before: { a: state("1") }, after: { a: state("1", "100755") }, expected: ["a: 1 -> 1"] },
    { case: "stat data moved, same content", before: { a: state("1") }, after: { a: { ...state("1"), mtimeMs: 9 } }, expected: [] },
    {
      case: "interleaved additions, removals and edits",
      before: { a: state("1"), c: state("3"), "c/d": state("4"), e: state("5") },
      after: { b: state("2"), c: state("3"), "c.d": state("6"), e: state("7"), f: state("8") },
      expected: ["b: - -> 2", "c.d: - -> 6", "c/d: 4 -> -", "e: 5 -> 7", "f: - -> 8", "a: 1 -> -"].sort(),
    },
  ])("$case", ({ before, after, expected }) => {
    const shown = compareScans(list(before), list(after)).map(
      (t) => `${t.path}: ${t.before ? (t.before.blob[0] ?? "") : "-"} -> ${t.after ? (t.after.blob[0] ?? "") : "-"}`,
    );
    expect(shown).toEqual(expected);
  });

  it("equals a comparison by lookup on 200 seeded random pairs", () => {
    let state_ = 7;
    const random = (n: number) => {
      state_ = (state_ * 1103515245 + 12345) & 0x7fffffff;
      return state_ % n;
    };
    for (let round = 0; round < 200; round++) {
      const before: Record<string, ChecksumEntry> = {};
      const after: Record<string, ChecksumEntry> = {};
      for (let i = 0; i < 30; i++) {
        const path = `${"abc"[random(3)]}${["", "/", ".", "-"][random(4)]}${random(5)}`;
        if (random(3) > 0) before[path] = state(String(random(3)), random(5) === 0 ? "100755" : "100644");
        if (random(3) > 0) after[path] = state(String(random(3)), random(5) === 0 ? "100755" : "100644");
      }
      const byLookup = [...new Set([...Object.keys(before), ...Object.keys(after)])]
        .sort()
        .filter((path) => before[path]?.mode !== after[path]?.mode || before[path]?.blob !== after[path]?.blob);
      expect(compareScans(list(before), list(after)).map((t) => t.path)).toEqual(byLookup);
    }
  });
});

describe("a checksum scan read back from JSON", () => {
  const blob = "a".repeat(40);
  const digest = "b".repeat(64);
  const base = { type: "checksum", files: 2, digest, root: "/p", scanned_at: 5 };
  const entry = { mode: "100644", blob, size: 1, mtimeMs: 2, ctimeMs: 3, ino: 4 };

  it("accepts the CLI's form (entries by path) and puts integer-like names, which JSON objects list first, back in path order", () => {
    const scan = checksumScanFromJson(JSON.parse(JSON.stringify({ ...base, entries: { a: entry, "10": entry, "9": entry } })));
    if (typeof scan === "string") throw new Error(scan);
    expect(scan.paths).toEqual(["10", "9", "a"]);
    expect(scan.files).toBe(3);
  });

  it("accepts the helper's own form (paths and entries side by side), as a task record keeps it", () => {
    const scan = checksumScanFromJson({ ...base, paths: ["b", "a"], entries: [{ ...entry, size: 2 }, entry] });
    if (typeof scan === "string") throw new Error(scan);
    expect(scan.paths).toEqual(["a", "b"]);
    expect(scan.entries.map((e) => e.size)).toEqual([1, 2]);
  });

  it.each([
    { case: "not an object", value: "x", problem: "a snapshot must be a JSON object" },
    { case: "no root", value: { ...base, root: 1, entries: {} }, problem: "root must be a string" },
    { case: "a digest that is not SHA-256", value: { ...base, digest: "x", entries: {} }, problem: "digest must be" },
    { case: "entries missing", value: { ...base }, problem: "entries must be an object keyed by path" },
    {
      case: "a mode git does not record",
      value: { ...base, entries: { a: { ...entry, mode: "040000" } } },
      problem: 'entries["a"].mode must be one of',
    },
    {
      case: "a blob id that would break the JSON written back",
      value: { ...base, entries: { a: { ...entry, blob: 'x"y' } } },
      problem: 'entries["a"].blob must be a 40-digit',
    },
    {
      case: "a size that is not a number",
      value: { ...base, entries: { a: { ...entry, size: "1" } } },
      problem: 'entries["a"].size must be a finite number',
    },
    {
      case: "lists of different lengths",
      value: { ...base, paths: ["a"], entries: [] },
      problem: "paths and entries must have the same length",
    },
    { case: "a path twice", value: { ...base, paths: ["a", "a"], entries: [entry, entry] }, problem: 'paths must not repeat ("a")' },
  ])("refuses $case, naming the field", ({ value, problem }) => {
    const result = checksumScanFromJson(value);
    expect(typeof result).toBe("string");
    expect(result as string).toContain(problem);
  });

  it("round-trips a real scan through a task record's JSON", async () => {
    const dir = tempDir();
    for (const name of ["b", "a", "10"]) writeFileSync(join(dir, name), name);
    const scan = await scanDirectory(dir);
    const back = checksumScanFromJson(JSON.parse(JSON.stringify(scan))) as LocalChecksumSnapshot;
    expect(back).toEqual(scan);
  });
});
