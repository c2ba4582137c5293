import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { computeNetChanges } from "@waymark/protocol/attribution";
import { summarizeChanges } from "@waymark/protocol/files-changed";
import { truncationOf } from "@waymark/protocol/truncation";
import { changesSchema, snapshotSchema, WIRE_LIMITS } from "@waymark/protocol/wire";
import { afterAll, describe, expect, it } from "vitest";
import { outgoingChanges, outgoingSnapshot } from "../src/outgoing.js";
import { computeChanges, takeSnapshot } from "../src/snapshot.js";
import { cleanupTempDirs, FAST_TMP, Repo, tempDir } from "./fixtures.js";

// Whatever the size of the working tree, start_task and complete_task carry data the edge
// accepts (its schemas, its 8 MiB body limit), and files_changed says honestly what is listed
// and what is only counted.

afterAll(cleanupTempDirs);

const EDGE_BODY_BYTES = 8 * 1024 * 1024;

/** `count` files spread over directories of 500; with `pathBytes`, each repo-relative path is that long. */
function createFiles(root: string, prefix: string, count: number, pathBytes = 0): void {
  // A file name is at most 255 bytes: long paths get a long directory too.
  const longDir = pathBytes > 0 ? `${"p".repeat(200)}/` : "";
  for (let i = 0; i < count; i++) {
    const dirPath = `${prefix}/${longDir}d${Math.floor(i / 500)}`;
    if (i % 500 === 0) mkdirSync(join(root, dirPath), { recursive: true });
    const base = `f${i}`;
    const name = pathBytes > 0 ? `${base}-${"x".repeat(pathBytes - dirPath.length - 1 - base.length - 1)}` : base;
    writeFileSync(join(root, dirPath, name), `${i}\n`);
  }
}

/** One task through the helper's outgoing data and the edge's validation and rule. */
async function task(dir: string, during: () => void) {
  const local = await takeSnapshot(dir);
  const startWire = outgoingSnapshot(local);
  const startBody = JSON.stringify(startWire);
  expect(Buffer.byteLength(startBody)).toBeLessThan(EDGE_BODY_BYTES);
  const start = snapshotSchema.parse(JSON.parse(startBody));
  during();
  const changesWire = outgoingChanges(local, await computeChanges(local));
  const changesBody = JSON.stringify(changesWire);
  expect(Buffer.byteLength(changesBody)).toBeLessThan(EDGE_BODY_BYTES);
  const changes = changesSchema.parse(JSON.parse(changesBody));
  const files = computeNetChanges(start, changes);
  return { start, changes, files, filesChanged: summarizeChanges(files, truncationOf(changes)) };
}

describe("a task is always completable, whatever the size", () => {
  it("50,000 untracked files created during a task: listed up to the ceiling, the rest counted per directory", async () => {
    const repo = Repo.init(FAST_TMP).write("a.txt", "a\n").commitAll("base");
    const { changes, filesChanged } = await task(repo.dir, () => createFiles(repo.dir, "build", 50_000));
    expect(changes.type).toBe("net");
    expect(filesChanged.added).toHaveLength(WIRE_LIMITS.HELPER_LIST_ENTRIES);
    expect(filesChanged.truncated?.omitted).toBe(50_000 - WIRE_LIMITS.HELPER_LIST_ENTRIES);
    const counted = (filesChanged.truncated?.directories ?? []).reduce((sum, d) => sum + d.added, 0) + (filesChanged.truncated?.other ?? 0);
    expect(counted).toBe(filesChanged.truncated?.omitted);
    expect(changes.type === "net" && changes.warnings?.[0]).toMatch(/50000 files changed/);
  }, 120_000);

  it("50,000 untracked files present at start: the start is summarised, the task's one edit is exact", async () => {
    const repo = Repo.init(FAST_TMP).write("a.txt", "a\n").commitAll("base");
    createFiles(repo.dir, "node_modules", 50_000);
    const { start, changes, filesChanged } = await task(repo.dir, () => repo.write("a.txt", "a2\n").write("new.txt", "n\n"));
    expect(start).toMatchObject({ type: "git", dirty: [], dirty_omitted: 50_000 });
    expect(changes.type).toBe("net");
    expect(filesChanged).toMatchObject({ added: ["new.txt"], modified: ["a.txt"], deleted: [], uncommitted: ["a.txt", "new.txt"] });
    expect(filesChanged.truncated).toBeUndefined();
  }, 120_000);

  it("26,000 files created in a non-git project", async () => {
    const dir = tempDir("waymark-big-", FAST_TMP);
    writeFileSync(join(dir, "keep.txt"), "k\n");
    const { start, filesChanged } = await task(dir, () => createFiles(dir, "out", 26_000));
    expect(start.type).toBe("checksum");
    expect(filesChanged.added.length + (filesChanged.truncated?.omitted ?? 0)).toBe(26_000);
    expect(filesChanged.truncated?.directories.length).toBeGreaterThan(0);
  }, 120_000);

  it("20,000 paths of 400 bytes: cut by bytes, well inside the body limit", async () => {
    const repo = Repo.init(FAST_TMP).write("a.txt", "a\n").commitAll("base");
    const { filesChanged } = await task(repo.dir, () => createFiles(repo.dir, "long", 20_000, 400));
    expect(filesChanged.added.every((path) => path.length === 400)).toBe(true);
    expect(filesChanged.added.length).toBeLessThan(20_000);
    expect(filesChanged.added.length + (filesChanged.truncated?.omitted ?? 0)).toBe(20_000);
  }, 120_000);
});
