import { utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { scanDirectory } from "../src/checksum.js";
import { blobId } from "../src/hash.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

/** Writes `content` and pins the mtime to `seconds`, so (mtime, size) can be held equal across edits. */
function writeAt(path: string, content: string, seconds: number): void {
  writeFileSync(path, content);
  utimesSync(path, seconds, seconds);
}

describe("checksum scan outside git", () => {
  it("reuses the blob id of a file whose (mtime, size) did not move instead of re-hashing it", async () => {
    const dir = tempDir();
    const file = join(dir, "big.bin");
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    writeAt(file, "aaaa", hourAgo);
    const first = await scanDirectory(dir);
    // Same size, same mtime, other content: only a re-hash could notice, so an unchanged
    // blob id proves the previous scan was reused.
    writeAt(file, "bbbb", hourAgo);
    const reused = await scanDirectory(dir, { previous: first });
    expect(reused.entries["big.bin"]?.blob).toBe(blobId(Buffer.from("aaaa")));
    const fresh = await scanDirectory(dir);
    expect(fresh.entries["big.bin"]?.blob).toBe(blobId(Buffer.from("bbbb")));
  });

  it("re-hashes a file written too close to the previous scan to trust its mtime", async () => {
    const dir = tempDir();
    const file = join(dir, "racy.txt");
    const now = Math.floor(Date.now() / 1000);
    writeAt(file, "cccc", now);
    const first = await scanDirectory(dir);
    writeAt(file, "dddd", now);
    const second = await scanDirectory(dir, { previous: first });
    expect(second.entries["racy.txt"]?.blob).toBe(blobId(Buffer.from("dddd")));
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
