import { renameSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { compareScans, scanDirectory } from "../src/checksum.js";
import { blobId } from "../src/hash.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

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
    expect(second.entries["same.bin"]?.blob).toBe(blobId(Buffer.from("bbbb")));
    expect(compareScans(first.entries, second.entries).map((t) => t.path)).toEqual(["same.bin"]);
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
