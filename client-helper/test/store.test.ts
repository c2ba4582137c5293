import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { LocalSnapshot } from "../src/local.js";
import { pruneCache, RECORD_MAX_AGE_MS, TaskStore } from "../src/store.js";
import { cleanupTempDirs, tempDir } from "./fixtures.js";

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

  it("copes with a cache folder that does not exist yet", async () => {
    expect(await pruneCache(join(tempDir("waymark-cache-"), "missing"))).toBe(0);
  });
});
