/**
 * @module workflow/changed-paths
 * The set of paths any task of the workflow changed, for its "distinct files changed" total: a
 * completing task adds its paths and learns how many were new.
 *
 * A small set is packed: up to PACKED_MAX paths as 128-bit hashes in one value, the workflow row's
 * `path_hashes` (v30; the row is written by start_workflow and complete_workflow only, and read by
 * its other columns), so a completion in a workflow of ordinary size writes one row, not one per
 * path, and a new workflow has no table for it. Sets an older build split into several buckets of
 * `changed_path_sets` stay there (v30 moves a set of one bucket) and are read, never written. The
 * hash is SHA-256 cut to 128 bits: no agent can choose two paths that count once, as it could
 * with a fast non-cryptographic hash, nor find a pair by brute force as it could at 64 bits.
 * Past PACKED_MAX, new paths are kept one row each in `changed_paths` (a primary key lookup per
 * path): a packed row rewritten on every completion would cost each completion time and bytes in
 * proportion to the whole set (measured: 1 ms at 1,000 paths, 4-5 ms at 20,000), where a row per
 * path costs what the completion itself adds. Paths recorded before v24 are in `changed_paths` too.
 */
import { createHash } from "node:crypto";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";
import type { WorkflowTables } from "./workflow-tables";

/** Paths kept packed in one row before new ones get a row each (32 characters a hash: 64 KB). */
const PACKED_MAX = 2_000;
const HASH_CHARS = 32;

/** A path's 128-bit hash as 32 hex characters: the first half of the SHA-256 of its UTF-8 bytes. */
export function pathHash(path: string): string {
  return createHash("sha256").update(path, "utf8").digest("hex").slice(0, HASH_CHARS);
}

function hashesIn(text: string): string[] {
  const hashes: string[] = [];
  for (let i = 0; i < text.length; i += HASH_CHARS) hashes.push(text.slice(i, i + HASH_CHARS));
  return hashes;
}

export class ChangedPaths {
  /**
   * The packed hashes as last read, parsed: once the packed row is full it never changes, and
   * parsing its 2,000 hashes into a set was the largest single cost of a completion. Keyed by the
   * stored text itself, so a rolled-back write can never leave a stale set behind.
   */
  private parsed: { text: string; hashes: Set<string> } | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly tables: WorkflowTables,
  ) {}

  private packedHashes(text: string): Set<string> {
    if (this.parsed?.text !== text) this.parsed = { text, hashes: new Set(hashesIn(text)) };
    return this.parsed.hashes;
  }

  /** Adds a completed task's paths to the workflow's set; returns how many it did not hold yet. */
  add(paths: readonly string[]): number {
    const unique = [...new Set(paths)];
    if (unique.length === 0) return 0;
    const recorded = new Set<string>();
    // changed_paths is created by the first completion past PACKED_MAX (and held the paths of workflows from before v24).
    for (const chunk of this.tables.has("changed_paths") ? jsonChunks(unique) : []) {
      for (const row of this.sql<{ path: string }>`SELECT path FROM changed_paths WHERE path IN (SELECT value FROM json_each(${chunk}))`) {
        recorded.add(row.path);
      }
    }
    const kept = this.sql<{ hashes: string | null }>`SELECT path_hashes AS hashes FROM workflow`[0]?.hashes ?? "";
    // Buckets an older build split a large set into (changed_path_sets exists only in objects from before v30).
    const split = this.tables.has("changed_path_sets")
      ? this.sql<{ hashes: string }>`SELECT hashes FROM changed_path_sets ORDER BY bucket`.map((row) => row.hashes).join("")
      : "";
    const packed = this.packedHashes(kept + split);
    const fresh = new Map<string, string>();
    for (const path of unique) {
      if (recorded.has(path)) continue;
      const hash = pathHash(path);
      if (!packed.has(hash)) fresh.set(path, hash);
    }
    if (fresh.size === 0) return 0;
    if (packed.size + fresh.size <= PACKED_MAX) {
      this.sql`UPDATE workflow SET path_hashes = ${kept + [...fresh.values()].join("")}`;
    } else {
      this.tables.ensure("changed_paths");
      for (const chunk of jsonChunks([...fresh.keys()])) {
        this.sql`INSERT INTO changed_paths (path) SELECT value FROM json_each(${chunk}) WHERE true ON CONFLICT (path) DO NOTHING`;
      }
    }
    return fresh.size;
  }
}
