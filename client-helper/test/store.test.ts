import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { LocalSnapshot } from "../src/local.js";
import { pruneCache, RECORD_MAX_AGE_MS, RETIRE_MARGIN_MS, TaskStore } from "../src/store.js";
import { cleanupTempDirs, Repo, tempDir } from "./fixtures.js";

afterAll(cleanupTempDirs);

function aged(path: string, ageMs: number): string {
  writeFileSync(path, "{}");
  const at = (Date.now() - ageMs) / 1000;
  utimesSync(path, at, at);
  return path;
}

describe("task record cache", () => {
  it("survives a new helper process: a record saved by one store loads in another", async () => {
    const root = tempDir("waymark-cache-");
    await new TaskStore("http://edge/mcp", root).save({ task_id: "tk_1", dir: "/repo", snapshot: null, idempotency_key: "k1" });
    const loaded = await new TaskStore("http://edge/mcp", root).load("tk_1", "/repo");
    expect(loaded?.idempotency_key).toBe("k1");
    expect(await new TaskStore("http://other/mcp", root).load("tk_1", "/repo")).toBeNull();
  });

  it("reads a checksum start snapshot an earlier helper version saved (entries keyed by path), in path order", async () => {
    const root = tempDir("waymark-cache-");
    const entry = { mode: "100644", blob: "a".repeat(40), size: 1, mtimeMs: 2 };
    const earlier = { type: "checksum", files: 2, digest: "b".repeat(64), root: "/p", scanned_at: 1, entries: { b: entry, "7": entry } };
    await new TaskStore("http://edge/mcp", root).save({ task_id: "tk_1", dir: "/p", snapshot: earlier as unknown as LocalSnapshot });
    const loaded = await new TaskStore("http://edge/mcp", root).load("tk_1", "/p");
    expect(loaded?.snapshot).toMatchObject({ type: "checksum", paths: ["7", "b"], entries: [entry, entry] });
  });

  it("prunes records of tasks never completed after 30 days, and stale temp files, keeping the rest", async () => {
    const root = tempDir("waymark-cache-");
    const folder = join(root, "abc");
    mkdirSync(folder);
    const old = aged(join(folder, "old.json"), RECORD_MAX_AGE_MS + 60_000);
    const recent = aged(join(folder, "recent.json"), RECORD_MAX_AGE_MS - 60_000);
    const staleTemp = aged(join(folder, "x.json.1.tmp"), 2 * 24 * 3600 * 1000);
    const other = aged(join(folder, "notes.txt"), RECORD_MAX_AGE_MS * 2);
    expect(await pruneCache(root)).toBe(2);
    expect([old, recent, staleTemp, other].map((p) => existsSync(p))).toEqual([false, true, false, true]);
  });

  it("names a task's record by its id's sha256 however many other tasks were named since (the kept names evict, never change)", async () => {
    const root = tempDir("waymark-cache-");
    const store = new TaskStore("http://edge/mcp", root);
    await store.save({ task_id: "tk_first", dir: "/repo", snapshot: null, idempotency_key: "k1" });
    // More ids than the helper keeps names of: the first one's is made again, the same.
    for (let k = 0; k < 600; k++) expect(await store.load(`tk_other_${k}`, "/repo")).toBeNull();
    expect((await store.load("tk_first", "/repo"))?.idempotency_key).toBe("k1");
    const named = createHash("sha256").update("tk_first").digest("hex").slice(0, 40);
    const folders = readdirSync(root).filter((name) => existsSync(join(root, name, `${named}.json`)));
    expect(folders).toHaveLength(1);
  });

  it("copes with a cache folder that does not exist yet", async () => {
    expect(await pruneCache(join(tempDir("waymark-cache-"), "missing"))).toBe(0);
  });
});

describe("working tree marks", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** The marks in the cache's tree folders (t-…) and retired folders (d-…). */
  function marks(root: string): { scanned: number; retired: number } {
    const count = (prefix: string) =>
      readdirSync(root)
        .filter((name) => name.startsWith(prefix))
        .reduce((sum, folder) => sum + readdirSync(join(root, folder)).filter((name) => name.endsWith(".json")).length, 0);
    return { scanned: count("t-"), retired: count("d-") };
  }

  it("completed marks no open or later task can overlap leave the scan, and are still found by task id", async () => {
    const root = tempDir("waymark-cache-");
    const tree = Repo.init().dir;
    const store = new TaskStore("http://edge/mcp", root);
    const t = Date.UTC(2026, 10, 1);
    vi.useFakeTimers({ toFake: ["Date"] });
    const at = (ms: number) => vi.setSystemTime(ms);
    // A task completed before the open one started, one completed while it was open, and the open one.
    at(t - 20 * 60_000);
    await store.markStarted(tree, "tk_old", t - 20 * 60_000);
    at(t - 10 * 60_000);
    await store.markCompleted(tree, { task_id: "tk_old", started_at: t - 20 * 60_000, completed_at: null }, ["x"]);
    at(t);
    await store.markStarted(tree, "tk_open", t);
    at(t + 5_000);
    await store.markStarted(tree, "tk_during", t + 5_000, ["tk_old"]);
    at(t + 10_000);
    await store.markCompleted(tree, { task_id: "tk_during", started_at: t + 5_000, completed_at: null, ancestors: ["tk_old"] }, ["x", "y"]);
    at(t + 30 * 60_000);

    // The open task's completion sees the task that ran while it was open, with the shared path, as before.
    const seen = await store.concurrent(tree, "tk_open", t, ["x"]);
    expect(seen).toEqual([{ task_id: "tk_during", started_at: t + 5_000, completed_at: t + 10_000, shared_paths: ["x"], shared_count: 1 }]);
    // The task completed before any open task started left the scan; its mark is still found.
    expect(marks(root)).toEqual({ scanned: 2, retired: 1 });
    expect((await store.mark(tree, "tk_old"))?.completed_at).toBe(t - 10 * 60_000);
    expect(await store.lineage(tree, "tk_during")).toEqual(["tk_during", "tk_old"]);

    // Once no task is open, every mark completed longer ago than the margin leaves the scan.
    await store.markCompleted(tree, { task_id: "tk_open", started_at: t, completed_at: null }, ["x"]);
    at(t + 30 * 60_000 + 1_000);
    expect(await store.concurrent(tree, "", Date.now(), null)).toEqual([]);
    expect(marks(root)).toEqual({ scanned: 1, retired: 2 });
    at(t + 30 * 60_000 + RETIRE_MARGIN_MS + 1);
    // A task starting now overlaps none of them, as it would not have before.
    expect(await store.concurrent(tree, "", Date.now(), null)).toEqual([]);
    expect(marks(root)).toEqual({ scanned: 0, retired: 3 });
    expect((await store.mark(tree, "tk_open"))?.completed_at).toBe(t + 30 * 60_000);
  });
});
