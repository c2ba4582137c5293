/**
 * @module workflow/changed-paths
 * The set of paths any task of the workflow changed, for its "distinct files changed" total: a
 * completing task adds its paths and learns how many were new. Kept as a 128-bit hash per path
 * (SHA-256, cut: no agent can choose two paths that count once, as it could with a fast
 * non-cryptographic hash, nor find a pair by brute force as it could at 64 bits) in a few rows (`changed_path_sets`: buckets by hash, each a string of fixed-width hashes) rather
 * than a row per path: a completion writes one row per bucket it touches, one row until the
 * workflow has changed about 6,000 distinct paths. Buckets double (each split in two, every
 * bucket rewritten once) when they hold CAPACITY on average, so none grows past the value limit.
 * Paths recorded before v24 stay one row each in `changed_paths` and are looked up there.
 */
import { createHash } from "node:crypto";
import { jsonChunks } from "../storage/chunks";
import type { Sql } from "../storage/sql";

/** Hashes a bucket holds on average before the buckets double (32 characters each: about 200 KB). */
const CAPACITY = 6_000;
const HASH_CHARS = 32;

/** A path's 128-bit hash as 32 hex characters: the first half of the SHA-256 of its UTF-8 bytes. */
export function pathHash(path: string): string {
  return createHash("sha256").update(path, "utf8").digest("hex").slice(0, HASH_CHARS);
}

/** The bucket a hash belongs to among `buckets` (a power of two): the low bits of its last 32. */
function bucketOf(hash: string, buckets: number): number {
  return Number.parseInt(hash.slice(-8), 16) % buckets;
}

function hashesIn(text: string): string[] {
  const hashes: string[] = [];
  for (let i = 0; i < text.length; i += HASH_CHARS) hashes.push(text.slice(i, i + HASH_CHARS));
  return hashes;
}

export class ChangedPaths {
  constructor(private readonly sql: Sql) {}

  /** Adds a completed task's paths to the workflow's set; returns how many it did not hold yet. */
  add(paths: readonly string[]): number {
    const unique = [...new Set(paths)];
    if (unique.length === 0) return 0;
    const recorded = new Set<string>();
    for (const chunk of jsonChunks(unique)) {
      for (const row of this.sql<{ path: string }>`SELECT path FROM changed_paths WHERE path IN (SELECT value FROM json_each(${chunk}))`) {
        recorded.add(row.path);
      }
    }
    const sizes = this.sql<{ bucket: number; n: number }>`SELECT bucket, n FROM changed_path_sets`;
    const buckets = Math.max(1, sizes.length);
    const groups = new Map<number, string[]>();
    for (const path of unique) {
      if (recorded.has(path)) continue;
      const hash = pathHash(path);
      const bucket = bucketOf(hash, buckets);
      groups.set(bucket, [...(groups.get(bucket) ?? []), hash]);
    }
    let added = 0;
    for (const [bucket, hashes] of groups) {
      const text = this.sql<{ hashes: string }>`SELECT hashes FROM changed_path_sets WHERE bucket = ${bucket}`[0]?.hashes ?? "";
      const held = new Set(hashesIn(text));
      const fresh = [...new Set(hashes)].filter((hash) => !held.has(hash));
      if (fresh.length === 0) continue;
      added += fresh.length;
      this.store(bucket, held.size + fresh.length, text + fresh.join(""));
    }
    const total = sizes.reduce((sum, row) => sum + row.n, 0) + added;
    if (total > buckets * CAPACITY) this.double(buckets);
    return added;
  }

  private store(bucket: number, n: number, hashes: string): void {
    this.sql`INSERT INTO changed_path_sets (bucket, n, hashes) VALUES (${bucket}, ${n}, ${hashes})
      ON CONFLICT (bucket) DO UPDATE SET n = excluded.n, hashes = excluded.hashes`;
  }

  /** Splits every bucket in two by the next bit of its hashes: bucket b keeps its own, b + buckets takes the rest. */
  private double(buckets: number): void {
    for (let bucket = 0; bucket < buckets; bucket++) {
      const text = this.sql<{ hashes: string }>`SELECT hashes FROM changed_path_sets WHERE bucket = ${bucket}`[0]?.hashes ?? "";
      const stay: string[] = [];
      const move: string[] = [];
      for (const hash of hashesIn(text)) (bucketOf(hash, buckets * 2) === bucket ? stay : move).push(hash);
      this.store(bucket, stay.length, stay.join(""));
      this.store(bucket + buckets, move.length, move.join(""));
    }
  }
}
